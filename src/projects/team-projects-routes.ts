import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AddTeamProjectBody, ListTeamProjectsQuery, TeamProjectParams, teamProjectResponses, UpdateTeamProjectBody } from '../../schemas/projects.js'
import { projectColumnsOnAdd, projectColumnsOnUpdate, projectCustomOnlyViolations } from '../access/project-permissions.js'
import { impossibleId } from '../db/ids.js'
import { collection, paged, single } from '../jsonapi/document.js'
import { ApiError, invalidAttribute, notFound } from '../jsonapi/errors.js'
import { parsePage } from '../jsonapi/pagination.js'
import type { TeamProjectsRepository } from './team-projects-repository.js'
import { toTeamProjectResource } from './projects-serialize.js'

const tags = ['projects']
const security = [{ bearerToken: [] }]
const produces = ['application/vnd.api+json']
const consumes = ['application/vnd.api+json', 'application/json']

/** The first custom-only violation as its 422. */
const customOnly = (violations: ReturnType<typeof projectCustomOnlyViolations>): void => {
  const violation = violations[0]
  if (violation !== undefined) throw invalidAttribute(violation.detail, violation.pointer)
}

/**
 * Team access to projects (DESIGN §11.4): list, show, add, update, remove — HCP Terraform's
 * `team-projects`, as go-tfe's `TeamProjectAccess` and the provider's `tfe_team_project_access`
 * send them. Whatever the caller may not see or do answers the same 404 as a missing id.
 */
const teamProjectRoutes: FastifyPluginAsyncTypebox<{ repository: TeamProjectsRepository, origin: (request: FastifyRequest) => string }> = async (app, { repository, origin }) => {
  const prefix = app.prefix

  app.get('/team-projects', {
    schema: { tags, operationId: 'listTeamProjects', summary: "List a project's team access", querystring: ListTeamProjectsQuery, security, produces, response: teamProjectResponses.list, description: "The project's team access rows the caller may see, oldest first: for a caller who reads the project, rows of teams visible to the organization and of its own teams; project admins every row. filter[team][id] narrows to one team. Without page parameters, all rows; with either, a page. 404: no such project, or the caller does not read it. 422: no filter[project][id], or bad page parameters." }
  }, async (request) => {
    const { 'filter[project][id]': projectId, 'filter[team][id]': teamId, 'page[number]': number, 'page[size]': size } = request.query
    if (projectId === undefined || projectId === '') throw new ApiError(422, 'invalid parameter', 'filter[project][id] is required', { parameter: 'filter[project][id]' })
    const page = parsePage(number, size)
    const linksFrom = page === undefined ? undefined : origin(request)
    const result = impossibleId(projectId) || (teamId !== undefined && impossibleId(teamId)) ? undefined : await repository.list(request.caller, projectId, teamId, page)
    if (result === undefined) throw notFound()
    const data = result.rows.map((row) => toTeamProjectResource(row, prefix))
    if (page === undefined) return collection(data)
    const params = { 'filter[project][id]': projectId, ...(teamId === undefined ? {} : { 'filter[team][id]': teamId }) }
    return paged(data, page, result.total, { origin: linksFrom!, path: `${prefix}/team-projects`, params })
  })

  app.get('/team-projects/:id', {
    schema: { tags, operationId: 'showTeamProject', summary: "Show a team's access to a project", params: TeamProjectParams, security, produces, response: teamProjectResponses.show, description: 'One team-project row. 404: it does not exist, or the caller may not see it (as in the list).' }
  }, async (request) => {
    const row = impossibleId(request.params.id) ? undefined : await repository.find(request.caller, request.params.id)
    if (row === undefined) throw notFound()
    return single(toTeamProjectResource(row, prefix))
  })

  app.post('/team-projects', {
    schema: { tags, operationId: 'addTeamProjectAccess', summary: 'Give a team access to a project', body: AddTeamProjectBody, security, consumes, produces, response: teamProjectResponses.add, description: 'Gives a team access to a project; 201. Project admins (owners, manage-projects, a team whose access manages the project\'s teams); a non-owner only for teams it can see, never the owners team, and never more than it holds there itself. Under a fixed level both objects may be absent or `{}`. 404: no such team or project (or of another organization), or the caller may not. 422: malformed body, a key set under a fixed level, or "Team has already been taken".' }
  }, async (request, reply) => {
    const { attributes: { access, ...objects }, relationships } = request.body.data
    customOnly(projectCustomOnlyViolations(access, objects))
    const teamId = relationships.team.data.id
    const projectId = relationships.project.data.id
    if (impossibleId(teamId) || impossibleId(projectId)) throw notFound()
    const result = await repository.add(request.caller, { teamId, projectId, access, columns: projectColumnsOnAdd(access, objects) }, request.id)
    if (result.added !== undefined) return await reply.status(201).send(single(toTeamProjectResource(result.added, prefix)))
    if (result.taken) throw invalidAttribute('Team has already been taken', '/data/relationships/team')
    throw notFound()
  })

  app.patch('/team-projects/:id', {
    schema: { tags, operationId: 'updateTeamProjectAccess', summary: "Change a team's access to a project", params: TeamProjectParams, body: UpdateTeamProjectBody, security, consumes, produces, response: teamProjectResponses.update, description: 'Changes the level (a fixed level resets both objects to its values) or, under custom, single permissions (the others are kept). Who may: as add. A body that changes nothing answers the row as it is. 422: malformed body, data.id wrong, or a key set under a fixed level.' }
  }, async (request) => {
    const { id } = request.params
    const { data } = request.body
    if (data.id !== undefined && data.id !== id) throw invalidAttribute('data.id does not match the id in the path', '/data/id')
    const { access, ...objects } = data.attributes
    if (access !== undefined) customOnly(projectCustomOnlyViolations(access, objects))
    if (impossibleId(id)) throw notFound()
    const setsKeys = Object.keys(objects['project-access'] ?? {}).length + Object.keys(objects['workspace-access'] ?? {}).length > 0
    const result = await repository.update(request.caller, id, { access, columns: projectColumnsOnUpdate(access, objects), setsKeys }, request.id)
    if (result.updated !== undefined) return single(toTeamProjectResource(result.updated, prefix))
    // a key set while the row keeps a fixed level: say which, as on add
    if (result.current !== undefined && access === undefined && result.current !== 'custom') customOnly(projectCustomOnlyViolations(result.current, objects))
    throw notFound()
  })

  app.delete('/team-projects/:id', {
    schema: { tags, operationId: 'removeTeamProjectAccess', summary: "Remove a team's access to a project", params: TeamProjectParams, security, produces, response: teamProjectResponses.remove, description: 'Removes the row, with its audit event. Who may: as add. 404: not found, or the caller may not.' }
  }, async (request, reply) => {
    const { id } = request.params
    const removed = !impossibleId(id) && await repository.remove(request.caller, id, request.id)
    if (!removed) throw notFound()
    return await reply.status(204).send()
  })
}

export default teamProjectRoutes
