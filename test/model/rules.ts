import type { Access, Visibility } from '../../schemas/common.js'
import { higher } from '../../src/access/effective-access.js'

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
