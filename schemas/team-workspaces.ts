import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Access, OptionalPermissions, PolicyOverrides, Runs, RunTasks, SentinelMocks, StateVersions, StringEnum, Variables, WorkspaceLocking } from './common.js'
import { ErrorDocument, PaginationLinks, PaginationMeta } from './jsonapi.js'

// The team-workspaces resource and its requests (DESIGN §4).
// @see https://developer.hashicorp.com/terraform/cloud-docs/api-docs/team-access

const strict = { additionalProperties: false } as const
/** JSON:API's own `meta` member is allowed wherever the format allows it; anything else unknown is 422. */
const Meta = Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Ignored.' }))
const RequestId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\u0000]+$', description: 'An id, as the API serves it.' })

export const TeamWorkspaceAttributes = Type.Object({
  access: Access,
  runs: Runs,
  variables: Variables,
  'state-versions': StateVersions,
  'sentinel-mocks': SentinelMocks,
  'workspace-locking': WorkspaceLocking,
  'run-tasks': RunTasks,
  'policy-overrides': PolicyOverrides
}, { $id: 'TeamWorkspaceAttributes', description: 'Every attribute is always present; under a fixed level the permissions are the implied ones.' })

const link = (description: string) => Type.Object({ related: Type.String({ description }) })

export const TeamWorkspaceResource = Type.Object({
  id: Type.String({ description: 'The team-workspace id (`tws-…`).' }),
  type: Type.Literal('team-workspaces'),
  attributes: TeamWorkspaceAttributes,
  relationships: Type.Object({
    team: Type.Object({
      data: Type.Object({ id: Type.String(), type: Type.Literal('teams') }),
      links: link('The team.')
    }),
    workspace: Type.Object({
      data: Type.Object({ id: Type.String(), type: Type.Literal('workspaces') }),
      links: link('The workspace, by organization and workspace name.')
    })
  }),
  links: Type.Object({ self: Type.String() })
}, { $id: 'TeamWorkspace', description: "A team's access to a workspace." })

export const TeamWorkspaceDocument = Type.Object({ data: TeamWorkspaceResource },
  { description: 'One team-workspace.' })

export const TeamWorkspaceListDocument = Type.Object({
  data: Type.Array(TeamWorkspaceResource),
  meta: Type.Optional(Type.Object({ pagination: PaginationMeta })),
  links: Type.Optional(PaginationLinks)
}, { description: 'The visible team access of a workspace; `meta` and `links` only when paginated.' })

const relationship = (type: string, description: string) => Type.Object({
  data: Type.Object({ type: StringEnum([type]), id: RequestId }, strict),
  links: Type.Optional(Type.Object({}, { additionalProperties: true })),
  meta: Meta
}, { ...strict, description })

export const AddTeamWorkspaceBody = Type.Object({
  data: Type.Object({
    type: StringEnum(['team-workspaces']),
    attributes: Type.Object({ access: Access, ...OptionalPermissions }, strict),
    relationships: Type.Object({
      team: relationship('teams', 'The team that receives the access.'),
      workspace: relationship('workspaces', 'The workspace the access is on.')
    }, strict),
    meta: Meta
  }, strict),
  meta: Meta
}, { ...strict, description: "Add a team's access to a workspace." })

export const UpdateTeamWorkspaceBody = Type.Object({
  data: Type.Object({
    type: Type.Optional(StringEnum(['team-workspaces'])),
    id: Type.Optional(Type.String({ description: 'When present, the id in the path.' })),
    attributes: Type.Object({ access: Type.Optional(Access), ...OptionalPermissions }, strict),
    meta: Meta
  }, strict),
  meta: Meta
}, { ...strict, description: 'Change the access level or, under custom, individual permissions.' })

export const TeamWorkspaceParams = Type.Object({
  id: Type.String({ description: 'The team-workspace id, from the list operation.' })
})

/**
 * Query values arrive as strings; page numbers are checked by the route so the message can be
 * exact, and so is "at least one filter".
 */
export const ListTeamWorkspacesQuery = Type.Object({
  'filter[workspace][id]': Type.Optional(Type.String({ minLength: 1, description: 'The workspace whose team access to list (this, filter[team][id], or both).' })),
  'filter[team][id]': Type.Optional(Type.String({ minLength: 1, description: "The team whose access to list, across its organization's workspaces (this, filter[workspace][id], or both)." })),
  'page[number]': Type.Optional(Type.String({ description: 'Page number, from 1 (paginates when given).' })),
  'page[size]': Type.Optional(Type.String({ description: 'Rows per page, 1 to 100, default 20 (paginates when given).' }))
})

/**
 * Every response of every operation: fast serialization and the OpenAPI document come from
 * these. Errors are all the one JSON:API error document; what each status means is said in
 * the operation's description.
 */
export const responses: Record<'list' | 'show' | 'add' | 'update' | 'remove', Record<number, TSchema>> = {
  list: { 200: TeamWorkspaceListDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument },
  show: { 200: TeamWorkspaceDocument, 401: ErrorDocument, 404: ErrorDocument, 503: ErrorDocument },
  add: { 200: TeamWorkspaceDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 415: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument },
  update: { 200: TeamWorkspaceDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 415: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument },
  remove: { 204: Type.Null({ description: 'Removed; no body.' }), 401: ErrorDocument, 404: ErrorDocument, 503: ErrorDocument }
}

/** What each operation answers, for the OpenAPI document. */
export const descriptions = {
  list: 'Every team access row of the workspace the caller may see, for a caller who can read the workspace (effective access at least read): owners and workspace admins all, other readers the rows of teams visible to the organization and of their own secret teams; with filter[team][id] too, only that team\'s row; with filter[team][id] alone, the rows of that team on the workspaces the caller can read, for a caller who may see the team. Without page parameters, all rows; with either, a page. 404: the workspace or team does not exist or is not the caller\'s to list. 422: no filter, an empty one, or bad page parameters.',
  show: 'One team access row. 404: it does not exist or the caller may not see it (as in the list, which takes read access on its workspace).',
  add: 'Gives a team access to a workspace; 200 on creation, as HCP Terraform. Owners and workspace admins only. 404: workspace or team not found (or of another organization), or the caller may not manage the workspace. 422: malformed body, a custom-only attribute under a fixed level, or "Team has already been taken". 415: not a JSON body.',
  update: 'Changes the access level (a fixed level resets every permission) or, under custom, single permissions (the others are kept). A body that changes nothing answers the row as it is, and records no audit event. Owners and workspace admins only. 404: not found or not manageable by the caller. 422: malformed body, data.type or data.id wrong, or a custom-only attribute under a fixed level.',
  remove: 'Removes a team access row. Owners and workspace admins only. 404: not found or not manageable by the caller.'
}

export type TeamWorkspaceResource = Static<typeof TeamWorkspaceResource>
export type TeamWorkspaceListDocument = Static<typeof TeamWorkspaceListDocument>
export type AddTeamWorkspaceBody = Static<typeof AddTeamWorkspaceBody>
export type UpdateTeamWorkspaceBody = Static<typeof UpdateTeamWorkspaceBody>
export type ListTeamWorkspacesQuery = Static<typeof ListTeamWorkspacesQuery>
