import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  AddTeamWorkspaceBody, descriptions, ListTeamWorkspacesQuery, responses, TeamWorkspaceParams, UpdateTeamWorkspaceBody
} from '../../schemas/team-workspaces.js'
import { customOnlyViolations, permissionsOnAdd, updateChanges } from '../access/permissions.js'
import { pickPermissions } from '../access/permission-columns.js'
import { impossibleId } from '../db/ids.js'
import { ApiError, invalidAttribute, notFound } from '../jsonapi/errors.js'
import { collection, paged, single } from '../jsonapi/document.js'
import { parsePage } from '../jsonapi/pagination.js'
import type { FastifyRequest } from 'fastify'
import type { TeamWorkspacesRepository } from './team-workspaces-repository.js'
import { toResource } from './team-workspaces-serialize.js'

const tags = ['team-access']
const security = [{ bearerToken: [] }]
// what the OpenAPI document says each operation takes and answers
const produces = ['application/vnd.api+json']
const consumes = ['application/vnd.api+json', 'application/json']

/**
 * The five operations of DESIGN §4. Registered after authentication: `request.caller` is who
 * asks. Whatever the caller may not see or do comes back from the repository as "nothing", and
 * answers the same 404 as a missing id. Writes pass the request's id on: it is part of their
 * audit event (DESIGN §8).
 */
const teamWorkspaceRoutes: FastifyPluginAsyncTypebox<{ repository: TeamWorkspacesRepository, origin: (request: FastifyRequest) => string }> = async (app, { repository, origin }) => {
  const prefix = app.prefix

  app.get('/team-workspaces', {
    schema: { tags, operationId: 'listTeamWorkspaces', summary: 'List team access to a workspace or of a team', querystring: ListTeamWorkspacesQuery, description: descriptions.list, security, produces, response: responses.list }
  }, async (request) => {
    const { 'filter[workspace][id]': workspaceId, 'filter[team][id]': teamId, 'page[number]': number, 'page[size]': size } = request.query
    if (workspaceId === undefined && teamId === undefined) {
      throw new ApiError(422, 'invalid parameter', 'filter[workspace][id] or filter[team][id] is required', { parameter: 'filter[workspace][id]' })
    }
    const page = parsePage(number, size)
    const linksFrom = page === undefined ? undefined : origin(request) // a bad Host is refused before any work
    const filter = { ...(workspaceId === undefined ? {} : { workspaceId }), ...(teamId === undefined ? {} : { teamId }) }
    const result = [workspaceId, teamId].some((id) => id !== undefined && impossibleId(id)) ? undefined : await repository.list(request.caller, filter, page)
    if (result === undefined) throw notFound()
    const data = result.rows.map((row) => toResource(row, prefix))
    if (page === undefined) return collection(data)
    const params = { ...(workspaceId === undefined ? {} : { 'filter[workspace][id]': workspaceId }), ...(teamId === undefined ? {} : { 'filter[team][id]': teamId }) }
    return paged(data, page, result.total, { origin: linksFrom!, path: `${prefix}/team-workspaces`, params })
  })

  app.get('/team-workspaces/:id', {
    schema: { tags, operationId: 'showTeamWorkspace', summary: 'Show a team access relationship', params: TeamWorkspaceParams, description: descriptions.show, security, produces, response: responses.show }
  }, async (request) => {
    const { id } = request.params
    const row = impossibleId(id) ? undefined : await repository.find(request.caller, id)
    if (row === undefined) throw notFound()
    return single(toResource(row, prefix))
  })

  app.post('/team-workspaces', {
    schema: { tags, operationId: 'addTeamAccess', summary: 'Add team access to a workspace', body: AddTeamWorkspaceBody, description: descriptions.add, security, consumes, produces, response: responses.add }
  }, async (request) => {
    const { attributes: { access, ...attributes }, relationships } = request.body.data
    const requested = pickPermissions(attributes)
    const violation = customOnlyViolations(access, requested)[0]
    if (violation !== undefined) throw invalidAttribute(violation.detail, `/data/attributes/${violation.attribute}`)
    const input = { teamId: relationships.team.data.id, workspaceId: relationships.workspace.data.id, access, permissions: permissionsOnAdd(access, requested) }
    const result = await repository.add(request.caller, input, request.id)
    if (result.added !== undefined) return single(toResource(result.added, prefix))
    if (result.taken) throw invalidAttribute('Team has already been taken', '/data/relationships/team')
    throw notFound()
  })

  app.patch('/team-workspaces/:id', {
    schema: { tags, operationId: 'updateTeamAccess', summary: 'Update team access to a workspace', params: TeamWorkspaceParams, body: UpdateTeamWorkspaceBody, description: descriptions.update, security, consumes, produces, response: responses.update }
  }, async (request) => {
    const { id } = request.params
    const { data } = request.body
    if (data.id !== undefined && data.id !== id) throw invalidAttribute('data.id does not match the id in the path', '/data/id')
    const { access, ...attributes } = data.attributes
    const requested = pickPermissions(attributes)
    const changes = updateChanges(access, requested)
    if (Array.isArray(changes)) throw invalidAttribute(changes[0]!.detail, `/data/attributes/${changes[0]!.attribute}`)
    if (impossibleId(id)) throw notFound()
    // a second try only when the row's level changed between the update and the look at why it failed
    for (let attempt = 0; attempt < 2; attempt++) {
      const result = await repository.update(request.caller, id, changes, request.id)
      if (result.updated !== undefined) return single(toResource(result.updated, prefix))
      if (result.current === undefined) throw notFound()
      // the row's current level refused the permissions given: say which, as on add
      const violation = customOnlyViolations(result.current, requested)[0]
      if (violation !== undefined) throw invalidAttribute(violation.detail, `/data/attributes/${violation.attribute}`)
    }
    throw new ApiError(409, 'conflict', 'The team access changed while it was being updated; send the request again.')
  })

  app.delete('/team-workspaces/:id', {
    schema: { tags, operationId: 'removeTeamAccess', summary: 'Remove team access from a workspace', params: TeamWorkspaceParams, description: descriptions.remove, security, produces, response: responses.remove }
  }, async (request, reply) => {
    const { id } = request.params
    const removed = !impossibleId(id) && await repository.remove(request.caller, id, request.id)
    if (!removed) throw notFound()
    return await reply.status(204).send()
  })
}

export default teamWorkspaceRoutes
