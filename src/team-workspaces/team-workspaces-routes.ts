import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import {
  AddTeamWorkspaceBody, descriptions, ListTeamWorkspacesQuery, responses, TeamWorkspaceParams, UpdateTeamWorkspaceBody,
  type TeamWorkspaceListDocument
} from '../../schemas/team-workspaces.js'
import type { Database } from '../db/database.js'
import { denial, principalOf, tokenProven } from '../auth/authenticate.js'
import { customOnlyViolations, permissionsOnAdd, updateChanges, type Permissions } from '../access/permissions.js'
import { ApiError, invalidAttribute } from '../jsonapi/errors.js'
import { paginate, parsePage } from '../jsonapi/pagination.js'
import { TeamWorkspacesRepository } from './team-workspaces-repository.js'
import { toResource } from './serialize.js'

const tags = ['team-access']
const security = [{ bearerToken: [] }]
// what the OpenAPI document says each operation takes and answers
const produces = ['application/vnd.api+json']
const consumes = ['application/vnd.api+json', 'application/json']
/** Ids this long, or with a NUL (which PostgreSQL cannot even compare), exist nowhere: 404 without asking. */
const MAX_ID_LENGTH = 128
const impossibleId = (id: string): boolean => id.length > MAX_ID_LENGTH || id.includes('\u0000')

/** The five operations of DESIGN §4. Encapsulated: registered inside the plugin, after authentication. */
const teamWorkspaceRoutes: FastifyPluginAsync<{ db: Kysely<Database> }> = async (app, { db }) => {
  const repository = new TeamWorkspacesRepository(db)
  const prefix = app.prefix

  app.get('/team-workspaces', {
    schema: { tags, operationId: 'listTeamWorkspaces', summary: 'List team access to a workspace', querystring: ListTeamWorkspacesQuery, description: descriptions.list, security, produces, response: responses.list }
  }, async (request) => {
    const query = request.query as ListTeamWorkspacesQuery
    const page = parsePage(query['page[number]'], query['page[size]'])
    const workspaceId = query['filter[workspace][id]']
    const result = impossibleId(workspaceId) ? undefined : await repository.list(principalOf(request), workspaceId, page)
    if (result === undefined) throw await denial(db, request)
    const document: TeamWorkspaceListDocument = { data: result.rows.map((row) => toResource(row, prefix)) }
    if (page === undefined) return document
    return { ...document, ...paginate(page, result.total, (n) => pageUrl(request, prefix, workspaceId, n, page.size)) }
  })

  app.get('/team-workspaces/:id', {
    schema: { tags, operationId: 'showTeamWorkspace', summary: 'Show a team access relationship', params: TeamWorkspaceParams, description: descriptions.show, security, produces, response: responses.show }
  }, async (request) => {
    const { id } = request.params as { id: string }
    const row = impossibleId(id) ? undefined : await repository.find(principalOf(request), id)
    if (row === undefined) throw await denial(db, request)
    return { data: toResource(row, prefix) }
  })

  app.post('/team-workspaces', {
    schema: { tags, operationId: 'addTeamAccess', summary: 'Add team access to a workspace', body: AddTeamWorkspaceBody, description: descriptions.add, security, consumes, produces, response: responses.add }
  }, async (request) => {
    const { data } = request.body as AddTeamWorkspaceBody
    const { access, ...requested } = data.attributes
    const violation = customOnlyViolations(access, requested)[0]
    if (violation !== undefined) throw invalidAttribute(violation.detail, `/data/attributes/${violation.attribute}`)
    const result = await repository.add(principalOf(request), {
      teamId: data.relationships.team.data.id,
      workspaceId: data.relationships.workspace.data.id,
      access,
      permissions: permissionsOnAdd(access, requested)
    })
    if (result.added !== undefined) return { data: toResource(result.added, prefix) }
    if (result.taken) {
      tokenProven(request)
      throw invalidAttribute('Team has already been taken', '/data/relationships/team')
    }
    throw await denial(db, request)
  })

  app.patch('/team-workspaces/:id', {
    schema: { tags, operationId: 'updateTeamAccess', summary: 'Update team access to a workspace', params: TeamWorkspaceParams, body: UpdateTeamWorkspaceBody, description: descriptions.update, security, consumes, produces, response: responses.update }
  }, async (request) => {
    const { id } = request.params as { id: string }
    const { data } = request.body as UpdateTeamWorkspaceBody
    if (data.id !== undefined && data.id !== id) throw invalidAttribute('data.id does not match the id in the path', '/data/id')
    const { access, ...requested } = data.attributes
    const changes = updateChanges(access, requested)
    if (Array.isArray(changes)) throw invalidAttribute(changes[0]!.detail, `/data/attributes/${changes[0]!.attribute}`)
    if (impossibleId(id)) throw await denial(db, request)
    // a second try only when the row's level changed between the update and the look at why it failed
    for (let attempt = 0; attempt < 2; attempt++) {
      const result = await repository.update(principalOf(request), id, changes)
      if (result.updated !== undefined) return { data: toResource(result.updated, prefix) }
      if (result.current === undefined) throw await denial(db, request)
      tokenProven(request)
      // the row's current level refused the permissions given: say which, as on add
      const violation = customOnlyViolations(result.current, requested as Partial<Permissions>)[0]
      if (violation !== undefined) throw invalidAttribute(violation.detail, `/data/attributes/${violation.attribute}`)
    }
    throw new ApiError(409, 'conflict', 'The team access changed while it was being updated; send the request again.')
  })

  app.delete('/team-workspaces/:id', {
    schema: { tags, operationId: 'removeTeamAccess', summary: 'Remove team access from a workspace', params: TeamWorkspaceParams, description: descriptions.remove, security, produces, response: responses.remove }
  }, async (request, reply) => {
    const { id } = request.params as { id: string }
    const removed = !impossibleId(id) && await repository.remove(principalOf(request), id)
    if (!removed) throw await denial(db, request)
    return await reply.status(204).send()
  })
}

/** An absolute URL of a page that keeps the filter, brackets percent-encoded (as HCP Terraform's links). */
function pageUrl (request: FastifyRequest, prefix: string, workspaceId: string, number: number, size: number): string {
  const query = new URLSearchParams({
    'filter[workspace][id]': workspaceId,
    'page[number]': String(number),
    'page[size]': String(size)
  })
  return `${request.protocol}://${request.host}${prefix}/team-workspaces?${query.toString()}`
}

export default teamWorkspaceRoutes
