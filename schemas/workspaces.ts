import { Type, type Static, type TOptional, type TSchema } from '@sinclair/typebox'
import { StringEnum } from './common.js'
import { ErrorDocument, PaginationLinks, PaginationMeta } from './jsonapi.js'

// Workspaces (DESIGN §7, §14.1): the reads the Terraform provider makes, and create, update and
// delete as go-tfe's `Workspaces` and Terraform's `tfe_workspace` send them. The attributes clients
// send that mean nothing to access (the settings below) are kept as sent and answered back, with
// HCP Terraform's default (each schema's `default`) for those never sent, so that a refresh sees
// no drift. Attributes HCP Terraform has and this service neither keeps nor computes are absent
// (clients decode them as zero).
// @see https://developer.hashicorp.com/terraform/cloud-docs/api-docs/workspaces

const strict = { additionalProperties: false } as const
const nullable = <T extends TSchema>(schema: T, options: { description: string, default?: unknown }) => Type.Union([schema, Type.Null()], options)
const Text = (maxLength: number) => Type.String({ maxLength })
const Strings = (description: string) => Type.Array(Type.String({ maxLength: 1024 }), { maxItems: 100, description, default: [] })

/** The repository a workspace is connected to, as sent (go-tfe's `VCSRepoOptions`): kept and answered, never used. */
export const VcsRepoInput = Type.Object({
  identifier: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: '`<vcs organization>/<repository>`.' })),
  branch: Type.Optional(Text(1024)),
  'ingress-submodules': Type.Optional(Type.Boolean()),
  'oauth-token-id': Type.Optional(Text(1024)),
  'tags-regex': Type.Optional(Text(1024)),
  'github-app-installation-id': Type.Optional(Text(1024))
}, { ...strict, description: 'The VCS repository (kept and answered; this service runs nothing). On update, the keys sent change, the others stay; null removes it.' })

/** The repository as answered: what was sent, `display-identifier` the identifier, an unsent branch "" and ingress-submodules false. */
export const VcsRepo = Type.Object({
  identifier: Type.String(),
  'display-identifier': Type.String(),
  branch: Type.String(),
  'ingress-submodules': Type.Boolean(),
  'oauth-token-id': nullable(Type.String(), { description: 'As sent, or null.' }),
  'tags-regex': nullable(Type.String(), { description: 'As sent, or null.' }),
  'github-app-installation-id': nullable(Type.String(), { description: 'As sent, or null.' })
}, { description: 'The VCS repository, as sent.' })

/** Which settings the workspace gives itself rather than its organization's defaults (go-tfe's `WorkspaceSettingOverwrites`). */
export const SettingOverwrites = Type.Object({
  'execution-mode': Type.Optional(Type.Boolean()),
  'agent-pool': Type.Optional(Type.Boolean())
}, { ...strict, description: 'Kept and answered. Unsent: true for execution-mode when execution-mode or operations was sent, for agent-pool when agent-pool-id was.' })

/**
 * The settings a workspace keeps as sent (DESIGN §14.1), each with HCP Terraform's default for a
 * workspace that never sent it. They mean nothing to access. `execution-mode`, `operations` and
 * `setting-overwrites` are answered as HCP Terraform derives them from one another; `agent-pool-id`
 * is answered as `relationships.agent-pool`.
 */
