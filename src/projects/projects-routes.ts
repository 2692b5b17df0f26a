import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { CreateProjectBody, ListProjectsQuery, ProjectParams, projectResponses, ProjectShowQuery, UpdateProjectBody } from '../../schemas/projects.js'
import { OrganizationParams } from '../../schemas/workspaces.js'
import { impossibleId } from '../db/ids.js'
import { paged, single } from '../jsonapi/document.js'
import { ApiError, invalidAttribute, notFound } from '../jsonapi/errors.js'
import { firstPage, parsePage } from '../jsonapi/pagination.js'
import type { ProjectRefusal } from '../directory/projects.js'
import { managedBySeed } from '../directory/seed-file.js'
import type { ProjectsRepository } from './projects-repository.js'
import { toProjectResource } from './projects-serialize.js'
import { toOrganizationResource } from '../people/memberships-serialize.js'

const tags = ['projects']
const security = [{ bearerToken: [] }]
const produces = ['application/vnd.api+json']
const consumes = ['application/vnd.api+json', 'application/json']

/** The answer to a write the directory refused: 404 when the caller may not (as a missing project), 422 for a rule. */
function refused (refusal: ProjectRefusal, workspaces?: number, id = ''): ApiError {
  switch (refusal) {
    case 'hidden': return notFound()
    case 'taken': return invalidAttribute('Name has already been taken', '/data/attributes/name')
    case 'seed': return invalidAttribute(managedBySeed(id), '/data')
    case 'default': return invalidAttribute("The organization's default project cannot be deleted.", '/data')
    case 'holds': return invalidAttribute(`The project still holds ${workspaces ?? 'some'} workspace${workspaces === 1 ? '' : 's'}; move ${workspaces === 1 ? 'it' : 'them'} to another project first.`, '/data')
  }
}

/** `include` on a project: empty, or the tag bindings the provider asks for (tags are outside this service: nothing is included). */
function checkInclude (include: string | undefined): void {
  if (include === undefined) return
  const unknown = include.split(',').map((name) => name.trim()).filter((name) => name !== '' && name !== 'effective_tag_bindings')
  if (unknown.length > 0) throw new ApiError(400, 'bad request', `include=${unknown[0]!} is not supported here`, { parameter: 'include' })
}

/**
 * Projects (DESIGN §11.4): list, create, show, update, delete. A project the caller does not read,
 * or may not change, answers the same 404 as one that does not exist; writes pass the request's
 * id on, for their audit events.
 */
