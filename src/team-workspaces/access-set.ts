import { randomUUID } from 'node:crypto'
import type { ValidateFunction } from 'ajv'
import { HostAccessSetEntries } from '../../schemas/access-set.js'
import type { Access } from '../../schemas/common.js'
import type { Permissions } from '../access/permissions.js'
import type { Caller } from '../auth/caller.js'
import { permissionsOf } from '../access/permission-columns.js'
import { impossibleId } from '../db/ids.js'
import { createAjv, errorMessage } from '../validation.js'
import { AccessSetError, asAccessSetError, ifMatchAccepts, type AccessSetProblem } from '../access/access-sets.js'
import { accessSetEtag, desiredRows, planAccessSet, type AccessSetEntry } from './access-set-plan.js'
import { SetChangedMeanwhile, type AccessSetRepository } from './access-set-repository.js'
import type { TeamWorkspaceView } from './team-workspaces-repository.js'

/**
 * A workspace's access set (DESIGN §10.1), read and replaced: the one flow behind
 * `GET` / `PUT /workspaces/:id/team-access` and the host's `teamAccess.setWorkspaceAccess`.
 */

export type { AccessSetEntry, AccessSetProblem } from './access-set-plan.js'

export { AccessSetError, type AccessSetErrorCode } from '../access/access-sets.js'

/** What `setWorkspaceAccess` takes. */
export interface SetWorkspaceAccessInput {
  caller: Caller
  workspaceId: string
  /** The complete desired set: one entry per team; a team with a row and no entry loses it. */
  entries: readonly AccessSetEntry[]
  /** Change nothing; answer what would change, and the set as it would be. */
  dryRun?: boolean | undefined
  /** An ETag of the set (from a read or an earlier change): change only if the set is still that one. `*` matches any. */
  ifMatch?: string | undefined
  /** The request id the audit events carry; default a new random UUID. */
  requestId?: string | undefined
}

/** The set of a workspace after a change (in a dry run: as it would be), with what changed. */
export interface AccessSetOutcome {
  /** The set as it is now; in a dry run, the set as it would be (rows it would add carry ids that are not kept). */
  rows: TeamWorkspaceView[]
  /** The ETag of the set as it is now: after a change, the new set's; in a dry run, the unchanged set's. */
  etag: string
  /** Team ids, each list sorted. */
  changes: { added: string[], updated: string[], removed: string[] }
  dryRun: boolean
}

/** A row of a set, as the host's `setWorkspaceAccess` answers it. */
export interface AccessSetRow {
  id: string
  teamId: string
  workspaceId: string
  access: Access
  permissions: Permissions
}

/** What the host's `setWorkspaceAccess` answers: the outcome, its rows as AccessSetRow. */
export type WorkspaceAccessSet = Omit<AccessSetOutcome, 'rows'> & { rows: AccessSetRow[] }

/** An outcome's rows as the host sees them. */
export const forHost = (outcome: AccessSetOutcome): WorkspaceAccessSet => ({
  ...outcome,
  rows: outcome.rows.map((row) => ({ id: row.id, teamId: row.team_id, workspaceId: row.workspace_id, access: row.access, permissions: permissionsOf(row) }))
})

/** Carries a dry run's outcome out of the transaction it rolls back. */
class DryRun extends Error {
  constructor (readonly outcome: AccessSetOutcome) { super('dry run') }
}

let validateEntries: ValidateFunction | undefined

/** The workspace's set and its ETag, for an owner or workspace admin; undefined otherwise (404). */
export async function readWorkspaceAccess (repository: AccessSetRepository, caller: Caller, workspaceId: string): Promise<{ rows: TeamWorkspaceView[], etag: string } | undefined> {
  const rows = impossibleId(workspaceId) ? undefined : await repository.read(caller, workspaceId)
  return rows === undefined ? undefined : { rows, etag: accessSetEtag(workspaceId, rows) }
}

