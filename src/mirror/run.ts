import { writeFileSync } from 'node:fs'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { applyMirror } from '../directory/mirror-apply.js'
import type { SeedSummary } from '../directory/seed-entries.js'
import { readOrganization, type ReadOptions } from './read.js'
import { seedOutNotes, snapshotToSeed } from './seed-out.js'

/**
 * One mirror run (DESIGN §13.1), as `team-access mirror` and the service's schedule both make it:
 * read the whole organization first, then — `seedOut` — write it as a seed document and touch no
 * database, or apply it as one change (`dryRun`: say what would change, change nothing). The token
 * is passed on to the reader and nowhere else: nothing here logs, returns or stores it.
 */
export interface MirrorRunOptions extends ReadOptions {
  dryRun?: boolean
  /** Write the organization as a seed document to this file instead of applying it. */
  seedOut?: string
  /** The PostgreSQL schema of the plugin's tables. */
  schema?: string
  /** Told when the read is done and the apply begins (the schedule logs it: on the embedded database, requests wait meanwhile). */
  onApply?: (rows: number) => void
}

export interface MirrorRunResult {
  organization: string
  host: string
  /** What the apply created, changed and removed (or would, for a dry run); undefined for `seedOut`. */
  summary?: SeedSummary
  /** The seed document's file, for `seedOut`. */
  seedFile?: string
  requests: number
  readMs: number
  applyMs: number
  /** What was read but has no place here, each said once. */
  notes: string[]
}

export async function runMirror (db: Kysely<Database> | undefined, options: MirrorRunOptions): Promise<MirrorRunResult> {
  const started = performance.now()
  const snapshot = await readOrganization(options)
  const readMs = performance.now() - started
  const base = { organization: snapshot.organization.name, host: snapshot.host, requests: snapshot.requests, readMs, notes: snapshot.notes }
  if (options.seedOut !== undefined) {
    writeFileSync(options.seedOut, `${JSON.stringify(snapshotToSeed(snapshot), null, 2)}\n`, { mode: 0o644 })
    return { ...base, notes: [...base.notes, ...seedOutNotes(snapshot)], seedFile: options.seedOut, applyMs: 0 }
  }
  if (db === undefined) throw new Error('a mirror run that applies needs a database')
  options.onApply?.(snapshot.users.length + snapshot.teams.length + snapshot.memberships.length + snapshot.projects.length +
    snapshot.workspaces.length + snapshot.teamWorkspaces.length + snapshot.teamProjects.length)
  const applying = performance.now()
  const summary = await applyMirror(db, snapshot, {
    dryRun: options.dryRun === true,
    durationMs: Math.round(performance.now() - started),
    ...(options.schema === undefined ? {} : { schema: options.schema })
  })
  return { ...base, summary, applyMs: performance.now() - applying }
}

/** The run in one line, for the log and the end of a terminal's progress: what it read and what it did. */
export function runLine (result: MirrorRunResult): string {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`
  const what = result.seedFile !== undefined
    ? `seed document written to ${result.seedFile}`
    : changedNothing(result.summary!)
      ? result.summary!.dryRun ? 'nothing would change' : 'nothing changed'
      : `${result.summary!.dryRun ? 'would create' : 'created'} ${count(result.summary!, 'created')}, ${result.summary!.dryRun ? 'change' : 'changed'} ${count(result.summary!, 'changed')}, ${result.summary!.dryRun ? 'remove' : 'removed'} ${count(result.summary!, 'removed')}`
  return `mirror ${result.organization} from ${result.host}: ${what} — ${result.requests} requests, read in ${seconds(result.readMs)}${result.seedFile === undefined ? `, applied in ${seconds(result.applyMs)}` : ''}`
}

const count = (summary: SeedSummary, part: 'created' | 'changed' | 'removed'): number =>
  Object.values(summary[part]).reduce((sum, labels) => sum + labels.length, 0)

export const changedNothing = (summary: SeedSummary): boolean =>
  count(summary, 'created') + count(summary, 'changed') + count(summary, 'removed') === 0