const projectRoutes: FastifyPluginAsyncTypebox<{ repository: ProjectsRepository, origin: (request: FastifyRequest) => string }> = async (app, { repository, origin }) => {
  const prefix = app.prefix

  app.get('/organizations/:organization', {
    schema: { tags, operationId: 'showOrganization', summary: 'Show an organization', params: OrganizationParams, security, produces, response: projectResponses.organization, description: 'The organization, for a member of it: its name and its default project (the Terraform provider reads `default_project_id` from here). 404: no such organization, or the caller is no member of it.' }
  }, async (request) => {
    const { organization } = request.params
    const row = impossibleId(organization) ? undefined : await repository.organization(request.caller, organization)
    if (row === undefined) throw notFound()
    return single(toOrganizationResource(row, prefix))
  })

  app.get('/organizations/:organization/projects', {
    schema: { tags, operationId: 'listProjects', summary: "List an organization's projects", params: OrganizationParams, querystring: ListProjectsQuery, security, produces, response: projectResponses.list, description: 'The projects of the organization the caller reads (owners, manage-projects and read-projects teams every project; others those their teams hold access to), by name, always paginated (default page 1, size 20). filter[names]: comma-separated names, case-insensitive and exact; q: a substring of the name; sort: name or -name. 404: no such organization, or the caller is no member of it.' }
  }, async (request) => {
    const { 'page[number]': number, 'page[size]': size, 'filter[names]': names, q, sort, include } = request.query
    checkInclude(include)
    const page = parsePage(number, size) ?? firstPage()
    const linksFrom = origin(request)
    const { organization } = request.params
    const filter = {
      names: names === undefined ? undefined : names.split(',').map((name) => name.trim()).filter((name) => name !== ''),
      search: q === undefined || q === '' ? undefined : q,
      descending: sort === '-name'
    }
    const result = impossibleId(organization) ? undefined : await repository.list(request.caller, organization, page, filter)
    if (result === undefined) throw notFound()
    const params = Object.fromEntries(Object.entries({ 'filter[names]': names, q, sort }).filter(([, v]) => v !== undefined)) as Record<string, string>
    return paged(result.rows.map((row) => toProjectResource(row, prefix)), page, result.total, { origin: linksFrom, path: `${prefix}/organizations/${encodeURIComponent(organization)}/projects`, params })
  })

  app.post('/organizations/:organization/projects', {
    schema: { tags, operationId: 'createProject', summary: 'Create a project', params: OrganizationParams, body: CreateProjectBody, security, consumes, produces, response: projectResponses.create, description: 'Creates a project: owners, and teams with manage-projects. 422: a bad name, or one the organization already has (case-insensitively). 404: no such organization, or the caller may not.' }
  }, async (request, reply) => {
    const { organization } = request.params
    const { name, description } = request.body.data.attributes
    if (impossibleId(organization)) throw notFound()
    const result = await repository.create(request.caller, organization, { name, description }, request.id)
    if ('refusal' in result) throw refused(result.refusal)
    return await reply.status(201).send(single(toProjectResource(result.project, prefix)))
  })

  app.get('/projects/:id', {
    schema: { tags, operationId: 'showProject', summary: 'Show a project', params: ProjectParams, querystring: ProjectShowQuery, security, produces, response: projectResponses.show, description: 'The project, for a caller who reads it (owners, manage-projects and read-projects teams, and the teams with access to it); `permissions` are this caller\'s. 404 otherwise.' }
  }, async (request) => {
    checkInclude(request.query.include)
    const row = impossibleId(request.params.id) ? undefined : await repository.find(request.caller, request.params.id)
    if (row === undefined) throw notFound()
    return single(toProjectResource(row, prefix))
  })

  app.patch('/projects/:id', {
    schema: { tags, operationId: 'updateProject', summary: 'Update a project', params: ProjectParams, body: UpdateProjectBody, security, consumes, produces, response: projectResponses.update, description: 'Renames the project or changes its description: owners, manage-projects, project admins, and teams whose access lets them update its settings. 422: a bad or taken name, or the seed file manages the project.' }
  }, async (request) => {
    const { id } = request.params
    const { data } = request.body
    if (data.id !== undefined && data.id !== id) throw invalidAttribute('data.id does not match the id in the path', '/data/id')
    const { name, description } = data.attributes ?? {}
    const result = impossibleId(id) ? { refusal: 'hidden' as const } : await repository.update(request.caller, id, { name, description }, request.id)
    if ('refusal' in result) throw refused(result.refusal, undefined, id)
    return single(toProjectResource(result.project, prefix))
  })

  app.delete('/projects/:id', {
    schema: { tags, operationId: 'deleteProject', summary: 'Delete a project', params: ProjectParams, security, produces, response: projectResponses.remove, description: "Deletes the project with its team access (a team-project destroy event per row, then the project's destroy): owners, manage-projects, project admins, and teams whose access lets them delete its settings. 422: the default project, one that still holds workspaces, or one the seed file manages." }
  }, async (request, reply) => {
    const { id } = request.params
    const result = impossibleId(id) ? { refusal: 'hidden' as const } : await repository.destroy(request.caller, id, request.id)
    if (result.refusal !== undefined) throw refused(result.refusal, result.workspaces, id)
    return await reply.status(204).send()
  })
}

export default projectRoutes