export const WORKSPACE_SETTINGS = {
  'agent-pool-id': nullable(Text(1024), { description: 'The agent pool (execution mode agent); answered as relationships.agent-pool.' }),
  'allow-destroy-plan': Type.Boolean({ default: true, description: 'Whether destroy plans may be queued.' }),
  'assessments-enabled': Type.Boolean({ default: false, description: 'Whether health assessments run.' }),
  'auto-apply': Type.Boolean({ default: false, description: 'Whether a successful plan is applied automatically.' }),
  'auto-apply-run-trigger': Type.Boolean({ default: false, description: 'Whether runs from run triggers are applied automatically.' }),
  'auto-destroy-at': nullable(Type.String({ format: 'date-time' }), { default: null, description: 'When a destroy run is queued.' }),
  'auto-destroy-activity-duration': nullable(Type.String({ pattern: '^[0-9]{1,4}[dh]$' }), { default: null, description: 'How long after the last activity a destroy run is queued (`14d`, `12h`).' }),
  'inherits-project-auto-destroy': Type.Boolean({ default: true, description: "Whether the project's auto-destroy settings apply." }),
  'execution-mode': StringEnum(['remote', 'local', 'agent'], { default: 'remote', description: 'Where runs execute. Unsent: local when operations was sent false, else remote.' }),
  'file-triggers-enabled': Type.Boolean({ default: true, description: 'Whether a VCS push triggers runs only for changes in the working directory and trigger paths.' }),
  'global-remote-state': Type.Boolean({ default: false, description: 'Whether every workspace of the organization may read its state.' }),
  'project-remote-state': Type.Boolean({ default: false, description: "Whether the project's workspaces may read its state." }),
  'migration-environment': nullable(Text(1024), { default: null, description: 'A legacy environment to migrate from.' }),
  operations: Type.Boolean({ default: true, description: 'Deprecated: remote (true) or local (false) execution. Unsent: false exactly when execution-mode is local. Never with execution-mode in one request.' }),
  'queue-all-runs': Type.Boolean({ default: false, description: 'Whether runs are queued before a first run is queued by hand.' }),
  'source-name': nullable(Text(1024), { default: null, description: 'The application that created the workspace.' }),
  'source-url': nullable(Text(2048), { default: null, description: "That application's URL." }),
  'speculative-enabled': Type.Boolean({ default: true, description: 'Whether speculative plans run.' }),
  'structured-run-output-enabled': Type.Boolean({ default: true, description: 'Whether run output is structured.' }),
  'terraform-version': Type.String({ minLength: 1, maxLength: 128, default: 'latest', description: 'A Terraform version or constraint. Unsent: "latest" (HCP Terraform picks the newest release).' }),
  'trigger-prefixes': Strings('Paths whose changes trigger runs.'),
  'trigger-patterns': Strings('Glob patterns whose changes trigger runs.'),
  'tag-names': Strings('Tag names (also from relationships.tags on create, by name).'),
  'vcs-repo': nullable(VcsRepoInput, { default: null, description: 'The VCS repository, or null.' }),
  'working-directory': nullable(Text(1024), { default: '', description: 'The directory runs execute in.' }),
  'hyok-enabled': Type.Boolean({ default: false, description: 'Hold Your Own Key.' }),
  'setting-overwrites': SettingOverwrites
}
export type WorkspaceSettingName = keyof typeof WORKSPACE_SETTINGS
/** The settings as a request gives them: each optional. */
export type WorkspaceSettings = { [K in WorkspaceSettingName]?: Static<typeof WORKSPACE_SETTINGS[K]> }

const optional = <T extends Record<string, TSchema>>(schemas: T) =>
  Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, Type.Optional(schema)])) as { [K in keyof T]: TOptional<T[K]> }

export const OrganizationRelationship = Type.Object({
  data: Type.Object({
    id: Type.String({ description: "The organization's name (HCP Terraform addresses organizations by name)." }),
    type: Type.Literal('organizations')
  })
}, { description: 'The organization the resource belongs to.' })

/** What this caller may do with the workspace (go-tfe's `WorkspacePermissions`, every key). */
export const WorkspacePermissions = Type.Object({
  'can-update': Type.Boolean({ description: 'Whether this caller may rename the workspace and change its settings (a workspace admin; never for a workspace the seed or the host manages).' }),
  'can-destroy': Type.Boolean({ description: 'Whether this caller may delete it (owners, manage-workspaces, workspace admins, a project row with workspace-access delete; never for a workspace the seed or the host manages).' }),
  'can-force-delete': Type.Boolean({ description: 'As can-destroy: with no state here, a delete and a safe delete are the same.' }),
  'can-read-settings': Type.Boolean({ description: 'Always true: a caller sees only the workspaces it reads.' }),
  'can-queue-run': Type.Boolean({ description: 'Always false: this service runs nothing.' }),
  'can-queue-apply': Type.Boolean({ description: 'Always false: this service runs nothing.' }),
  'can-queue-destroy': Type.Boolean({ description: 'Always false: this service runs nothing.' }),
  'can-lock': Type.Boolean({ description: 'Always false: no locks here.' }),
  'can-unlock': Type.Boolean({ description: 'Always false: no locks here.' }),
  'can-force-unlock': Type.Boolean({ description: 'Always false: no locks here.' }),
  'can-read-state-versions': Type.Boolean({ description: 'Always false: no state here.' }),
  'can-read-variable': Type.Boolean({ description: 'Always false: no variables here.' }),
  'can-update-variable': Type.Boolean({ description: 'Always false: no variables here.' }),
  'can-manage-run-tasks': Type.Boolean({ description: 'Always false: no run tasks here.' }),
  'can-manage-hyok': Type.Boolean({ description: 'Always false: no keys here.' })
}, { description: 'What this caller may do with the workspace.' })

