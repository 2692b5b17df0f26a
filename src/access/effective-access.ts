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

const RANK: Record<Access, number> = { custom: 0, read: 1, plan: 2, write: 3, admin: 4 }

/** The stronger of two levels; a fixed level outranks custom (custom is never admin). */
export function higher (a: Access | null, b: Access | null): Access | null {
  if (a === null) return b
  if (b === null) return a
  return RANK[b] > RANK[a] ? b : a
}

/**
 * Effective access (DESIGN §3) from the grants one query loads: ownership and manage-workspaces
 * count as admin, read-workspaces as read, and each of the caller's team rows as its level with
 * its own permissions.
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
