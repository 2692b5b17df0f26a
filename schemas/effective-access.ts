import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Access, StringEnum } from './common.js'
import { ErrorDocument, PaginationLinks, PaginationMeta } from './jsonapi.js'
import { Include, PageQuery } from './workspaces.js'
import { TeamWorkspaceAttributes } from './team-workspaces.js'

// The answers behind team access (DESIGN §10.2): who holds what on a workspace, and why. Not in
// HCP Terraform: the operations are marked `x-team-access-extension` in the OpenAPI document.

export const GrantKind = StringEnum(['owners', 'organization-access.manage-workspaces', 'organization-access.read-workspaces',
  'organization-access.manage-projects', 'organization-access.read-projects', 'team-access', 'team-project'], {
  description: "Where a grant comes from: the owners team ('owners': admin), a team's organization access ('organization-access.manage-workspaces' and 'organization-access.manage-projects': admin, 'organization-access.read-workspaces' and 'organization-access.read-projects': read, on every workspace of the organization), a team-access row on the workspace ('team-access': its level and permissions), or a team-project row on the workspace's project ('team-project': maintain and admin give admin, read, write and custom themselves, with the row's workspace permissions)."
})

export const EffectiveAccessGrant = Type.Object({
  kind: GrantKind,
  access: Access,
  team: Type.String({ description: 'The team the grant comes through (`team-…`).' }),
  'team-workspace': Type.Optional(Type.String({ description: "The team-access row (`tws-…`): only for kind 'team-access'." })),
  'team-project': Type.Optional(Type.String({ description: "The team-project row (`tprj-…`): only for kind 'team-project'." })),
  project: Type.Optional(Type.String({ description: "The project the team-project row is on (`prj-…`): only for kind 'team-project'." })),
  'project-access': Type.Optional(StringEnum(['read', 'write', 'maintain', 'admin', 'custom'], { description: "The team-project row's own level: only for kind 'team-project'." }))
}, { description: 'One grant, and the level it gives (under a fixed level, with that level’s implied permissions; a row under custom, with the row’s own).' })

const EffectiveAccessAttributes = Type.Object({
  // the level and the seven permissions, as a team-workspace carries them
  ...TeamWorkspaceAttributes.properties,
  grants: Type.Array(EffectiveAccessGrant, { minItems: 1, description: 'Every grant that produces this access; the level is the highest of theirs, each permission the strongest of theirs.' })
}, { description: 'The effective access: the highest level any grant gives (a fixed level outranks custom), each permission the strongest any grant gives (the attributes of a team-workspace), and the grants.' })

const reference = (type: string, description: string) => Type.Object({ id: Type.String(), type: Type.Literal(type) }, { description })
const related = (description: string) => Type.Object({ related: Type.String({ description }) })

const WorkspaceRelationship = Type.Object({
  data: reference('workspaces', 'The workspace.'),
  links: related('The workspace, by organization and workspace name.')
})

export const TeamEffectiveAccessResource = Type.Object({
  id: Type.String({ description: 'The team id and the workspace id, joined by `:`.' }),
  type: Type.Literal('effective-access'),
  attributes: EffectiveAccessAttributes,
  relationships: Type.Object({
    team: Type.Object({ data: reference('teams', 'The team.'), links: related('The team.') }),
    workspace: WorkspaceRelationship
  })
}, { $id: 'TeamEffectiveAccess', description: "A team's effective access on a workspace, and the grants that produce it." })

export const UserEffectiveAccessResource = Type.Object({
  id: Type.String({ description: 'The user id and the workspace id, joined by `:`.' }),
  type: Type.Literal('effective-access'),
  attributes: EffectiveAccessAttributes,
  relationships: Type.Object({
    user: Type.Object({ data: reference('users', 'The user.') }),
    teams: Type.Object({ data: Type.Array(reference('teams', 'A team.'), { description: 'The teams the access comes through, by name.' }) }),
    workspace: WorkspaceRelationship
  })
}, { $id: 'UserEffectiveAccess', description: "A user's effective access on a workspace, through its teams, and the grants that produce it." })

export const WorkspaceEffectiveAccessDocument = Type.Object({
  data: Type.Array(Type.Union([TeamEffectiveAccessResource, UserEffectiveAccessResource]))
}, { description: 'Every team that holds any access on the workspace, by team name; with filter[user], the user’s access (one resource), or none when it holds none.' })

export const TeamEffectiveAccessDocument = Type.Object({
  data: Type.Array(TeamEffectiveAccessResource),
  meta: Type.Object({ pagination: PaginationMeta }),
  links: PaginationLinks
}, { description: 'A page of the workspaces the team reaches, by workspace name.' })

export const WorkspaceEffectiveAccessParams = Type.Object({ id: Type.String({ description: 'The workspace id (`ws-…`).' }) })
export const TeamEffectiveAccessParams = Type.Object({ id: Type.String({ description: 'The team id (`team-…`).' }) })

export const WorkspaceEffectiveAccessQuery = Type.Object({
  'filter[user]': Type.Optional(Type.String({ minLength: 1, description: "A username: that user's effective access on the workspace, through its teams, instead of every team's." })),
  include: Include
})
export const TeamEffectiveAccessQuery = Type.Object(PageQuery)

export const effectiveAccessResponses: Record<'workspace' | 'team', Record<number, TSchema>> = {
  workspace: { 200: WorkspaceEffectiveAccessDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument },
  team: { 200: TeamEffectiveAccessDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument }
}

export type TeamEffectiveAccessResource = Static<typeof TeamEffectiveAccessResource>
export type UserEffectiveAccessResource = Static<typeof UserEffectiveAccessResource>
export type EffectiveAccessGrant = Static<typeof EffectiveAccessGrant>
