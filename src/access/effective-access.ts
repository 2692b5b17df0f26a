import type { Access } from '../../schemas/common.js'
import type { ProjectAccess } from '../../schemas/projects.js'
import { IMPLICIT_PERMISSIONS, strongestPermissions, type Permissions } from './permissions.js'

/** One grant a caller holds on a workspace, from whichever source. */
export interface AccessSource {
  access: Access
  permissions: Permissions
}

/** What the caller may do on a workspace: the highest level it holds and the strongest of every permission. */
export interface EffectiveAccess {
  /** The highest fixed level, else `custom` when only custom rows grant anything, else null. */
  access: Access | null
  /** Attribute-wise the strongest permissions across every grant; null without any grant. */
  permissions: Permissions | null
}

/** The order of the levels: a fixed level outranks custom (custom is never admin). */
export const ACCESS_RANK: Readonly<Record<Access, number>> = { custom: 0, read: 1, plan: 2, write: 3, admin: 4 }

/** The stronger of two levels; a fixed level outranks custom (custom is never admin). */
export function higher (a: Access | null, b: Access | null): Access | null {
  if (a === null) return b
  if (b === null) return a
  return ACCESS_RANK[b] > ACCESS_RANK[a] ? b : a
}

/**
 * The organization-wide grants of DESIGN §3 and §11.3, stated once: a flag of a grant row (a column of the
 * `grants` CTE, ./grants.ts — what a team, or an organization token, acts as) and the level it
 * gives on every workspace of the organization. The SQL predicates (./predicates.ts) and the
 * explanations below are both built from this table.
 */
export const ORGANIZATION_GRANTS = [
  { kind: 'owners', flag: 'is_owner', access: 'admin' },
  { kind: 'organization-access.manage-workspaces', flag: 'manage_workspaces', access: 'admin' },
  { kind: 'organization-access.read-workspaces', flag: 'read_workspaces', access: 'read' },
  { kind: 'organization-access.manage-projects', flag: 'manage_projects', access: 'admin' },
  { kind: 'organization-access.read-projects', flag: 'read_projects', access: 'read' }
] as const satisfies ReadonlyArray<{ kind: string, flag: string, access: Access }>

export type OrganizationGrantFlag = typeof ORGANIZATION_GRANTS[number]['flag']

/** Where a grant comes from: an organization-wide grant of a team, one of its team-access rows, or its team-project row on the workspace's project. */
export type GrantKind = typeof ORGANIZATION_GRANTS[number]['kind'] | 'team-access' | 'team-project'

/** A team's flags that grant organization-wide access (the columns of its grant row). */
export type OrganizationGrantFlags = Record<OrganizationGrantFlag, boolean>

/** A team's grants on one workspace: its organization-wide flags, its team-access row there, and its team-project row on the workspace's project, if any. */
export interface TeamGrants {
  teamId: string
  flags: OrganizationGrantFlags
  row: { id: string, access: Access, permissions: Permissions } | null
  /** As a workspace grant (src/access/project-permissions.ts, `workspaceGrantOf`), with the project row's own level. */
  projectRow: ProjectGrant | null
}

/** A team-project row as the grant it gives on a workspace of its project (DESIGN §11.2). */
export interface ProjectGrant { id: string, projectId: string, projectAccess: ProjectAccess, access: Access, permissions: Permissions }

/** One grant that produces access, and what it gives. */
export interface GrantSource extends AccessSource {
  kind: GrantKind
  /** The team it comes through. */
  teamId: string
  /** The team-access row (kind `team-access`). */
  teamWorkspaceId?: string
  /** The team-project row, its project and its own level (kind `team-project`). */
  teamProjectId?: string
  projectId?: string
  projectAccess?: ProjectAccess
}

/** Effective access with the grants that produce it. */
export interface Explanation extends EffectiveAccess {
  grants: GrantSource[]
}

/** The highest level and the strongest permissions of the sources (none: nulls). */
function strongest (sources: readonly AccessSource[]): EffectiveAccess {
  return {
    access: sources.reduce<Access | null>((best, s) => higher(best, s.access), null),
    permissions: strongestPermissions(sources.map((s) => s.permissions))
  }
}

/**
 * Effective access (DESIGN §3) from what the caller's teams hold on one workspace (an
 * organization token is one grant row with ownership and no team row): each organization-wide
 * flag counts as its level (ORGANIZATION_GRANTS: ownership and manage-workspaces admin,
 * read-workspaces read), each team row as its level with its own permissions. None (no grant, or
 * no such workspace): nulls.
 */
export function combineAccess (teams: ReadonlyArray<Pick<TeamGrants, 'flags' | 'row' | 'projectRow'>>): EffectiveAccess {
  return strongest(teams.flatMap((team) => [...organizationWide(team.flags), ...(team.row === null ? [] : [team.row]), ...(team.projectRow === null ? [] : [team.projectRow])]))
}

/** The organization-wide grants a team's flags give (in ORGANIZATION_GRANTS order). */
function organizationWide (flags: OrganizationGrantFlags): Array<typeof ORGANIZATION_GRANTS[number] & AccessSource> {
  return ORGANIZATION_GRANTS.filter((grant) => flags[grant.flag]).map((grant) => ({ ...grant, permissions: IMPLICIT_PERMISSIONS[grant.access] }))
}

/** The grants one team holds on a workspace, organization-wide ones first (in ORGANIZATION_GRANTS order), then its row, then its project's row. */
export function grantsOf (team: TeamGrants): GrantSource[] {
  const row: GrantSource[] = team.row === null
    ? []
    : [{ kind: 'team-access', access: team.row.access, permissions: team.row.permissions, teamId: team.teamId, teamWorkspaceId: team.row.id }]
  const { projectRow: p } = team
  const projectRow: GrantSource[] = p === null
    ? []
    : [{ kind: 'team-project', access: p.access, permissions: p.permissions, teamId: team.teamId, teamProjectId: p.id, projectId: p.projectId, projectAccess: p.projectAccess }]
  return [...organizationWide(team.flags).map(({ kind, access, permissions }): GrantSource => ({ kind, access, permissions, teamId: team.teamId })), ...row, ...projectRow]
}

/**
 * Why a team, or a user through its teams, holds what it holds on a workspace (DESIGN §10.2): the
 * effective access of every grant of those teams, combined as for a caller (`combineAccess`: the
 * highest level, attribute-wise the strongest permissions), with the grants themselves.
 */
export function explainAccess (teams: readonly TeamGrants[]): Explanation {
  const grants = teams.flatMap(grantsOf)
  return { ...strongest(grants), grants }
}
