import { createHash, randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { ValidateFunction } from 'ajv'
import { HostProjectAccessEntries, type ProjectAccess } from '../../schemas/projects.js'
import type { Database } from '../db/database.js'
import { impossibleId } from '../db/ids.js'
import { withGrants } from '../access/grants.js'
import { administersProject } from '../access/project-predicates.js'
import { projectColumnsOnAdd, projectCustomOnlyViolations, projectPermissionsOf, PROJECT_PERMISSION_COLUMNS, type ProjectPermissions } from '../access/project-permissions.js'
import type { Caller } from '../auth/caller.js'
import { createAjv, errorMessage } from '../validation.js'
import { AccessSetError, asAccessSetError, ifMatchAccepts, type AccessSetProblem } from '../access/access-sets.js'
import { TeamProjectsRepository, type TeamProjectView } from './team-projects-repository.js'

/**
 * A project's access set (DESIGN §11.5, as §10.1 for a workspace): the host's
 * `teamAccess.setProjectAccess`, which makes a project's team access equal to a complete set in
 * one transaction. Each row it adds, changes or removes goes through the statement the API's
 * team-projects routes use (./team-projects-repository.ts), so who may, nobody handing out more than
 * they hold, and the audit events are those of the API; a step that may not be taken is a problem
 * of the set, and the whole change rolls back.
 */

/** One entry: a team and its access to the project, the objects as an add takes them (only under custom). */
export interface ProjectAccessEntry {
  teamId: string
  access: ProjectAccess
  'project-access'?: Partial<ProjectPermissions['project-access']>
  'workspace-access'?: Partial<ProjectPermissions['workspace-access']>
}

export interface SetProjectAccessInput {
  caller: Caller
  projectId: string
  /** The complete desired set: one entry per team; a team with a row and no entry loses it. */
  entries: readonly ProjectAccessEntry[]
  /** Change nothing; answer what would change, and the set as it would be. */
  dryRun?: boolean | undefined
  /** An ETag of the set (from an earlier answer): change only if the set is still that one. `*` matches any. */
  ifMatch?: string | undefined
  /** The request id the audit events carry; default a new random UUID. */
  requestId?: string | undefined
}

/** A row of a project's set, as the host sees it. */
export interface ProjectAccessRow {
  id: string
  teamId: string
  projectId: string
  access: ProjectAccess
  permissions: ProjectPermissions
}

/** The project's set after the change (in a dry run: as it would be), its ETag, and what changed (team ids, sorted). */
export interface ProjectAccessSet {
  rows: ProjectAccessRow[]
  etag: string
  changes: { added: string[], updated: string[], removed: string[] }
  dryRun: boolean
}

/** The ETag of a project's rows: a digest of every row's team, level and values, whatever their order. */
export function projectAccessEtag (projectId: string, rows: readonly TeamProjectView[]): string {
  const canonical = [...rows].sort((a, b) => (a.id < b.id ? -1 : 1)).map((row) => [row.id, row.team_id, row.access, ...PROJECT_PERMISSION_COLUMNS.map((c) => row[c])])
  return `"${createHash('sha256').update(JSON.stringify([projectId, canonical])).digest('base64url')}"`
}

class DryRun extends Error {
  constructor (readonly outcome: ProjectAccessSet) { super('dry run') }
}

let validateEntries: ValidateFunction | undefined

/**
 * Makes the project's team access equal to `entries`, or changes nothing and throws an
 * AccessSetError: `invalid` (a malformed entry; or, every problem at once, a key set under a fixed
 * level, a team twice, a team not there for the caller or given more than the caller holds, a row
 * left out that the caller may not remove), `not-found` (no such project, or the caller is not its
 * admin), `precondition-failed` (`ifMatch`).
 */
export async function setProjectAccess (db: Kysely<Database>, input: SetProjectAccessInput): Promise<ProjectAccessSet> {
  validateEntries ??= createAjv().compile(HostProjectAccessEntries)
  if (!validateEntries(input.entries)) {
    const error = validateEntries.errors![0]!
    const [entry, member] = error.instancePath.split('/').slice(1)
    const missing = (error.params as { missingProperty?: string }).missingProperty
    throw new AccessSetError('invalid', 'An entry of the set is malformed.', [{ entry: Number(entry ?? 0), detail: `${member ?? missing ?? 'entry'} ${errorMessage(error)}` }])
  }
  const { caller, projectId } = input
  if (impossibleId(projectId)) throw new AccessSetError('not-found', 'No such project.')
  const requestId = input.requestId ?? randomUUID()
  const problems: AccessSetProblem[] = []
  const first = new Map<string, number>()
  input.entries.forEach((entry, index) => {
    projectCustomOnlyViolations(entry.access, entry).forEach((violation) => problems.push({ entry: index, member: 'access', detail: violation.detail }))
    if (first.has(entry.teamId)) problems.push({ entry: index, member: 'team', detail: `The team is already in entry ${first.get(entry.teamId)!}.` })
    else first.set(entry.teamId, index)
  })

  try {
    return await db.transaction().execute(async (trx) => {
      const project = await withGrants(trx, caller).selectFrom('projects as p').select('p.id')
        .where('p.id', '=', projectId).where(administersProject('p.id', 'p.organization_id')).forUpdate('p').executeTakeFirst()
      if (project === undefined) throw new AccessSetError('not-found', 'No such project.')
      const rowsNow = async () => await trx.selectFrom('team_projects').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('id').forUpdate().execute()
      const current = await rowsNow()
      const before = projectAccessEtag(projectId, current)
      if (problems.length > 0) throw new AccessSetError('invalid', 'The set breaks a rule.', problems)
      if (input.ifMatch !== undefined && !ifMatchAccepts(input.ifMatch, before)) throw new AccessSetError('precondition-failed', 'The set has changed since the ETag given.')

      // each step is the API's own statement, with its rules and its audit event
      const rows = new TeamProjectsRepository(trx)
      const changes = { added: [] as string[], updated: [] as string[], removed: [] as string[] }
      const byTeam = new Map(current.map((row) => [row.team_id, row]))
      for (const [index, entry] of input.entries.entries()) {
        const columns = projectColumnsOnAdd(entry.access, entry)
        const row = byTeam.get(entry.teamId)
        if (row === undefined) {
          const { added } = await rows.add(caller, { teamId: entry.teamId, projectId, access: entry.access, columns }, requestId)
          if (added === undefined) problems.push({ entry: index, member: 'team', detail: 'Team not found, or the access is more than the caller holds on this project.' })
          else changes.added.push(entry.teamId)
        } else if (row.access !== entry.access || PROJECT_PERMISSION_COLUMNS.some((c) => row[c] !== columns[c])) {
          const { updated } = await rows.update(caller, row.id, { access: entry.access, columns, setsKeys: false }, requestId)
          if (updated === undefined) problems.push({ entry: index, member: 'team', detail: 'The access is more than the caller holds on this project, or a team whose row it may not change.' })
          else changes.updated.push(entry.teamId)
        }
      }
      for (const row of current.filter((r) => !first.has(r.team_id))) {
        if (await rows.remove(caller, row.id, requestId)) changes.removed.push(row.team_id)
        else problems.push({ entry: -1, member: 'team', detail: `The set leaves out team ${row.team_id}, whose row the caller may not remove.` })
      }
      if (problems.length > 0) throw new AccessSetError('invalid', 'The set breaks a rule.', problems)

      const changed = changes.added.length + changes.updated.length + changes.removed.length > 0
      const after = changed ? await rowsNow() : current
      const outcome = { rows: after.map(forHost), changes: { added: changes.added.sort(), updated: changes.updated.sort(), removed: changes.removed.sort() }, dryRun: input.dryRun === true }
      // a dry run writes as the apply would, then takes it all back
      if (input.dryRun === true) throw new DryRun({ ...outcome, etag: before })
      return { ...outcome, etag: changed ? projectAccessEtag(projectId, after) : before }
    })
  } catch (err) {
    if (err instanceof DryRun) return err.outcome
    throw asAccessSetError(err)
  }
}

const forHost = (row: TeamProjectView): ProjectAccessRow =>
  ({ id: row.id, teamId: row.team_id, projectId: row.project_id, access: row.access as ProjectAccess, permissions: projectPermissionsOf(row) })
