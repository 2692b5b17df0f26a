/**
 * The service and its floors under `npm run bench` (bench/run.ts): seeded through the service's own
 * start, the 100,000 rows bulk-loaded, the floors and then the service driven row by row (with the
 * revoked token's first request), and a baseline checkout side by side with this one.
 */
import type { ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import pg from 'pg'
import { LARGE, largeWorkspaceSql, ORG_TOKEN } from './dataset.js'
import { measureRevokedFirstRequest, type RevokedSamples } from './revoked-token.js'
import { assertPortFree, start, stop, waitFor } from './processes.js'
import { auditEvents, compare, drive, type Floors, type Row } from './drive.js'
import { floors, scenarios } from './scenarios.js'
import { median, quantile } from './stats.js'
import { AUDIT_TRAIL, BASELINE, BASELINE_PORT, FLOOR_PORT, REVOKED_ROUNDS, selected, SERVER, SERVICE_ENV, SERVICE_PORT, SIDE_BY_SIDE_ROUNDS } from './settings.js'

export async function measureService (engine: 'postgres' | 'pglite', env: Record<string, string>, floorRows: Floors | undefined, parts: { rows: boolean, revoked: boolean }): Promise<{ rows: Row[], startSeconds: number, audit: boolean, revoked?: RevokedSamples }> {
  await assertPortFree(SERVICE_PORT)
  const began = Date.now()
  const service = start(SERVER, { ...env, ...SERVICE_ENV, PORT: String(SERVICE_PORT) })
  const base = `http://127.0.0.1:${SERVICE_PORT}`
  try {
    await waitFor(`${base}/readyz`, 600_000)
    const startSeconds = (Date.now() - began) / 1000
    console.log(`${engine}: listening after ${startSeconds.toFixed(1)} s`)
    const audit = await auditEvents(base) !== undefined
    console.log(`${engine}: audit trail ${audit ? `present (GET ${AUDIT_TRAIL} answers 200): the writes include their audit events` : `absent (GET ${AUDIT_TRAIL} does not answer 200): the writes are measured without an audit event, and there is no audit read row`}`)
    const all = scenarios(audit).filter((s) => (engine === 'postgres' || !s.postgresOnly) && parts.rows && selected(s.key))
    const rows: Row[] = []
    for (const scenario of all) {
      const before = scenario.countsAuditEvents && audit ? await auditEvents(base) : undefined
      const row = await drive(base, scenario, service.pid!)
      if (scenario.countsAuditEvents) {
        const note = before === undefined
          ? 'no audit trail in this service: the write alone'
          : `${((await auditEvents(base) ?? before) - before).toLocaleString('en-US')} audit events recorded for its ${row.succeeded.toLocaleString('en-US')} successful writes (warm-up included)`
        row.note = row.note === undefined ? note : `${row.note}; ${note}`
        if (before !== undefined) console.log(`    ${note}`)
      }
      rows.push(row)
    }
    compare(rows, all, floorRows)
    if (!parts.revoked) return { rows, startSeconds, audit }
    // team-6400: no member, and not among the teams the token row regenerates
    const revoked = await measureRevokedFirstRequest(base, ORG_TOKEN, 'team-6400', REVOKED_ROUNDS, Math.max(5, Math.round(REVOKED_ROUNDS / 10)))
    console.log(`  ${engine}: a regenerated-away token's first request (401) p50 ${quantile(revoked.revoked, 0.5).toFixed(2)} ms; a valid token's p50 ${quantile(revoked.valid, 0.5).toFixed(2)} ms; a never-valid token's p50 ${quantile(revoked.never, 0.5).toFixed(2)} ms`)
    return { rows, startSeconds, audit, revoked }
  } finally {
    await stop(service)
  }
}

/**
 * The baseline checkout and this one, side by side on one database: the baseline seeds and
 * migrates first (it knows fewer migrations), the 100,000 rows are bulk-loaded, then this
 * checkout starts and migrates on.
 */
export async function measureSideBySide (env: Record<string, string>, seedFile: string, url: string): Promise<string> {
  const script = join(BASELINE!, 'dist/src/server.js')
  const baseline = start(script, { ...env, ...SERVICE_ENV, SEED_FILE: seedFile, PORT: String(BASELINE_PORT) })
  let branch: ChildProcess | undefined
  try {
    await waitFor(`http://127.0.0.1:${BASELINE_PORT}/readyz`, 600_000)
    await bulkLoad(url)
    branch = start(SERVER, { ...env, ...SERVICE_ENV, PORT: String(SERVICE_PORT) })
    await waitFor(`http://127.0.0.1:${SERVICE_PORT}/readyz`, 600_000)
    const lines: string[] = []
    for (const scenario of scenarios(false).filter((s) => s.sideBySide !== false && selected(s.key))) {
      // one run of each is at the mercy of a noisy machine (a row may move by half from one run
      // to the next): the two alternate, SIDE_BY_SIDE_ROUNDS times, and the medians compare
      const before: Row[] = []
      const after: Row[] = []
      for (let round = 1; round <= SIDE_BY_SIDE_ROUNDS; round++) {
        before.push(await drive(`http://127.0.0.1:${BASELINE_PORT}`, { ...scenario, name: `baseline, round ${round}: ${scenario.name}` }, baseline.pid!))
        after.push(await drive(`http://127.0.0.1:${SERVICE_PORT}`, { ...scenario, name: `this checkout, round ${round}: ${scenario.name}` }, branch.pid!))
      }
      const [b, a] = [median(before.map((r) => r.rps)), median(after.map((r) => r.rps))]
      const rounds = (rows: Row[]) => rows.map((r) => r.rps.toFixed(0)).join(', ')
      const errors = (rows: Row[]) => rows.reduce((n, r) => n + r.errors, 0)
      lines.push(`| ${scenario.cycle ? `${scenario.name} (cycles/s)` : scenario.name} | ${b.toFixed(0)} (${rounds(before)}) | ${a.toFixed(0)} (${rounds(after)}) | ${(a / b).toFixed(2)} | ${errors(before)} / ${errors(after)} |`)
    }
    return `## Side by side on PostgreSQL: ${BASELINE} (baseline) and this checkout

Each scenario driven on the baseline, then on this checkout, against the same database, and again,
${SIDE_BY_SIDE_ROUNDS} rounds in all (BENCH_SIDE_BY_SIDE_ROUNDS): the median of each side, and each round in
brackets. A route the baseline does not have shows as errors (404s) there.

| operation | baseline req/s, median (rounds) | this checkout req/s, median (rounds) | this / baseline | errors (baseline / this) |
|---|---:|---:|---:|---:|
${lines.join('\n')}`
  } finally {
    if (branch !== undefined) await stop(branch)
    await stop(baseline)
  }
}

/** The 100,000 rows of workspace `large`, by INSERT … SELECT generate_series (bench/dataset.ts); returns the seconds it took. */
export async function bulkLoad (url: string): Promise<number> {
  const began = Date.now()
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  // the service's tables: in its schema, or in public for a checkout from before it had one
  await client.query('set search_path to team_access, public')
  try {
    for (const statement of largeWorkspaceSql()) await client.query(statement)
    const { rows: [count] } = await client.query<{ n: string }>("select count(*) as n from team_workspaces where workspace_id = 'ws-large'")
    if (Number(count!.n) !== LARGE) throw new Error(`workspace large has ${count!.n} rows, not ${LARGE}`)
  } finally {
    await client.end()
  }
  return (Date.now() - began) / 1000
}

/** Migrates and seeds through the service's own start with SEED_FILE; returns how long that took. */
export async function seed (env: Record<string, string>, seedFile: string): Promise<number> {
  const began = Date.now()
  const seeding = start(SERVER, { ...env, ...SERVICE_ENV, SEED_FILE: seedFile, PORT: String(SERVICE_PORT) })
  await waitFor(`http://127.0.0.1:${SERVICE_PORT}/readyz`, 600_000)
  await stop(seeding)
  return (Date.now() - began) / 1000
}

export async function measureFloor (env: Record<string, string>): Promise<Floors> {
  const floor = start('dist/bench/floor-server.js', { ...env, PORT: String(FLOOR_PORT) })
  const base = `http://127.0.0.1:${FLOOR_PORT}`
  try {
    await waitFor(`${base}/floor/read/x`, 30_000)
    const page = await fetch(`${base}/floor/page/ws-huge/50`)
    if (page.status !== 200 || ((await page.json()) as { data: unknown[] }).data.length !== 100) throw new Error(`the page floor does not answer a page of 100 (${page.status})`)
    const measured: Floors = {}
    for (const key of ['read', 'update', 'insertDelete', 'page', 'showBound', 'showMemberBound'] as const) {
      if (selected(floors[key].key)) measured[key] = await drive(base, floors[key], floor.pid!)
    }
    // the bound on the show's ratio, read as the show's is: against the one-row floor
    compare(Object.values(measured), Object.values(floors), measured)
    return measured
  } finally {
    await stop(floor)
  }
}
