import type { Access } from '../../schemas/common.js'
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
 * The organization-wide grants of DESIGN §3, stated once: a flag of a grant row (a column of the
 * `grants` CTE, ./grants.ts — what a team, or an organization token, acts as) and the level it
 * gives on every workspace of the organization. The SQL predicates (./predicates.ts) and the
 * explanations below are both built from this table.
 */
export const ORGANIZATION_GRANTS = [
  { kind: 'owners', flag: 'is_owner', access: 'admin' },
  { kind: 'organization-access.manage-workspaces', flag: 'manage_workspaces', access: 'admin' },
  { kind: 'organization-access.read-workspaces', flag: 'read_workspaces', access: 'read' }
] as const satisfies ReadonlyArray<{ kind: string, flag: string, access: Access }>

export type OrganizationGrantFlag = typeof ORGANIZATION_GRANTS[number]['flag']

/** Where a grant comes from: an organization-wide grant of a team, or one of its team-access rows. */
export type GrantKind = typeof ORGANIZATION_GRANTS[number]['kind'] | 'team-access'

/** A team's flags that grant organization-wide access (the columns of its grant row). */
export type OrganizationGrantFlags = Record<OrganizationGrantFlag, boolean>

/** A team's grants on one workspace: its organization-wide flags, and its team-access row there, if any. */
export interface TeamGrants {
  teamId: string
  flags: OrganizationGrantFlags
  row: { id: string, access: Access, permissions: Permissions } | null
}

/** One grant that produces access, and what it gives. */
export interface GrantSource extends AccessSource {
  kind: GrantKind
  /** The team it comes through. */
  teamId: string
  /** The team-access row (kind `team-access`). */
  teamWorkspaceId?: string
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
export function combineAccess (teams: ReadonlyArray<Pick<TeamGrants, 'flags' | 'row'>>): EffectiveAccess {
  return strongest(teams.flatMap((team) => team.row === null ? organizationWide(team.flags) : [...organizationWide(team.flags), team.row]))
}

/** The organization-wide grants a team's flags give (in ORGANIZATION_GRANTS order). */
function organizationWide (flags: OrganizationGrantFlags): Array<typeof ORGANIZATION_GRANTS[number] & AccessSource> {
  return ORGANIZATION_GRANTS.filter((grant) => flags[grant.flag]).map((grant) => ({ ...grant, permissions: IMPLICIT_PERMISSIONS[grant.access] }))
}

/** The grants one team holds on a workspace, organization-wide ones first (in ORGANIZATION_GRANTS order), then its row. */
export function grantsOf (team: TeamGrants): GrantSource[] {
  const row: GrantSource[] = team.row === null
    ? []
    : [{ kind: 'team-access', access: team.row.access, permissions: team.row.permissions, teamId: team.teamId, teamWorkspaceId: team.row.id }]
  return [...organizationWide(team.flags).map(({ kind, access, permissions }): GrantSource => ({ kind, access, permissions, teamId: team.teamId })), ...row]
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
