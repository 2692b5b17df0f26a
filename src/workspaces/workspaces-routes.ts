import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CreateWorkspaceBody, ListWorkspacesQuery, OrganizationParams, UpdateWorkspaceBody, WorkspaceByNameParams, WorkspaceParams, workspaceResponses, WorkspaceShowQuery,
  WorkspaceTagsBody, type WorkspaceSettings
} from '../../schemas/workspaces.js'
import { impossibleId } from '../db/ids.js'
import { managedBySeed } from '../directory/seed-file.js'
import type { WorkspaceKey, WorkspaceRefusal, WorkspaceValues } from '../directory/workspaces.js'
import { paged, single } from '../jsonapi/document.js'
import { ApiError, invalidAttribute, notFound } from '../jsonapi/errors.js'
import { noInclude } from '../jsonapi/include.js'
import { firstPage, parsePage } from '../jsonapi/pagination.js'
import type { WorkspacesRepository } from './workspaces-repository.js'
import { toWorkspaceResource } from './workspaces-serialize.js'

const tags = ['workspaces']
const security = [{ bearerToken: [] }]
const produces = ['application/vnd.api+json']
const consumes = ['application/vnd.api+json', 'application/json']

/** The answer to a write the directory refused: 404 when the caller may not (as a missing workspace), 422 for a rule. */
function refused (refusal: WorkspaceRefusal, id = ''): ApiError {
  switch (refusal) {
    case 'hidden':
    case 'project': return notFound()
    case 'taken': return invalidAttribute('Name has already been taken', '/data/attributes/name')
    case 'seed': return invalidAttribute(managedBySeed(id), '/data')
    case 'host': return invalidAttribute('managed by the host application', '/data')
    case 'mirror': return invalidAttribute('managed by the mirror (change it in HCP Terraform)', '/data')
  }
}

/** `include` on a workspace: empty, or the tag bindings the provider asks for on a refresh (tags are outside this service: nothing is included). */
function checkInclude (include: string | undefined): void {
  if (include === undefined) return
  if (include.split(',').every((name) => name.trim() === '' || name.trim() === 'effective_tag_bindings')) return
  noInclude(include)
}

type Body = CreateWorkspaceBody['data'] | UpdateWorkspaceBody['data']

/**
 * What a create or an update gives the directory: the name, the description, the settings as sent
 * — `tag-names` also from `relationships.tags` by name, as go-tfe sends them — and the project
 * named. Execution mode and the deprecated `operations` say one thing: never both (422).
 */
function valuesOf (data: Body): WorkspaceValues {
  const { name, description, ...settings } = (data.attributes ?? {}) as WorkspaceSettings & { name?: string, description?: string | null }
  if (settings.operations !== undefined && settings['execution-mode'] !== undefined) {
    throw invalidAttribute('operations is deprecated and cannot be sent with execution-mode', '/data/attributes/operations')
  }
  const tags = data.relationships?.tags?.data.flatMap((tag) => typeof tag.attributes?.name === 'string' ? [tag.attributes.name] : [])
  const tagNames = tags === undefined ? settings['tag-names'] : [...new Set([...(settings['tag-names'] ?? []), ...tags])]
  const projectId = data.relationships?.project?.data.id
  return {
    ...(name === undefined ? {} : { name }),
    ...(description === undefined ? {} : { description }),
    settings: { ...settings, ...(tagNames === undefined ? {} : { 'tag-names': tagNames }) },
    ...(projectId === undefined ? {} : { projectId })
  }
}

/**
 * Workspaces (DESIGN §7, §14.1): the reads the Terraform provider makes, and create, update (by id
 * or by name), delete and safe-delete, as go-tfe's `Workspaces` sends them. A workspace the caller
 * may not read, or may not change, answers the same 404 as one that does not exist; writes pass the
 * request's id on, for their audit events.
 */
