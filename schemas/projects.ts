import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Runs, SentinelMocks, StateVersions, StringEnum, Variables } from './common.js'
import { ErrorDocument, PaginationLinks, PaginationMeta } from './jsonapi.js'
import { Include, OrganizationRelationship } from './workspaces.js'

// Projects and team-project access (DESIGN §11): HCP Terraform's Projects and Project Team
// Access APIs, as go-tfe and the Terraform provider send them.
// @see https://developer.hashicorp.com/terraform/cloud-docs/api-docs/projects
// @see https://developer.hashicorp.com/terraform/cloud-docs/api-docs/project-team-access

const strict = { additionalProperties: false } as const
const Meta = Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Ignored.' }))
const RequestId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\u0000]+$', description: 'An id, as the API serves it.' })

export const ProjectAccess = StringEnum(['read', 'write', 'maintain', 'admin', 'custom'],
  { description: "The team's access level on the project; the two permission objects are editable only under 'custom'." })
export const ProjectSettings = StringEnum(['read', 'update', 'delete'], { description: "Permission on the project's settings." })
export const ProjectTeams = StringEnum(['none', 'read', 'manage'], { description: "Permission on the project's team access." })
export const ProjectVariableSets = StringEnum(['none', 'read', 'write'], { description: "Permission on the project's variable sets (kept and answered; no variable sets here)." })

const flag = (description: string) => Type.Boolean({ description })
const PROJECT_ACCESS = {
  settings: ProjectSettings,
  teams: ProjectTeams,
  'variable-sets': ProjectVariableSets
}
const WORKSPACE_ACCESS = {
  runs: Runs,
  'sentinel-mocks': SentinelMocks,
  'state-versions': StateVersions,
  variables: Variables,
  create: flag('Whether the team may create workspaces in the project (kept and answered).'),
  locking: flag("Whether the team may lock and unlock the project's workspaces (their workspace-locking)."),
  move: flag('Whether the team may move workspaces out of the project (kept and answered).'),
  delete: flag("Whether the team may delete the project's workspaces (kept and answered)."),
  'run-tasks': flag("Whether the team may manage run tasks on the project's workspaces.")
}

export const ProjectAccessObject = Type.Object(PROJECT_ACCESS, { description: 'The team’s permissions on the project itself.' })
export const WorkspaceAccessObject = Type.Object(WORKSPACE_ACCESS, { description: 'The team’s permissions on every workspace of the project.' })

export const ProjectResource = Type.Object({
  id: Type.String({ description: 'The project id (`prj-…`).' }),
  type: Type.Literal('projects'),
  attributes: Type.Object({
    name: Type.String({ description: 'Unique within the organization, case-insensitively.' }),
    description: Type.Union([Type.String(), Type.Null()], { description: 'Up to 256 characters, or null.' }),
    'created-at': Type.String({ format: 'date-time', description: 'When the project was created (ISO 8601, UTC).' }),
    'workspace-count': Type.Integer({ description: 'How many workspaces are in the project.' }),
    'team-count': Type.Integer({ description: 'How many teams hold access to the project.' }),
    permissions: Type.Object({
      'can-read': Type.Boolean({ description: 'Always true: a caller sees only the projects it reads.' }),
      'can-update': Type.Boolean({ description: 'Whether this caller may rename the project or change its description.' }),
      'can-destroy': Type.Boolean({ description: 'Whether this caller may delete the project (never the default project).' }),
      'can-read-teams': Type.Boolean({ description: "Whether this caller may read the project's team access." }),
      'can-manage-teams': Type.Boolean({ description: "Whether this caller may add, change and remove the project's team access." })
    }, { description: 'What this caller may do with the project.' })
  }),
  relationships: Type.Object({ organization: OrganizationRelationship }),
  links: Type.Object({ self: Type.String({ description: 'The project.' }) })
}, { $id: 'Project', description: 'A project: a group of workspaces of one organization.' })