const { 'agent-pool-id': _agentPool, 'vcs-repo': _vcsRepo, 'setting-overwrites': _overwrites, ...ANSWERED_SETTINGS } = WORKSPACE_SETTINGS

export const WorkspaceResource = Type.Object({
  id: Type.String({ description: 'The workspace id (`ws-…`).' }),
  type: Type.Literal('workspaces'),
  attributes: Type.Object({
    name: Type.String({ description: 'Unique within the organization.' }),
    description: nullable(Type.String(), { description: 'As set, or null.' }),
    'created-at': Type.String({ format: 'date-time', description: 'When the workspace was created (ISO 8601, UTC).' }),
    ...ANSWERED_SETTINGS,
    'vcs-repo': nullable(VcsRepo, { description: 'The VCS repository, or null.' }),
    'setting-overwrites': Type.Object({ 'execution-mode': Type.Boolean(), 'agent-pool': Type.Boolean() }, { description: SettingOverwrites.description }),
    locked: Type.Boolean({ description: 'Always false: no locks here.' }),
    'resource-count': Type.Integer({ description: 'Always 0: no state here.' }),
    permissions: WorkspacePermissions,
    actions: Type.Object({ 'is-destroyable': Type.Boolean({ description: 'Whether the API may delete it: false for a workspace the seed or the host manages.' }) })
  }),
  relationships: Type.Object({
    organization: OrganizationRelationship,
    project: Type.Object({
      data: Type.Object({ id: Type.String({ description: 'The project id (`prj-…`).' }), type: Type.Literal('projects') })
    }, { description: 'The project the workspace is in (DESIGN §11): its organization\'s default project unless placed elsewhere.' }),
    'agent-pool': Type.Object({
      data: Type.Union([Type.Object({ id: Type.String({ description: 'The agent pool id, as sent.' }), type: Type.Literal('agent-pools') }), Type.Null()])
    }, { description: 'The agent pool given as agent-pool-id, or null.' })
  }),
  links: Type.Object({ self: Type.String({ description: 'The workspace, by organization and workspace name.' }) })
}, { $id: 'Workspace', description: 'A workspace.' })

export const WorkspaceDocument = Type.Object({ data: WorkspaceResource }, { description: 'One workspace.' })

export const WorkspaceListDocument = Type.Object({
  data: Type.Array(WorkspaceResource),
  meta: Type.Object({ pagination: PaginationMeta }),
  links: PaginationLinks
}, { description: 'A page of the workspaces the caller may read, by name.' })

/** `include` is accepted only empty (the provider sends `include=`); anything else is 400. */
export const Include = Type.Optional(Type.String({ description: 'Accepted empty (clients send `include=`); related resources are not included.' }))

const PageQuery = {
  'page[number]': Type.Optional(Type.String({ description: 'Page number, from 1 (default 1).' })),
  'page[size]': Type.Optional(Type.String({ description: 'Per page, 1 to 100 (default 20).' })),
  include: Include
}

export const WorkspaceParams = Type.Object({ id: Type.String({ description: 'The workspace id (`ws-…`).' }) })
export const WorkspaceByNameParams = Type.Object({
  organization: Type.String({ description: "The organization's name." }),
  name: Type.String({ description: "The workspace's name." })
})
export const OrganizationParams = Type.Object({ organization: Type.String({ description: "The organization's name." }) })
export const WorkspaceShowQuery = Type.Object({
  include: Type.Optional(Type.String({ description: 'Accepted empty or `effective_tag_bindings` (the provider asks for it on a refresh); nothing is included: tags are outside this service.' }))
})
export const ListWorkspacesQuery = Type.Object({
  ...PageQuery,
  'search[name]': Type.Optional(Type.String({ description: 'Only workspaces whose name contains this.' })),
  'filter[project][id]': Type.Optional(Type.String({ description: 'Only the workspaces of this project.' }))
})
export { PageQuery }

