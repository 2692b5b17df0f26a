import { createHash } from 'node:crypto'
import type { Access } from '../../schemas/common.js'
import { customOnlyViolations, PERMISSION_NAMES, permissionsOnAdd, type PermissionName, type Permissions } from '../access/permissions.js'
import { permissionsOf, pickPermissions } from '../access/permission-columns.js'
import type { AccessSetProblem } from '../access/access-sets.js'
import type { TeamWorkspaceView } from './team-workspaces-repository.js'

/**
 * The pure part of a workspace's access set (DESIGN §10.1): what an entry asks for, what is wrong
 * with a set before the database is asked, the difference between the rows there are and the set
 * wanted, and the ETag that names a set.
 */

/** One entry of a desired set: a team and its access, as in an add. Undefined permissions count as absent. */
export type AccessSetEntry = { teamId: string, access: Access } & { [K in PermissionName]?: Permissions[K] | undefined }

export type { AccessSetProblem } from '../access/access-sets.js'

/** A row the set wants: what an add of the entry would create (under custom, omitted permissions take the custom defaults). */
export interface DesiredRow { teamId: string, access: Access, permissions: Permissions }

/** What it takes to make the workspace equal to the set; `changes` lists team ids, each in order. */
export interface AccessSetPlan {
  add: DesiredRow[]
  update: Array<DesiredRow & { id: string }>
  remove: Array<{ id: string, teamId: string }>
  changes: { added: string[], updated: string[], removed: string[] }
}

/** The desired rows of a set, and what breaks the rules of an add or appears twice, in entry order. */
export function desiredRows (entries: readonly AccessSetEntry[]): { rows: DesiredRow[], problems: AccessSetProblem[] } {
  const problems: AccessSetProblem[] = []
  const first = new Map<string, number>()
  const rows = entries.map((entry, index) => {
    const requested = pickPermissions(entry)
    for (const violation of customOnlyViolations(entry.access, requested)) {
      problems.push({ entry: index, member: violation.attribute, detail: violation.detail })
    }
    const seen = first.get(entry.teamId)
    if (seen === undefined) first.set(entry.teamId, index)
    else problems.push({ entry: index, member: 'team', detail: `The team is already in the set (entry ${seen}); a set holds one entry per team.` })
    return { teamId: entry.teamId, access: entry.access, permissions: permissionsOnAdd(entry.access, requested) }
  })
  return { rows, problems }
}

/** The rows to add, change and remove so that `current` becomes `desired` (one row per team); rows equal to their entry stay untouched. */
export function planAccessSet (current: readonly TeamWorkspaceView[], desired: readonly DesiredRow[]): AccessSetPlan {
  const byTeam = new Map(current.map((row) => [row.team_id, row]))
  const wanted = new Set(desired.map((row) => row.teamId))
  const add = desired.filter((row) => !byTeam.has(row.teamId))
  const update = desired.flatMap((row) => {
    const now = byTeam.get(row.teamId)
    return now !== undefined && !sameAccess(now, row) ? [{ ...row, id: now.id }] : []
  })
  const remove = current.filter((row) => !wanted.has(row.team_id)).map((row) => ({ id: row.id, teamId: row.team_id }))
  const sorted = (teams: string[]) => [...teams].sort()
  return {
    add,
    update,
    remove,
    changes: { added: sorted(add.map((r) => r.teamId)), updated: sorted(update.map((r) => r.teamId)), removed: sorted(remove.map((r) => r.teamId)) }
  }
}

const sameAccess = (row: TeamWorkspaceView, wanted: DesiredRow): boolean => {
  const now = permissionsOf(row)
  return row.access === wanted.access && PERMISSION_NAMES.every((name) => now[name] === wanted.permissions[name])
}

/**
 * A strong ETag naming exactly this set of a workspace: a digest of every row's id, team, access and
 * permissions, in id order. Any add, change or removal — a row removed and added again included,
 * as it gets a new id — names another set.
 */
export function accessSetEtag (workspaceId: string, rows: readonly TeamWorkspaceView[]): string {
  const canonical = [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((row) => [row.id, row.team_id, row.access, ...PERMISSION_NAMES.map((name) => permissionsOf(row)[name])])
  const digest = createHash('sha256').update(JSON.stringify([workspaceId, canonical])).digest('base64url')
  return `"${digest}"`
}
