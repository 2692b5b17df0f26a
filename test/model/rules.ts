import type { Access, Visibility } from '../../schemas/common.js'
import { higher } from '../../src/access/effective-access.js'
import { IMPLICIT_PERMISSIONS, type Permissions } from '../../src/access/permissions.js'

/**
 * The reference model: who may see and change team access (DESIGN §3), as pure functions over
 * what a caller acts as. The service states these rules once, as SQL predicates
 * (src/access/predicates.ts); this plain statement of them is what tests read them against.
 */

/** One team the caller acts through, or (teamId null) an organization token's ownership. */
export interface Grant {
  organizationId: string
  teamId: string | null
  isOwner: boolean
  manageWorkspaces: boolean
  readWorkspaces: boolean
}

export interface AccessRow {
  teamId: string
  access: Access
  visibility: Visibility
}

export const isMember = (grants: readonly Grant[], organizationId: string): boolean =>
  grants.some((g) => g.organizationId === organizationId)

/**
 * The caller's effective access on a workspace: the highest of ownership (admin),
 * manage-workspaces (admin), read-workspaces (read) and the access of its teams' rows there.
 * `rows` are the workspace's team-workspace rows.
 */
export function effectiveAccess (grants: readonly Grant[], organizationId: string, rows: readonly AccessRow[]): Access | null {
  let best: Access | null = null
  for (const g of grants) {
    if (g.organizationId !== organizationId) continue
    if (g.isOwner || g.manageWorkspaces) best = higher(best, 'admin')
    if (g.readWorkspaces) best = higher(best, 'read')
  }
  const teams = new Set(grants.map((g) => g.teamId))
  for (const row of rows) if (teams.has(row.teamId)) best = higher(best, row.access)
  return best
}

/** Owners and workspace admins may add, update and remove the workspace's team access. */
export const mayModify = (grants: readonly Grant[], organizationId: string, rows: readonly AccessRow[]): boolean =>
  effectiveAccess(grants, organizationId, rows) === 'admin'

/**
 * Who may read the workspace (DESIGN §7), and so list and show its team access (DESIGN §3):
 * effective access at least read — owners, manage-workspaces and read-workspaces teams, and any
 * team of the caller's with a row on it, of any level (custom included).
 */
export const mayRead = (grants: readonly Grant[], organizationId: string, rows: readonly AccessRow[]): boolean =>
  isMember(grants, organizationId) && effectiveAccess(grants, organizationId, rows) !== null

/**
 * Whether the caller sees one row of the workspace: not at all unless it reads the workspace
 * (outside its organizations, or a member with no access there); every row as an owner or
 * workspace admin; otherwise rows of `organization`-visible teams and of the secret teams it
 * belongs to.
 */
export function maySee (grants: readonly Grant[], organizationId: string, rows: readonly AccessRow[], row: AccessRow): boolean {
  if (!mayRead(grants, organizationId, rows)) return false
  if (row.visibility === 'organization') return true
  if (grants.some((g) => g.teamId === row.teamId)) return true
  return mayModify(grants, organizationId, rows)
}

/**
 * The answers of DESIGN §10.2, from §3 alone: what a team holds on a workspace, what a user holds
 * through its teams, the grants that produce it, and who may ask. Permissions are combined
 * attribute by attribute in each attribute's own order, written out here rather than taken from
 * the service.
 */
export type SourceKind = 'owners' | 'organization-access.manage-workspaces' | 'organization-access.read-workspaces' | 'team-access'

/** A team as the answers see it: its organization and its organization-wide flags. */
export interface TeamRecord {
  id: string
  organizationId: string
  isOwners: boolean
  manageWorkspaces: boolean
  readWorkspaces: boolean
}

/** A team-access row with its permissions. */
export interface RowRecord {
  id: string
  teamId: string
  workspaceId: string
  access: Access
  permissions: Permissions
}

