import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { inSchema } from '../db/tables.js'
import { planMirror } from './mirror-plan.js'
import { MirrorError } from './mirror-rows.js'
import type { MirrorSnapshot } from './mirror-snapshot.js'
import { MirrorWrite } from './mirror-write.js'
import type { SeedSummary } from './seed-entries.js'
import type { ChangeSource } from './source.js'

export { MirrorError }

/**
 * applyMirror (DESIGN §13.3): an HCP Terraform organization, as the mirror read it, made the
 * directory's truth for what the mirror manages. First the plan, from plain reads
 * (src/directory/mirror-plan.ts): a conflict or a snapshot that breaks a rule fails the run whole,
 * naming it, and a run that finds nothing different writes nothing to the directory — no event,
 * no lock. Otherwise one transaction writes the differences (src/directory/mirror-write.ts), all
 * or nothing. Either way a successful run is noted in `mirrors` (its host, when, how long, how many
 * requests), outside the directory's transaction: the only write of a run that changed nothing.
 */

export interface ApplyMirrorOptions {
  /** Plan only: what would be created, changed and removed; nothing is written (not even `mirrors`). */
  dryRun?: boolean
  /** The PostgreSQL schema of the plugin's tables (default: the one `db` works in, else `team_access`). */
  schema?: string
  /** How long the whole run took (the read and the apply), for `mirrors`; default: the apply's own time. */
  durationMs?: number
}

export async function applyMirror (db: Kysely<any>, snapshot: MirrorSnapshot, options: ApplyMirrorOptions = {}): Promise<SeedSummary> {
  const started = performance.now()
  const directory = inSchema(db, options.schema)
  const dryRun = options.dryRun === true
  const plan = await planMirror(directory, snapshot, dryRun)
  if (dryRun) return plan.summary
  let summary = plan.summary
  if (plan.differs) {
    // every event of the run shares one request id: the changes that came together
    const source: ChangeSource = { by: 'mirror', host: snapshot.host, requestId: randomUUID() }
    try {
      summary = await directory.transaction().execute(async (trx) => await new MirrorWrite(trx, snapshot, plan, source).write())
    } catch (err) {
      throw asMirrorError(err)
    }
  }
  await recordRun(directory, plan.organization.id, snapshot, options.durationMs ?? performance.now() - started)
  return summary
}

/** A successful run, in `mirrors`: the organization's one row, replaced. */
async function recordRun (db: Kysely<Database>, organizationId: string, snapshot: MirrorSnapshot, durationMs: number): Promise<void> {
  const values = { host: snapshot.host, succeeded_at: new Date(), duration_ms: Math.round(durationMs), requests: snapshot.requests }
  await db.insertInto('mirrors').values({ organization_id: organizationId, ...values })
    .onConflict((oc) => oc.column('organization_id').doUpdateSet(values)).execute()
}

/**
 * A rule the database keeps, broken: by a value the snapshot holds that the directory cannot (a
 * check), or by rows that changed since the plan read them (a unique key, a reference). The run
 * changed nothing, and says which rule.
 */
function asMirrorError (err: unknown): unknown {
  const e = err as { code?: unknown, constraint?: unknown, detail?: unknown } | null
  if (e === null || typeof e !== 'object' || typeof e.code !== 'string' || !e.code.startsWith('23')) return err
  const rule = [e.constraint, e.detail].filter((part) => typeof part === 'string').join(': ')
  const raced = e.code === '23505' || e.code === '23503'
  return new MirrorError([raced
    ? `a row here stands in the way${rule === '' ? '' : ` (${rule})`}: run it again`
    : `a value read breaks a rule of the directory${rule === '' ? '' : ` (${rule})`}`])
}