const Meta = Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Ignored.' }))
const RequestId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\u0000]+$', description: 'An id, as the API serves it.' })

const WorkspaceName = Type.String({ minLength: 1, maxLength: 90, pattern: '^[A-Za-z0-9_-]+$', description: 'Letters, digits, `-` and `_`, at most 90; unique in the organization.' })
const WorkspaceDescription = nullable(Type.String({ maxLength: 2048 }), { description: 'Up to 2048 characters, or null.' })

/** Tags as go-tfe sends them: `{"type":"tags","attributes":{"name":…}}` (a tag it knows by id only carries `id`). */
const TagsData = Type.Array(Type.Object({
  type: StringEnum(['tags']),
  id: Type.Optional(Type.String({ maxLength: 128 })),
  attributes: Type.Optional(Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }, { additionalProperties: true }))
}, { additionalProperties: true }), { maxItems: 100 })

/**
 * A workspace's relationships in a request: `project` places it (absent on create: the
 * organization's default project; on update: a move), `tags` gives tag names (go-tfe sends them
 * as `{"type":"tags","attributes":{"name":…}}`); the others (`tag-bindings`, …) are accepted and ignored.
 */
const WorkspaceRelationships = Type.Optional(Type.Object({
  project: Type.Optional(Type.Object({ data: Type.Object({ type: StringEnum(['projects']), id: RequestId }, strict) }, strict)),
  tags: Type.Optional(Type.Object({ data: TagsData }, { additionalProperties: true }))
}, { additionalProperties: true, description: 'project (where the workspace is), tags (by name); others accepted and ignored (tag bindings, agent pools: outside this service).' }))

export const CreateWorkspaceBody = Type.Object({
  data: Type.Object({
    type: StringEnum(['workspaces']),
    attributes: Type.Object({ name: WorkspaceName, description: Type.Optional(WorkspaceDescription), ...optional(WORKSPACE_SETTINGS) }, strict),
    relationships: WorkspaceRelationships,
    meta: Meta
  }, strict),
  meta: Meta
}, { ...strict, description: 'Create a workspace.' })

export const UpdateWorkspaceBody = Type.Object({
  data: Type.Object({
    type: Type.Optional(StringEnum(['workspaces'])),
    id: Type.Optional(Type.String({ description: 'When present, the workspace addressed by the path.' })),
    attributes: Type.Optional(Type.Object({ name: Type.Optional(WorkspaceName), description: Type.Optional(WorkspaceDescription), ...optional(WORKSPACE_SETTINGS) }, strict)),
    relationships: WorkspaceRelationships,
    meta: Meta
  }, strict),
  meta: Meta
}, { ...strict, description: 'Rename a workspace, change its description or settings (merged: unsent ones keep their value), or move it to another project.' })

export const WorkspaceTagsBody = Type.Object({ data: TagsData, meta: Meta }, { ...strict, description: 'Tags by name (go-tfe\'s AddTags, RemoveTags).' })

export const workspaceResponses: Record<'show' | 'list' | 'create' | 'update' | 'destroy' | 'tags', Record<number, TSchema>> = {
  show: { 200: WorkspaceDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 503: ErrorDocument },
  list: { 200: WorkspaceListDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument },
  create: { 201: WorkspaceDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 415: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument },
  update: { 200: WorkspaceDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 415: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument },
  destroy: { 204: Type.Null({ description: 'Deleted.' }), 401: ErrorDocument, 404: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument },
  tags: { 204: Type.Null({ description: 'Done, no body (adding a present tag or removing an absent one is not an error).' }), 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 415: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument }
}

export type WorkspaceResource = Static<typeof WorkspaceResource>
export type CreateWorkspaceBody = Static<typeof CreateWorkspaceBody>
export type UpdateWorkspaceBody = Static<typeof UpdateWorkspaceBody>