/**
 * Makes the workspace's team access equal to `entries` in one transaction, or changes nothing and
 * throws an AccessSetError. The order of the answers: the entries' shape (`invalid`), the workspace
 * and the caller's right to manage it (`not-found`), the entries' rules — custom-only attributes,
 * a team twice, a team that is not there for the caller (`invalid`, every problem at once) — then
 * `ifMatch` (`precondition-failed`).
 */
export async function setWorkspaceAccess (repository: AccessSetRepository, input: SetWorkspaceAccessInput): Promise<AccessSetOutcome> {
  const entries = input.entries.map((entry) => Object.fromEntries(Object.entries(entry).filter(([, value]) => value !== undefined)))
  validateEntries ??= createAjv().compile(HostAccessSetEntries)
  if (!validateEntries(entries)) {
    const error = validateEntries.errors![0]!
    throw new AccessSetError('invalid', 'An entry of the set is malformed.', [shapeProblem(error.instancePath, (error.params as { missingProperty?: string, additionalProperty?: string }), errorMessage(error))])
  }
  const { workspaceId, caller } = input
  if (impossibleId(workspaceId)) throw new AccessSetError('not-found', 'No such workspace.')
  const requestId = input.requestId ?? randomUUID()
  const { rows: desired, problems } = desiredRows(entries as unknown as AccessSetEntry[])

  try {
    return await repository.change(async (set) => {
      const workspace = await set.lockWorkspace(caller, workspaceId)
      if (workspace === undefined) throw new AccessSetError('not-found', 'No such workspace.')
      const teams = [...new Set(desired.map((row) => row.teamId))]
      const named = await set.teamsItMayName(caller, workspace.organizationId, workspaceId, teams)
      // each team once: a second entry of it is already a problem
      teams.forEach((teamId) => {
        if (!named.has(teamId)) problems.push({ entry: desired.findIndex((row) => row.teamId === teamId), member: 'team', detail: 'Team not found.' })
      })
      if (problems.length > 0) {
        throw new AccessSetError('invalid', 'The set breaks a rule.', [...problems].sort((a, b) => a.entry - b.entry))
      }
      const current = await set.rows(workspaceId)
      const before = accessSetEtag(workspaceId, current)
      if (input.ifMatch !== undefined && !ifMatchAccepts(input.ifMatch, before)) {
        throw new AccessSetError('precondition-failed', 'The set has changed since the ETag given.')
      }
      const plan = planAccessSet(current, desired)
      const changed = plan.add.length + plan.update.length + plan.remove.length > 0
      if (changed) await set.write(caller, { ...workspace, workspaceId }, plan, requestId)
      const after = changed ? await set.rows(workspaceId) : current
      const outcome = { rows: after, changes: plan.changes, dryRun: input.dryRun === true }
      // a dry run writes as the apply would, then takes it all back
      if (input.dryRun === true) throw new DryRun({ ...outcome, etag: before })
      return { ...outcome, etag: changed ? accessSetEtag(workspaceId, after) : before }
    })
  } catch (err) {
    if (err instanceof DryRun) return err.outcome
    if (err instanceof SetChangedMeanwhile) throw new AccessSetError('precondition-failed', 'The set changed while it was being written; nothing was changed.')
    throw asAccessSetError(err)
  }
}

/** The problem an entry's shape has, from the validator's pointer into the entries (`/3/access`, or `/3` and a missing member). */
function shapeProblem (path: string, params: { missingProperty?: string, additionalProperty?: string }, message: string): AccessSetProblem {
  const [index, member] = path.split('/').slice(1)
  const name = member ?? params.missingProperty ?? params.additionalProperty
  const known = name === 'teamId' ? 'team' : name
  const problem = { entry: Number(index ?? 0), detail: `${name ?? 'entry'} ${message}` }
  return known === undefined || params.additionalProperty !== undefined ? problem : { ...problem, member: known as AccessSetProblem['member'] & string }
}
