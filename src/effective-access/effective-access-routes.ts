import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  effectiveAccessResponses, TeamEffectiveAccessParams, TeamEffectiveAccessQuery, WorkspaceEffectiveAccessParams, WorkspaceEffectiveAccessQuery
} from '../../schemas/effective-access.js'
import { impossibleId } from '../db/ids.js'
import { collection, paged } from '../jsonapi/document.js'
import { ApiError, notFound } from '../jsonapi/errors.js'
import { noInclude } from '../jsonapi/include.js'
import { firstPage, parsePage } from '../jsonapi/pagination.js'
import type { Explain } from './explain.js'
import { toTeamEffectiveAccess, toUserEffectiveAccess } from './effective-access-serialize.js'

const tags = ['team-access']
const security = [{ bearerToken: [] }]
const produces = ['application/vnd.api+json']
/** Ours, not HCP Terraform's (DESIGN §10): the OpenAPI document says so on each operation. */
const extension = { 'x-team-access-extension': true }

/**
 * Why teams hold what they hold (DESIGN §10.2): a workspace's teams, a user's access through its
 * teams, the workspaces a team reaches — each with the grants that produce it. Whoever may not
 * ask gets the 404 of a missing id.
 */
const effectiveAccessRoutes: FastifyPluginAsyncTypebox<{ explain: Explain, origin: (request: FastifyRequest) => string }> = async (app, { explain, origin }) => {
  const prefix = app.prefix

  app.get('/workspaces/:id/effective-access', {
    schema: {
      ...extension,
      tags,
      operationId: 'showWorkspaceEffectiveAccess',
      summary: 'Who holds what on a workspace, and why (extension)',
      params: WorkspaceEffectiveAccessParams,
      querystring: WorkspaceEffectiveAccessQuery,
      security,
      produces,
      response: effectiveAccessResponses.workspace,
      description: "Every team that holds any effective access on the workspace (owners, organization access, team-access rows), by name: its level, each permission at its strongest, and the grants that produce them. filter[user]=<username>: that member's effective access through its teams instead (no resource when it holds none; 422 when no member of the organization has that name). Owners and workspace admins; 404 for anyone else, as for a missing workspace. An extension, beyond HCP Terraform."
    }
  }, async (request) => {
    const { id } = request.params
    const { 'filter[user]': username, include } = request.query
    noInclude(include)
    if (impossibleId(id) || (username !== undefined && impossibleId(username))) throw notFound()
    if (username !== undefined) {
      const answer = await explain({ caller: request.caller, workspaceId: id, username })
      if (answer === undefined) throw notFound()
      // a name that names no member is a mistake to say, not "no access" (a member who holds nothing: no resource)
      if (answer.userId === null) throw new ApiError(422, 'invalid parameter', `No member of organization ${answer.workspace.organizationName} is named ${JSON.stringify(username)}.`, { parameter: 'filter[user]' })
      return collection(answer.access === null ? [] : [toUserEffectiveAccess(answer, prefix)])
    }
    const answer = await explain({ caller: request.caller, workspaceId: id })
    if (answer === undefined) throw notFound()
    return collection(answer.map((team) => toTeamEffectiveAccess(team, prefix)))
  })

  app.get('/teams/:id/effective-access', {
    schema: {
      ...extension,
      tags,
      operationId: 'listTeamEffectiveAccess',
      summary: 'The workspaces a team reaches, and why (extension)',
      params: TeamEffectiveAccessParams,
      querystring: TeamEffectiveAccessQuery,
      security,
      produces,
      response: effectiveAccessResponses.team,
      description: 'Every workspace of its organization the team holds any effective access on, by workspace name, always paginated (default page 1, size 20): its level, each permission at its strongest, and the grants that produce them. Owners, and those who act through the team (its members, its token); 404 for anyone else, as for a missing team. An extension, beyond HCP Terraform.'
    }
  }, async (request) => {
    const { 'page[number]': number, 'page[size]': size, include } = request.query
    noInclude(include)
    const page = parsePage(number, size) ?? firstPage()
    const linksFrom = origin(request)
    const { id } = request.params
    const answer = impossibleId(id) ? undefined : await explain({ caller: request.caller, teamId: id, page })
    if (answer === undefined) throw notFound()
    return paged(answer.rows.map((team) => toTeamEffectiveAccess(team, prefix)), page, answer.total, {
      origin: linksFrom, path: `${prefix}/teams/${encodeURIComponent(id)}/effective-access`, params: {}
    })
  })
}

export default effectiveAccessRoutes