export interface Source { kind: SourceKind, teamId: string, access: Access, rowId?: string }

export interface Answer { access: Access, permissions: Permissions, sources: Source[] }

/** Each permission's values, weakest first (written out here, not taken from the service). */
export const ORDERS: { [K in keyof Permissions]: ReadonlyArray<Permissions[K]> } = {
  runs: ['read', 'plan', 'apply'],
  variables: ['none', 'read', 'write'],
  'state-versions': ['none', 'read-outputs', 'read', 'write'],
  'sentinel-mocks': ['none', 'read'],
  'workspace-locking': [false, true],
  'run-tasks': [false, true],
  'policy-overrides': [false, true]
}

/** Each attribute at the strongest any of the sets gives it. */
export function strongest (sets: readonly Permissions[]): Permissions {
  const out: Record<string, unknown> = {}
  for (const [name, order] of Object.entries(ORDERS) as Array<[keyof Permissions, readonly unknown[]]>) {
    out[name] = sets.map((set) => set[name]).reduce((a, b) => (order.indexOf(b) > order.indexOf(a) ? b : a))
  }
  return out as unknown as Permissions
}

/** The grant a team acts as (DESIGN §3: a team token is a member whose only team is that team). */
export const teamAsGrant = (team: TeamRecord): Grant =>
  ({ organizationId: team.organizationId, teamId: team.id, isOwner: team.isOwners, manageWorkspaces: team.manageWorkspaces, readWorkspaces: team.readWorkspaces })

/** The grants one team holds on a workspace: ownership, its organization access, its row there. */
export function sourcesOf (team: TeamRecord, workspace: { id: string, organizationId: string }, rows: readonly RowRecord[]): Array<Source & { permissions: Permissions }> {
  if (team.organizationId !== workspace.organizationId) return []
  const out: Array<Source & { permissions: Permissions }> = []
  if (team.isOwners) out.push({ kind: 'owners', teamId: team.id, access: 'admin', permissions: IMPLICIT_PERMISSIONS.admin })
  if (team.manageWorkspaces) out.push({ kind: 'organization-access.manage-workspaces', teamId: team.id, access: 'admin', permissions: IMPLICIT_PERMISSIONS.admin })
  if (team.readWorkspaces) out.push({ kind: 'organization-access.read-workspaces', teamId: team.id, access: 'read', permissions: IMPLICIT_PERMISSIONS.read })
  for (const row of rows) {
    if (row.teamId === team.id && row.workspaceId === workspace.id) out.push({ kind: 'team-access', teamId: team.id, access: row.access, rowId: row.id, permissions: row.permissions })
  }
  return out
}

/**
 * What some teams (one team, or a user's teams) hold on a workspace, or null when nothing: the
 * level is their effective access (`effectiveAccess`, as for a caller acting through them), each
 * permission the strongest of their grants.
 */
export function answerOf (teams: readonly TeamRecord[], workspace: { id: string, organizationId: string }, rows: readonly RowRecord[]): Answer | null {
  const sources = teams.flatMap((team) => sourcesOf(team, workspace, rows))
  const access = effectiveAccess(teams.map(teamAsGrant), workspace.organizationId,
    rows.filter((row) => row.workspaceId === workspace.id).map((row) => ({ teamId: row.teamId, access: row.access, visibility: 'secret' as const })))
  if (access === null) return null
  return { access, permissions: strongest(sources.map((s) => s.permissions)), sources: sources.map(({ permissions: _, ...source }) => source) }
}

/** Who may ask what teams hold on a workspace: owners and workspace admins (the rule of who may modify). */
export const mayExplainWorkspace = mayModify

/** Who may ask which workspaces a team reaches: owners of its organization, and who acts through the team. */
export const mayExplainTeam = (grants: readonly Grant[], team: TeamRecord): boolean =>
  grants.some((g) => g.organizationId === team.organizationId && g.isOwner) || grants.some((g) => g.teamId === team.id)
