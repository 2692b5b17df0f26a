import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { ErrorDocument, PaginationLinks, PaginationMeta } from './jsonapi.js'
import { PageQuery } from './workspaces.js'
import { TeamWorkspaceAttributes } from './team-workspaces.js'
import { EffectiveAccessGrant } from './effective-access.js'

// The access review (DESIGN §12.1): an organization's whole access, one entry per team and
// workspace. Not in HCP Terraform: the operation is marked `x-team-access-extension`.

const reference = (type: string, description: string) => Type.Object({ id: Type.String(), type: Type.Literal(type) }, { description })

/** The columns of the CSV answer, in order. */
export const ACCESS_REVIEW_CSV_COLUMNS = ['username', 'team', 'team_visibility', 'workspace', 'project', 'access', 'runs', 'variables',
  'state_versions', 'sentinel_mocks', 'workspace_locking', 'run_tasks', 'granted_by'] as const

export const AccessReviewEntry = Type.Object({
  id: Type.String({ description: 'The team id and the workspace id, joined by `:`.' }),
  type: Type.Literal('access-review-entries'),
  attributes: Type.Object({
    ...TeamWorkspaceAttributes.properties,
    grants: Type.Array(EffectiveAccessGrant, { minItems: 1, description: 'Every grant that produces this access.' }),
    'team-name': Type.String(),
    'team-visibility': Type.Union([Type.Literal('secret'), Type.Literal('organization')]),
    'team-members': Type.Array(Type.String(), { description: "The usernames of the team's members, sorted." }),
    'workspace-name': Type.String(),
    'project-name': Type.String({ description: "The name of the workspace's project." })
  }, { description: "The team's effective access on the workspace (level, each permission at its strongest, the grants), with the names a reviewer reads." }),
  relationships: Type.Object({
    team: Type.Object({ data: reference('teams', 'The team.') }),
    workspace: Type.Object({ data: reference('workspaces', 'The workspace.') }),
    project: Type.Object({ data: reference('projects', "The workspace's project.") })
  })
}, { $id: 'AccessReviewEntry', description: 'One team that holds effective access on one workspace, and why.' })

export const AccessReviewDocument = Type.Object({
  data: Type.Array(AccessReviewEntry),
  meta: Type.Optional(Type.Object({ pagination: PaginationMeta }, { description: 'Only on a page.' })),
  links: Type.Optional(PaginationLinks)
}, { description: 'The entries, by team name, then workspace name: with page[number] or page[size] a page (with meta.pagination and links), without either every entry, streamed.' })

export const AccessReviewParams = Type.Object({ organization: Type.String({ description: "The organization's name." }) })
export const AccessReviewQuery = Type.Object(PageQuery)

export const accessReviewResponses: Record<number, TSchema> = {
  200: AccessReviewDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument
}

export type AccessReviewEntry = Static<typeof AccessReviewEntry>
