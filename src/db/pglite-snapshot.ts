/**
 * Build step (`npm run build`): makes the pre-initialised, migrated PGlite data directory that new
 * embedded databases start from (see pglite.ts). Runs initdb only when there is no snapshot yet, or
 * the installed PGlite or the migrations differ from those that made it; otherwise it returns at once.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { DEFAULT_SCHEMA } from './tables.js'
import { makeSnapshot, migrationDigests, pgliteVersion, SNAPSHOT_FILE, SNAPSHOT_FORMAT, SNAPSHOT_INFO, type SnapshotInfo } from './pglite.js'

const wanted: SnapshotInfo = { format: SNAPSHOT_FORMAT, pglite: pgliteVersion(), schema: DEFAULT_SCHEMA, migrations: await migrationDigests() }
let current: SnapshotInfo | undefined
try {
  if (existsSync(SNAPSHOT_FILE)) current = JSON.parse(readFileSync(SNAPSHOT_INFO, 'utf8')) as SnapshotInfo
} catch {
  current = undefined
}

if (JSON.stringify(current) !== JSON.stringify(wanted)) {
  const started = performance.now()
  try {
    const tarball = await makeSnapshot()
    mkdirSync(dirname(SNAPSHOT_FILE), { recursive: true })
    // the description goes first and comes back last: a half-written pair is never taken for a good one
    rmSync(SNAPSHOT_INFO, { force: true })
    writeFileSync(`${SNAPSHOT_FILE}.tmp`, tarball)
    renameSync(`${SNAPSHOT_FILE}.tmp`, SNAPSHOT_FILE)
    writeFileSync(SNAPSHOT_INFO, JSON.stringify(wanted) + '\n')
    console.log(`PGlite ${wanted.pglite} data directory, ${wanted.migrations.length} migrations applied: ${SNAPSHOT_FILE} (${(tarball.length / 1048576).toFixed(1)} MB, ${Math.round(performance.now() - started)} ms)`)
  } catch (err) {
    // not fatal: without a snapshot, new embedded databases run initdb (slowly) as before
    rmSync(SNAPSHOT_INFO, { force: true })
    console.warn(`warning: no PGlite data directory snapshot (${(err as Error).message}); new embedded databases will run initdb`)
  }
}