export const OrganizationResource = Type.Object({
  id: Type.String({ description: "The organization's name (HCP Terraform addresses organizations by name)." }),
  type: Type.Literal('organizations'),
  attributes: Type.Object({
    name: Type.String({ description: 'Unique, URL-safe.' }),
    'external-id': Type.String({ description: "The organization's id (`org-…`); its name is its `id` here, as in HCP Terraform." }),
    'created-at': Type.String({ format: 'date-time', description: 'When the organization was created (ISO 8601, UTC).' }),
    permissions: Type.Object({
      'can-update': Type.Boolean({ description: "The organization's owners (its owners team, their tokens, the organization token): a token that reads the whole organization, as the mirror requires (DESIGN §13.1)." }),
      'can-destroy': Type.Boolean({ description: 'The owners.' }),
      'can-create-team': Type.Boolean({ description: 'The owners, and manage-teams.' }),
      'can-create-workspace': Type.Boolean({ description: 'The owners, and manage-workspaces.' }),
      'can-create-project': Type.Boolean({ description: 'The owners, and manage-projects.' }),
      'can-manage-users': Type.Boolean({ description: 'The owners, and manage-membership.' })
    }, { description: 'What this caller may do with the organization (HCP Terraform’s names).' }),
    mirror: Type.Union([
      Type.Object({
        host: Type.String({ description: 'The HCP Terraform (or Terraform Enterprise) host it is read from.' }),
        'succeeded-at': Type.String({ format: 'date-time', description: 'When a mirror run last read it whole (whether or not anything had changed).' })
      }),
      Type.Null()
    ], { description: 'Not in HCP Terraform (DESIGN §13): a mirrored organization — read-only here, its changes made in HCP Terraform — and where from; null for any other.' })
  }),
  relationships: Type.Object({
    'default-project': Type.Object({ data: Type.Object({ id: Type.String({ description: 'The default project (`prj-…`).' }), type: Type.Literal('projects') }) },
      { description: "The organization's default project, where a workspace placed nowhere else is (the provider reads it as default_project_id)." })
  }),
  links: Type.Object({ self: Type.String({ description: 'The organization.' }) })
}, { $id: 'Organization', description: 'An organization, as its members read it (only what this service keeps).' })
export const OrganizationDocument = Type.Object({ data: OrganizationResource }, { description: 'One organization.' })

export const ProjectDocument = Type.Object({ data: ProjectResource }, { description: 'One project.' })
export const ProjectListDocument = Type.Object({
  data: Type.Array(ProjectResource),
  meta: Type.Object({ pagination: PaginationMeta }),
  links: PaginationLinks
}, { description: 'A page of the projects the caller reads, by name.' })

const ProjectName = Type.String({ minLength: 3, maxLength: 40, pattern: '^[A-Za-z0-9_-]([A-Za-z0-9 _-]*[A-Za-z0-9_-])?$', description: '3 to 40 characters: letters, digits, spaces, `-` and `_`; no leading or trailing space.' })
const ProjectDescription = Type.Union([Type.String({ maxLength: 256 }), Type.Null()], { description: 'Up to 256 characters, or null.' })
/** What HCP Terraform's clients may send and this service does not keep: accepted, ignored. */
const IGNORED_ATTRIBUTES = {
  'auto-destroy-activity-duration': Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Accepted and ignored (no auto-destroy here).' })),
  'default-execution-mode': Type.Optional(Type.String({ description: 'Accepted and ignored.' })),
  'setting-overwrites': Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Accepted and ignored.' }))
}
const IgnoredRelationships = Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Accepted and ignored (tag bindings, agent pools: outside this service).' }))

export const CreateProjectBody = Type.Object({
  data: Type.Object({
    type: StringEnum(['projects']),
    attributes: Type.Object({ name: ProjectName, description: Type.Optional(ProjectDescription), ...IGNORED_ATTRIBUTES }, strict),
    relationships: IgnoredRelationships,
    meta: Meta
  }, strict),
  meta: Meta
}, { ...strict, description: 'Create a project.' })

