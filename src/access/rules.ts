import type { Access, Visibility } from '../../schemas/common.js'
import { IMPLICIT_PERMISSIONS, strongestPermissions, type Permissions } from './permissions.js'

/**
 * Who may see and change team access (DESIGN §3), as pure functions over what a caller acts as.
 * The repository applies the same rules in SQL; these are the statement of them that tests and
 * the reference model check it against.
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

const RANK: Record<Access, number> = { custom: 0, read: 1, plan: 2, write: 3, admin: 4 }

/** The stronger of two levels; a fixed level outranks custom (custom is never admin). */
export function higher (a: Access | null, b: Access | null): Access | null {
  if (a === null) return b
  if (b === null) return a
  return RANK[b] > RANK[a] ? b : a
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
 * Whether the caller sees one row of the workspace: not at all outside its organizations;
 * every row as an owner or workspace admin; otherwise rows of `organization`-visible teams and
 * of the secret teams it belongs to.
 */
export function maySee (grants: readonly Grant[], organizationId: string, rows: readonly AccessRow[], row: AccessRow): boolean {
  if (!isMember(grants, organizationId)) return false
  if (row.visibility === 'organization') return true
  if (grants.some((g) => g.teamId === row.teamId)) return true
  return mayModify(grants, organizationId, rows)
}

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

/**
 * Combines the grants on one workspace: ownership and manage-workspaces count as admin,
 * read-workspaces as read, and each team row as its level with its own permissions.
 */
export function combineAccess (organization: { admin: boolean, read: boolean }, rows: readonly AccessSource[]): EffectiveAccess {
  const sources: AccessSource[] = [...rows]
  if (organization.admin) sources.push({ access: 'admin', permissions: IMPLICIT_PERMISSIONS.admin })
  if (organization.read) sources.push({ access: 'read', permissions: IMPLICIT_PERMISSIONS.read })
  return {
    access: sources.reduce<Access | null>((best, s) => higher(best, s.access), null),
    permissions: strongestPermissions(sources.map((s) => s.permissions))
  }
}
