import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ListTeamsQuery, TeamParams, teamResponses, TeamShowQuery } from '../../schemas/teams.js'
import { OrganizationParams } from '../../schemas/workspaces.js'
import { impossibleId } from '../db/ids.js'
import { paged, single } from '../jsonapi/document.js'
import { notFound } from '../jsonapi/errors.js'
import { noInclude } from '../jsonapi/include.js'
import { firstPage, parsePage } from '../jsonapi/pagination.js'
import type { TeamsRepository } from './teams-repository.js'
import { toTeamResource } from './teams-serialize.js'

const tags = ['teams']
const security = [{ bearerToken: [] }]
const produces = ['application/vnd.api+json']

/**
 * The team reads the Terraform provider makes (DESIGN §7), read-only. A team the caller may not
 * see answers the same 404 as one that does not exist.
 */
const teamRoutes: FastifyPluginAsyncTypebox<{ repository: TeamsRepository, origin: (request: FastifyRequest) => string }> = async (app, { repository, origin }) => {
  const prefix = app.prefix

  app.get('/teams/:id', {
    schema: { tags, operationId: 'showTeam', summary: 'Show a team', params: TeamParams, querystring: TeamShowQuery, security, produces, response: teamResponses.show, description: 'The team: owners see every team of their organization; members the teams visible to the organization and the secret teams they belong to. 404 otherwise.' }
  }, async (request) => {
    noInclude(request.query.include)
    const row = impossibleId(request.params.id) ? undefined : await repository.find(request.caller, request.params.id)
    if (row === undefined) throw notFound()
    return single(toTeamResource(row, prefix))
  })

  app.get('/organizations/:organization/teams', {
    schema: { tags, operationId: 'listTeams', summary: "List an organization's teams", params: OrganizationParams, querystring: ListTeamsQuery, security, produces, response: teamResponses.list, description: 'The teams of the organization the caller may see, by name, always paginated (default page 1, size 20); filter[names] keeps teams of exactly those comma-separated names (data "tfe_team"). 404: no such organization, or the caller is no member of it.' }
  }, async (request) => {
    const { 'page[number]': number, 'page[size]': size, 'filter[names]': filter, include } = request.query
    noInclude(include)
    const page = parsePage(number, size) ?? firstPage()
    const linksFrom = origin(request)
    const { organization } = request.params
    const names = filter === undefined ? undefined : filter.split(',').map((name) => name.trim()).filter((name) => name !== '')
    const result = impossibleId(organization) ? undefined : await repository.list(request.caller, organization, page, names)
    if (result === undefined) throw notFound()
    return paged(result.rows.map((row) => toTeamResource(row, prefix)), page, result.total, {
      origin: linksFrom, path: `${prefix}/organizations/${encodeURIComponent(organization)}/teams`, params: filter === undefined ? {} : { 'filter[names]': filter }
    })
  })
}

export default teamRoutes