export const UpdateProjectBody = Type.Object({
  data: Type.Object({
    type: Type.Optional(StringEnum(['projects'])),
    id: Type.Optional(Type.String({ description: 'When present, the id in the path.' })),
    attributes: Type.Optional(Type.Object({ name: Type.Optional(ProjectName), description: Type.Optional(ProjectDescription), ...IGNORED_ATTRIBUTES }, strict)),
    relationships: IgnoredRelationships,
    meta: Meta
  }, strict),
  meta: Meta
}, { ...strict, description: 'Rename a project or change its description.' })

export const ProjectParams = Type.Object({ id: Type.String({ description: 'The project id (`prj-…`).' }) })
export const ProjectShowQuery = Type.Object({
  include: Type.Optional(Type.String({ description: 'Accepted empty or `effective_tag_bindings` (the provider asks for it); nothing is included: tags are outside this service.' }))
})
export const ListProjectsQuery = Type.Object({
  'page[number]': Type.Optional(Type.String({ description: 'Page number, from 1 (default 1).' })),
  'page[size]': Type.Optional(Type.String({ description: 'Per page, 1 to 100 (default 20).' })),
  'filter[names]': Type.Optional(Type.String({ description: 'Comma-separated names: only these (case-insensitive, exact).' })),
  q: Type.Optional(Type.String({ description: 'Only projects whose name contains this (case-insensitive).' })),
  sort: Type.Optional(StringEnum(['name', '-name'], { description: 'By name (default), or by name descending.' })),
  include: Include
})

export const TeamProjectAttributes = Type.Object({
  access: ProjectAccess,
  'project-access': ProjectAccessObject,
  'workspace-access': WorkspaceAccessObject
}, { description: 'Both objects always come back: under a fixed level the implied values, under custom what was set.' })

const link = (description: string) => Type.Object({ related: Type.String({ description }) })

export const TeamProjectResource = Type.Object({
  id: Type.String({ description: 'The team-project id (`tprj-…`).' }),
  type: Type.Literal('team-projects'),
  attributes: TeamProjectAttributes,
  relationships: Type.Object({
    team: Type.Object({ data: Type.Object({ id: Type.String(), type: Type.Literal('teams') }), links: link('The team.') }),
    project: Type.Object({ data: Type.Object({ id: Type.String(), type: Type.Literal('projects') }), links: link('The project.') })
  }),
  links: Type.Object({ self: Type.String() })
}, { $id: 'TeamProject', description: "A team's access to a project." })

export const TeamProjectDocument = Type.Object({ data: TeamProjectResource }, { description: 'One team-project.' })
export const TeamProjectListDocument = Type.Object({
  data: Type.Array(TeamProjectResource),
  meta: Type.Optional(Type.Object({ pagination: PaginationMeta })),
  links: Type.Optional(PaginationLinks)
}, { description: "The project's team access the caller may see; `meta` and `links` only when paginated." })

const relationship = (type: string, description: string) => Type.Object({
  data: Type.Object({ type: StringEnum([type]), id: RequestId }, strict),
  links: Type.Optional(Type.Object({}, { additionalProperties: true })),
  meta: Meta
}, { ...strict, description })

const PermissionObjects = {
  'project-access': Type.Optional(Type.Partial(Type.Object(PROJECT_ACCESS), { ...strict, description: 'Under custom: what to set (the rest at the custom default, or as they are). Under a fixed level: only `{}`.' })),
  'workspace-access': Type.Optional(Type.Partial(Type.Object(WORKSPACE_ACCESS), { ...strict, description: 'Under custom: what to set (the rest at the custom default, or as they are). Under a fixed level: only `{}`.' }))
}

export const AddTeamProjectBody = Type.Object({
  data: Type.Object({
    type: StringEnum(['team-projects']),
    attributes: Type.Object({ access: ProjectAccess, ...PermissionObjects }, strict),
    relationships: Type.Object({
      team: relationship('teams', 'The team that receives the access.'),
      project: relationship('projects', 'The project the access is on.')
    }, strict),
    meta: Meta
  }, strict),
  meta: Meta
}, { ...strict, description: 'Give a team access to a project.' })

