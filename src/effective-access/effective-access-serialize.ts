import type { EffectiveAccessGrant, TeamEffectiveAccessResource, UserEffectiveAccessResource } from '../../schemas/effective-access.js'
import type { GrantSource } from '../access/effective-access.js'
import { segment } from '../jsonapi/document.js'
import type { TeamExplanation, UserExplanation, WorkspaceName } from './effective-access-repository.js'

/** A grant as the wire says it: its kind, the level it gives, its team and (a row) the row's id. */
export const toGrant = (grant: GrantSource): EffectiveAccessGrant => ({
  kind: grant.kind,
  access: grant.access,
  team: grant.teamId,
  ...(grant.teamWorkspaceId === undefined ? {} : { 'team-workspace': grant.teamWorkspaceId }),
  ...(grant.teamProjectId === undefined ? {} : { 'team-project': grant.teamProjectId, project: grant.projectId!, 'project-access': grant.projectAccess! })
})

/** The attributes of an answer that holds access: the level, the seven permissions, the grants. */
function attributes (explanation: TeamExplanation | UserExplanation): TeamEffectiveAccessResource['attributes'] {
  return { access: explanation.access!, ...explanation.permissions!, grants: explanation.grants.map(toGrant) }
}

const workspaceRelationship = (workspace: WorkspaceName, prefix: string) => ({
  data: { id: workspace.id, type: 'workspaces' as const },
  links: { related: `${prefix}/organizations/${segment(workspace.organizationName)}/workspaces/${segment(workspace.name)}` }
})

/** A team's effective access on a workspace as its resource (DESIGN §10.2). */
export function toTeamEffectiveAccess (explanation: TeamExplanation, prefix: string): TeamEffectiveAccessResource {
  return {
    id: `${explanation.teamId}:${explanation.workspace.id}`,
    type: 'effective-access',
    attributes: attributes(explanation),
    relationships: {
      team: { data: { id: explanation.teamId, type: 'teams' }, links: { related: `${prefix}/teams/${segment(explanation.teamId)}` } },
      workspace: workspaceRelationship(explanation.workspace, prefix)
    }
  }
}

/** A user's effective access on a workspace as its resource; only for a user that holds some (its id is known then). */
export function toUserEffectiveAccess (explanation: UserExplanation, prefix: string): UserEffectiveAccessResource {
  return {
    id: `${explanation.userId!}:${explanation.workspace.id}`,
    type: 'effective-access',
    attributes: attributes(explanation),
    relationships: {
      user: { data: { id: explanation.userId!, type: 'users' } },
      teams: { data: explanation.teamIds.map((id) => ({ id, type: 'teams' as const })) },
      workspace: workspaceRelationship(explanation.workspace, prefix)
    }
  }
}