const workspaceRoutes: FastifyPluginAsyncTypebox<{ repository: WorkspacesRepository, origin: (request: FastifyRequest) => string }> = async (app, { repository, origin }) => {
  const prefix = app.prefix

  app.get('/workspaces/:id', {
    schema: { tags, operationId: 'showWorkspace', summary: 'Show a workspace', params: WorkspaceParams, querystring: WorkspaceShowQuery, security, produces, response: workspaceResponses.show, description: 'The workspace, for a caller whose effective access on it is at least read (owners, manage-workspaces and read-workspaces teams, teams with access to it). 404 otherwise.' }
  }, async (request) => {
    checkInclude(request.query.include)
    const row = impossibleId(request.params.id) ? undefined : await repository.find(request.caller, request.params.id)
    if (row === undefined) throw notFound()
    return single(toWorkspaceResource(row, prefix))
  })

  app.get('/organizations/:organization/workspaces/:name', {
    schema: { tags, operationId: 'showWorkspaceByName', summary: 'Show a workspace by organization and name', params: WorkspaceByNameParams, querystring: WorkspaceShowQuery, security, produces, response: workspaceResponses.show, description: 'The same as by id, looked up by organization name and workspace name (data "tfe_workspace", terraform import).' }
  }, async (request) => {
    checkInclude(request.query.include)
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

  app.post('/organizations/:organization/workspaces', {
    schema: { tags, operationId: 'createWorkspace', summary: 'Create a workspace', params: OrganizationParams, body: CreateWorkspaceBody, security, consumes, produces, response: workspaceResponses.create, description: "Creates a workspace managed by the API in relationships.project (absent: the organization's default project): owners, manage-workspaces teams, and teams whose access to that project lets them create workspaces (workspace-access create). Its settings are kept as sent and answered back, HCP Terraform's defaults for the others. Creating grants nobody anything. 422: a bad name, or one the organization already has. 404: no such organization or project, or the caller may not." }
  }, async (request, reply) => {
    const { organization } = request.params
    const values = valuesOf(request.body.data)
    if (impossibleId(organization)) throw notFound()
    const result = await repository.create(request.caller, organization, { ...values, name: request.body.data.attributes.name }, request.id)
    if ('refusal' in result) throw refused(result.refusal, result.id)
    return await reply.status(201).send(single(toWorkspaceResource(result.workspace, prefix)))
  })

  const update = async (key: WorkspaceKey, data: UpdateWorkspaceBody['data'], caller: FastifyRequest['caller'], requestId: string) => {
    const result = await repository.update(caller, key, valuesOf(data), requestId)
    if ('refusal' in result) throw refused(result.refusal, result.id)
    return single(toWorkspaceResource(result.workspace, prefix))
  }
  const updateDescription = 'Renames the workspace, changes its description or settings (merged: unsent ones keep their value; vcs-repo key by key, null removes it) — workspace admins — or moves it to the project named in relationships.project — owners, manage-projects teams, or teams whose access to both the project it leaves and the one it joins lets them move workspaces (workspace-access move); the access it inherits moves with it, from the next request. 422: a bad or taken name, execution-mode with operations, or a workspace the seed file or the host manages. 404: no such workspace or project, or the caller may not.'

  app.patch('/workspaces/:id', {
    schema: { tags, operationId: 'updateWorkspace', summary: 'Update a workspace', params: WorkspaceParams, body: UpdateWorkspaceBody, security, consumes, produces, response: workspaceResponses.update, description: updateDescription }
  }, async (request) => {
    const { id } = request.params
    const { data } = request.body
    if (data.id !== undefined && data.id !== id) throw invalidAttribute('data.id does not match the id in the path', '/data/id')
    return await update({ id }, data, request.caller, request.id)
  })

  app.patch('/organizations/:organization/workspaces/:name', {
    schema: { tags, operationId: 'updateWorkspaceByName', summary: 'Update a workspace by organization and name', params: WorkspaceByNameParams, body: UpdateWorkspaceBody, security, consumes, produces, response: workspaceResponses.update, description: `The same as by id. ${updateDescription}` }
  }, async (request) => await update(request.params, request.body.data, request.caller, request.id))

  const destroy = async (key: WorkspaceKey, caller: FastifyRequest['caller'], requestId: string) => {
    const result = await repository.destroy(caller, key, requestId)
    if (result.refusal !== undefined) throw refused(result.refusal, result.id)
  }
  const destroyDescription = "Deletes the workspace with its team access (a remove_team audit event per row, then the workspace's destroy): owners, manage-workspaces teams, workspace admins, and teams whose access to its project lets them delete workspaces (workspace-access delete). 422: a workspace the seed file or the host manages. 404: no such workspace, or the caller may not."
  const safeDescription = 'A delete that HCP Terraform refuses while the workspace manages resources; this service keeps no state, so nothing is under management and it deletes, as DELETE does.'

  app.delete('/workspaces/:id', {
    schema: { tags, operationId: 'deleteWorkspace', summary: 'Delete a workspace', params: WorkspaceParams, security, produces, response: workspaceResponses.destroy, description: destroyDescription }
  }, async (request, reply) => {
    await destroy({ id: request.params.id }, request.caller, request.id)
    return await reply.status(204).send()
  })

  app.delete('/organizations/:organization/workspaces/:name', {
    schema: { tags, operationId: 'deleteWorkspaceByName', summary: 'Delete a workspace by organization and name', params: WorkspaceByNameParams, security, produces, response: workspaceResponses.destroy, description: `The same as by id. ${destroyDescription}` }
  }, async (request, reply) => {
    await destroy(request.params, request.caller, request.id)
    return await reply.status(204).send()
  })

  app.post('/workspaces/:id/actions/safe-delete', {
    schema: { tags, operationId: 'safeDeleteWorkspace', summary: 'Safely delete a workspace', params: WorkspaceParams, security, produces, response: workspaceResponses.destroy, description: `${safeDescription} ${destroyDescription}` }
  }, async (request, reply) => {
    await destroy({ id: request.params.id }, request.caller, request.id)
    return await reply.status(204).send()
  })

  app.post('/organizations/:organization/workspaces/:name/actions/safe-delete', {
    schema: { tags, operationId: 'safeDeleteWorkspaceByName', summary: 'Safely delete a workspace by organization and name', params: WorkspaceByNameParams, security, produces, response: workspaceResponses.destroy, description: `${safeDescription} ${destroyDescription}` }
  }, async (request, reply) => {
    await destroy(request.params, request.caller, request.id)
    return await reply.status(204).send()
  })

  const retag = async (id: string, tags: Array<{ attributes?: { name?: string } }>, which: 'add' | 'remove', caller: FastifyRequest['caller'], requestId: string) => {
    const names = tags.map((tag) => tag.attributes?.name)
    const unnamed = names.findIndex((name) => name === undefined)
    if (unnamed >= 0) throw invalidAttribute('Tags are kept by name here: give each its attributes.name.', `/data/${unnamed}/attributes/name`)
    const result = await repository.update(caller, { id }, { tags: { [which]: names as string[] } }, requestId)
    if ('refusal' in result) throw refused(result.refusal, result.id)
  }
  const tagsDescription = "tag-names (go-tfe's AddTags, RemoveTags; the newest provider's tag_names changes), by name, as a change of the workspace's settings: workspace admins; each name once, in the order first given; its update event. 422: a tag with no name, or a workspace the seed file or the host manages. 404: no such workspace, or the caller may not."

  app.post('/workspaces/:id/relationships/tags', {
    schema: { tags, operationId: 'addWorkspaceTags', summary: 'Add tags to a workspace', params: WorkspaceParams, body: WorkspaceTagsBody, security, consumes, produces, response: workspaceResponses.tags, description: `Adds the tags to its ${tagsDescription}` }
  }, async (request, reply) => {
    await retag(request.params.id, request.body.data, 'add', request.caller, request.id)
    return await reply.status(204).send()
  })

  app.delete('/workspaces/:id/relationships/tags', {
    schema: { tags, operationId: 'removeWorkspaceTags', summary: 'Remove tags from a workspace', params: WorkspaceParams, body: WorkspaceTagsBody, security, consumes, produces, response: workspaceResponses.tags, description: `Removes the tags from its ${tagsDescription}` }
  }, async (request, reply) => {
    await retag(request.params.id, request.body.data, 'remove', request.caller, request.id)
    return await reply.status(204).send()
  })
}

export default workspaceRoutes
