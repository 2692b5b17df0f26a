import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  ListWorkspacesQuery, OrganizationParams, WorkspaceByNameParams, WorkspaceParams, workspaceResponses, WorkspaceShowQuery
} from '../../schemas/workspaces.js'
import { impossibleId } from '../db/ids.js'
import { paged, single } from '../jsonapi/document.js'
import { notFound } from '../jsonapi/errors.js'
import { noInclude } from '../jsonapi/include.js'
import { firstPage, parsePage } from '../jsonapi/pagination.js'
import type { WorkspacesRepository } from './workspaces-repository.js'
import { toWorkspaceResource } from './workspaces-serialize.js'

const tags = ['workspaces']
const security = [{ bearerToken: [] }]
const produces = ['application/vnd.api+json']

/**
 * The workspace reads the Terraform provider makes (DESIGN §7), read-only. A workspace the caller
 * may not read answers the same 404 as one that does not exist.
 */
const workspaceRoutes: FastifyPluginAsyncTypebox<{ repository: WorkspacesRepository, origin: (request: FastifyRequest) => string }> = async (app, { repository, origin }) => {
  const prefix = app.prefix

  app.get('/workspaces/:id', {
    schema: { tags, operationId: 'showWorkspace', summary: 'Show a workspace', params: WorkspaceParams, querystring: WorkspaceShowQuery, security, produces, response: workspaceResponses.show, description: 'The workspace, for a caller whose effective access on it is at least read (owners, manage-workspaces and read-workspaces teams, teams with access to it). 404 otherwise.' }
  }, async (request) => {
    noInclude(request.query.include)
    const row = impossibleId(request.params.id) ? undefined : await repository.find(request.caller, request.params.id)
    if (row === undefined) throw notFound()
    return single(toWorkspaceResource(row, prefix))
  })

  app.get('/organizations/:organization/workspaces/:name', {
    schema: { tags, operationId: 'showWorkspaceByName', summary: 'Show a workspace by organization and name', params: WorkspaceByNameParams, querystring: WorkspaceShowQuery, security, produces, response: workspaceResponses.show, description: 'The same as by id, looked up by organization name and workspace name (data "tfe_workspace", terraform import).' }
  }, async (request) => {
    noInclude(request.query.include)
    const { organization, name } = request.params
    const row = impossibleId(organization) || impossibleId(name) ? undefined : await repository.findByName(request.caller, organization, name)
    if (row === undefined) throw notFound()
    return single(toWorkspaceResource(row, prefix))
  })

  app.get('/organizations/:organization/workspaces', {
    schema: { tags, operationId: 'listWorkspaces', summary: "List an organization's workspaces", params: OrganizationParams, querystring: ListWorkspacesQuery, security, produces, response: workspaceResponses.list, description: 'The workspaces of the organization the caller may read, by name, always paginated (default page 1, size 20); search[name] keeps names that contain it; filter[project][id] the workspaces of one project (data "tfe_project"). 404: no such organization, or the caller is no member of it.' }
  }, async (request) => {
    const { 'page[number]': number, 'page[size]': size, 'search[name]': search, 'filter[project][id]': projectId, include } = request.query
    noInclude(include)
    const page = parsePage(number, size) ?? firstPage()
    const linksFrom = origin(request)
    const { organization } = request.params
    const filter = { search: search === '' ? undefined : search, projectId: projectId === '' ? undefined : projectId }
    const result = impossibleId(organization) || (projectId !== undefined && impossibleId(projectId)) ? undefined : await repository.list(request.caller, organization, page, filter)
    if (result === undefined) throw notFound()
    const params = Object.fromEntries(Object.entries({ 'search[name]': search, 'filter[project][id]': projectId }).filter(([, v]) => v !== undefined)) as Record<string, string>
    return paged(result.rows.map((row) => toWorkspaceResource(row, prefix)), page, result.total, {
      origin: linksFrom, path: `${prefix}/organizations/${encodeURIComponent(organization)}/workspaces`, params
    })
  })
}

export default workspaceRoutes