/** The entries of the host's `setProjectAccess` (DESIGN §11.5): the team by id, the objects by their wire names, as in an add. */
export const HostProjectAccessEntries = Type.Array(Type.Object({
  teamId: Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\u0000]+$', description: 'The team, by id.' }),
  access: ProjectAccess,
  ...PermissionObjects
}, strict), { maxItems: 1000 })

export const UpdateTeamProjectBody = Type.Object({
  data: Type.Object({
    type: Type.Optional(StringEnum(['team-projects'])),
    id: Type.Optional(Type.String({ description: 'When present, the id in the path.' })),
    attributes: Type.Object({ access: Type.Optional(ProjectAccess), ...PermissionObjects }, strict),
    meta: Meta
  }, strict),
  meta: Meta
}, { ...strict, description: 'Change the access level or, under custom, single permissions.' })

export const TeamProjectParams = Type.Object({ id: Type.String({ description: 'The team-project id (`tprj-…`).' }) })
export const ListTeamProjectsQuery = Type.Object({
  'filter[project][id]': Type.Optional(Type.String({ description: 'Required: the project whose team access to list.' })),
  'filter[team][id]': Type.Optional(Type.String({ description: "Only this team's row." })),
  'page[number]': Type.Optional(Type.String({ description: 'Page number, from 1 (paginates when given).' })),
  'page[size]': Type.Optional(Type.String({ description: 'Rows per page, 1 to 100, default 20 (paginates when given).' }))
})

const e = ErrorDocument
export const projectResponses: Record<'organization' | 'list' | 'show' | 'create' | 'update' | 'remove', Record<number, TSchema>> = {
  organization: { 200: OrganizationDocument, 401: e, 404: e, 503: e },
  list: { 200: ProjectListDocument, 400: e, 401: e, 404: e, 422: e, 503: e },
  show: { 200: ProjectDocument, 400: e, 401: e, 404: e, 503: e },
  create: { 201: ProjectDocument, 400: e, 401: e, 404: e, 415: e, 422: e, 503: e },
  update: { 200: ProjectDocument, 400: e, 401: e, 404: e, 415: e, 422: e, 503: e },
  remove: { 204: Type.Null({ description: 'Deleted; no body.' }), 401: e, 404: e, 422: e, 503: e }
}
export const teamProjectResponses: Record<'list' | 'show' | 'add' | 'update' | 'remove', Record<number, TSchema>> = {
  list: { 200: TeamProjectListDocument, 400: e, 401: e, 404: e, 422: e, 503: e },
  show: { 200: TeamProjectDocument, 401: e, 404: e, 503: e },
  add: { 201: TeamProjectDocument, 400: e, 401: e, 404: e, 415: e, 422: e, 503: e },
  update: { 200: TeamProjectDocument, 400: e, 401: e, 404: e, 415: e, 422: e, 503: e },
  remove: { 204: Type.Null({ description: 'Removed; no body.' }), 401: e, 404: e, 503: e }
}

export type ProjectAccess = Static<typeof ProjectAccess>
export type ProjectResource = Static<typeof ProjectResource>
export type OrganizationResource = Static<typeof OrganizationResource>
export type TeamProjectResource = Static<typeof TeamProjectResource>
export type CreateProjectBody = Static<typeof CreateProjectBody>
export type UpdateProjectBody = Static<typeof UpdateProjectBody>
export type AddTeamProjectBody = Static<typeof AddTeamProjectBody>
export type UpdateTeamProjectBody = Static<typeof UpdateTeamProjectBody>
export type ListProjectsQuery = Static<typeof ListProjectsQuery>
export type ListTeamProjectsQuery = Static<typeof ListTeamProjectsQuery>
export type ProjectAccessObject = Static<typeof ProjectAccessObject>
export type WorkspaceAccessObject = Static<typeof WorkspaceAccessObject>
