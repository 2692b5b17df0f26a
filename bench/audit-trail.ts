/**
 * `npm run bench:audit`: the audit trail over 200,000 events on PostgreSQL (issue 18).
 *
 * One service on a new database of the machine's PostgreSQL, seeded with an organization `audit`
 * (200 workspaces, one custom row each) and a quiet organization; 200,000 events of `audit` go in
 * by bulk SQL through the same triggers as any other event. Then:
 *
 * - pages: page 1, a middle page and the last page at page[size]=1000, and a deep page after
 *   `since`, each read one request at a time (after a warm-up) — median and p99 milliseconds;
 * - starvation: the quiet organization's owner reads its own small list 20 times a second, alone
 *   and then while 8 readers of `audit` read its deepest full page as fast as they are answered —
 *   the quiet caller's median and p99, on the service without limits and with its defaults;
 * - writes: PATCHes that change a permission on the 200 rows of `audit` (one organization, so
 *   every write records an event in the same trail), BENCH_AUDIT_CONNECTIONS at once (default
 *   10), the same number of requests on each run — writes per second, median and p99.
 *
 * Settings: BENCH_DATABASE_URL (admin URL, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_SERVER (another checkout's dist/src/server.js, e.g. the one before the change, to measure
 * it on the same script), BENCH_PORT (default 3130), BENCH_AUDIT_EVENTS (default 200000),
 * BENCH_AUDIT_WRITES (writes per run, default 6000), BENCH_AUDIT_RUNS (write runs, default 3).
 */
import autocannon, { type Options, type Result } from 'autocannon'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { assertPortFree, start, stop, waitFor } from './processes.js'

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const SERVER = process.env.BENCH_SERVER ?? 'dist/src/server.js'
const PORT = Number(process.env.BENCH_PORT ?? 3130)
const EVENTS = Number(process.env.BENCH_AUDIT_EVENTS ?? 200_000)
const WRITES = Number(process.env.BENCH_AUDIT_WRITES ?? 6000)
const WRITE_RUNS = Number(process.env.BENCH_AUDIT_RUNS ?? 3)
const CONNECTIONS = Number(process.env.BENCH_AUDIT_CONNECTIONS ?? 10)
const WORKSPACES = 200
const TOKEN = 'bench-audit-organization-token'
const QUIET = 'bench-quiet-organization-token'
const base = `http://127.0.0.1:${PORT}`
const TRAIL = `${base}/api/v2/organization/audit-trail`

function world () {
  return {
    organizations: [
      {
        id: 'org-audit',
        name: 'audit',
        tokens: [TOKEN],
        teams: Array.from({ length: WORKSPACES }, (_, i) => ({ id: `team-a${i}`, name: `a${i}` })),
        workspaces: Array.from({ length: WORKSPACES }, (_, i) => ({ id: `ws-a${i}`, name: `a${i}` })),
        'team-access': Array.from({ length: WORKSPACES }, (_, i) => ({ id: `tws-a${i}`, team: `a${i}`, workspace: `a${i}`, access: 'custom', runs: 'plan' }))
      },
      {
        id: 'org-quiet',
        name: 'quiet',
        tokens: [QUIET],
        teams: [{ id: 'team-quiet', name: 'quiet', visibility: 'organization' }],
        workspaces: [{ id: 'ws-quiet', name: 'quiet' }],
        'team-access': [{ team: 'quiet', workspace: 'quiet', access: 'write' }]
      }
    ]
  }
}

/** The events, 1,000 per statement, stamped by the database as any event is. */
function eventsSql (): string[] {
  const CHUNK = 1000
  return Array.from({ length: Math.ceil(EVENTS / CHUNK) }, (_, c) => `
    insert into audit_events (organization_id, accessor_kind, accessor_id, accessor_description, request_id, action, workspace_id, team_id, team_name, permissions)
    select 'org-audit', 'organization', 'org-audit', 'audit', 'bench-' || i, 'update_team_permissions', 'ws-a' || (i % ${WORKSPACES}), 'team-a' || (i % ${WORKSPACES}),
      'a' || (i % ${WORKSPACES}), 'access=custom runs=' || case when i % 2 = 0 then 'apply' else 'plan' end || ' variables=none state-versions=none sentinel-mocks=none workspace-locking=false run-tasks=false policy-overrides=false'
    from generate_series(${c * CHUNK}, ${Math.min(EVENTS, (c + 1) * CHUNK) - 1}) as i
    order by i`)
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}

async function get (url: string, token: string): Promise<{ ms: number, body: any }> {
  const began = performance.now()
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  const body = await res.json()
  const ms = performance.now() - began
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`)
  return { ms, body }
}

/** One request at a time, at most one per `everyMs`: 3 to warm up, then at least `minRequests` and `minMs` of them. */
async function latency (url: string, token: string, minRequests = 30, minMs = 4000, everyMs = 0): Promise<{ p50: number, p99: number, n: number }> {
  for (let i = 0; i < 3; i++) await get(url, token)
  const samples: number[] = []
  const began = Date.now()
  while (samples.length < minRequests || Date.now() - began < minMs) {
    const { ms } = await get(url, token)
    samples.push(ms)
    if (everyMs > ms) await new Promise((resolve) => setTimeout(resolve, everyMs - ms))
  }
  return { p50: quantile(samples, 0.5), p99: quantile(samples, 0.99), n: samples.length }
}

async function writes (): Promise<{ rps: number, p50: number, p99: number, errors: number }> {
  let next = 0
  const began = performance.now()
  let last = began
  const result = await new Promise<Result>((resolve, reject) => {
    const instance = autocannon({
      url: base,
      connections: CONNECTIONS,
      amount: WRITES,
      requests: [{
        method: 'PATCH',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/vnd.api+json' },
        setupRequest: (request: any) => {
          const n = next++
          const k = n % WORKSPACES
          // each pass flips runs on every row: every request is a change, and records an event
          const runs = Math.floor(n / WORKSPACES) % 2 === 0 ? 'apply' : 'plan'
          return { ...request, path: `/api/v2/team-workspaces/tws-a${k}`, body: JSON.stringify({ data: { attributes: { runs } } }) }
        }
      }]
    } as unknown as Options, (err, done) => { if (err) reject(err); else resolve(done) })
    instance.on('response', () => { last = performance.now() })
  })
  return { rps: result.requests.total / ((last - began) / 1000), p50: result.latency.p50, p99: result.latency.p99, errors: result.non2xx + result.errors + result.timeouts }
}

const fmt = (n: number) => n.toFixed(n < 10 ? 2 : 1)

/**
 * The quiet organization's owner reads its own small list 20 times a second, alone and then
 * beside 8 readers of `audit` reading `deepUrl` as fast as they are answered (a 429 or 503 is an
 * answer too).
 */
async function starvation (deepUrl: string): Promise<string> {
  const victimUrl = `${base}/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-quiet`
  const alone = await latency(victimUrl, QUIET, 80, 4000, 50)
  const state = { stop: false, pages: 0, refused: 0 }
  const readers = Array.from({ length: 8 }, async () => {
    while (!state.stop) {
      const res = await fetch(deepUrl, { headers: { authorization: `Bearer ${TOKEN}` } })
      await res.arrayBuffer()
      if (res.status === 200) state.pages++
      else state.refused++
    }
  })
  await new Promise((resolve) => setTimeout(resolve, 500))
  const during = await latency(victimUrl, QUIET, 120, 6000, 50)
  state.stop = true
  await Promise.all(readers)
  const line = `${fmt(alone.p50)} ms alone, ${fmt(during.p50)} ms beside 8 readers of a deep page (p99 ${fmt(alone.p99)} → ${fmt(during.p99)} ms; ${state.pages} deep pages served, ${state.refused} refused meanwhile)`
  console.log(`starvation: ${line}`)
  return line
}

async function main (): Promise<void> {
  await assertPortFree(PORT)
  const work = mkdtempSync(join(tmpdir(), 'bench-audit-'))
  const seedFile = join(work, 'seed.json')
  writeFileSync(seedFile, JSON.stringify(world()))
  const database = `team_access_bench_audit_${process.pid}`
  const admin = new pg.Client({ connectionString: ADMIN_URL })
  await admin.connect()
  await admin.query(`create database ${database}`)
  const url = new URL(ADMIN_URL)
  url.pathname = `/${database}`
  const env = { DATABASE_URL: url.toString(), SEED_FILE: seedFile, PORT: String(PORT), HOST: '127.0.0.1', LOG_LEVEL: 'warn', AUDIT_RETENTION_DAYS: '0' }
  let service = start(SERVER, { ...env, RATE_LIMIT: '0', CALLER_CONCURRENCY: '0' })
  try {
    await waitFor(`${base}/readyz`, 600_000)
    console.log(`service: ${SERVER} on ${database}`)
    const db = new pg.Client({ connectionString: url.toString() })
    db.on('error', () => {}) // the database is dropped at the end, whatever happened
    await db.connect()
    // the service's tables: in its schema, or in public for a checkout from before it had one
    await db.query('set search_path to team_access, public')
    const loading = performance.now()
    for (const statement of eventsSql()) await db.query(statement)
    await db.query('vacuum analyze audit_events')
    console.log(`${EVENTS.toLocaleString('en-US')} events in ${((performance.now() - loading) / 1000).toFixed(1)} s`)
    await db.end()

    const first = (await get(`${TRAIL}?page%5Bsize%5D=1`, TOKEN)).body
    const total: number = first.pagination.total_count
    const lastPage = Math.ceil(total / 1000)
    // the deepest page of a full 1000 events (the last one may hold fewer)
    const deepest = Math.floor(total / 1000)
    const middle = Math.ceil(lastPage / 2)
    const sinceAt = (await get(`${TRAIL}?page%5Bsize%5D=1&page%5Bnumber%5D=${Math.floor(total / 2)}`, TOKEN)).body.data[0].timestamp as string
    console.log(`the trail: ${total.toLocaleString('en-US')} events, ${lastPage} pages of 1000`)

    const pages: Array<[string, string]> = [
      ['page 1', `${TRAIL}?page%5Bsize%5D=1000`],
      [`page ${middle} (middle)`, `${TRAIL}?page%5Bsize%5D=1000&page%5Bnumber%5D=${middle}`],
      [`page ${deepest} (deepest full page)`, `${TRAIL}?page%5Bsize%5D=1000&page%5Bnumber%5D=${deepest}`],
      [`page ${lastPage} (last)`, `${TRAIL}?page%5Bsize%5D=1000&page%5Bnumber%5D=${lastPage}`],
      [`since the middle, page ${lastPage - middle}`, `${TRAIL}?page%5Bsize%5D=1000&page%5Bnumber%5D=${lastPage - middle}&since=${encodeURIComponent(sinceAt)}`]
    ]
    const measured: Array<{ name: string, p50: number, p99: number, n: number }> = []
    for (const [name, pageUrl] of pages) {
      const row = { name, ...await latency(pageUrl, TOKEN) }
      measured.push(row)
      console.log(`  ${name}: p50 ${fmt(row.p50)} ms, p99 ${fmt(row.p99)} ms (${row.n} requests)`)
    }

    const unlimited = await starvation(pages[2]![1])
    const writeRuns = []
    for (let i = 0; i < WRITE_RUNS; i++) {
      const run = await writes()
      writeRuns.push(run)
      console.log(`  writes, run ${i + 1}: ${run.rps.toFixed(0)}/s, p50 ${run.p50} ms, p99 ${run.p99} ms${run.errors > 0 ? `, ${run.errors} errors` : ''}`)
    }
    const median = (values: number[]) => quantile(values, 0.5)
    const after = (await get(`${TRAIL}?page%5Bsize%5D=1`, TOKEN)).body.pagination.total_count as number

    const [p1, , deep] = measured
    await stop(service)
    // the same, with the limits every caller has by default (RATE_LIMIT, CALLER_CONCURRENCY)
    service = start(SERVER, env)
    await waitFor(`${base}/readyz`, 600_000)
    const limited = await starvation(pages[2]![1])
    console.log(`
| audit trail, ${total.toLocaleString('en-US')} events, PostgreSQL | p50 ms | p99 ms |
|---|---:|---:|
${measured.map((r) => `| ${r.name} | ${fmt(r.p50)} | ${fmt(r.p99)} |`).join('\n')}

deepest page / page 1, p50: ${(deep!.p50 / p1!.p50).toFixed(2)} (target ≤ 3)
quiet caller's p50 (no rate limit, no per-caller cap): ${unlimited}
quiet caller's p50 (the service's default limits): ${limited}
concurrent writes (${CONNECTIONS} connections, one organization, ${WRITES} per run, median of ${WRITE_RUNS}): ${median(writeRuns.map((r) => r.rps)).toFixed(0)}/s, p50 ${median(writeRuns.map((r) => r.p50))} ms, p99 ${median(writeRuns.map((r) => r.p99))} ms; ${(after - total).toLocaleString('en-US')} events recorded for ${(WRITES * WRITE_RUNS).toLocaleString('en-US')} writes`)
  } finally {
    await stop(service)
    await admin.query(`drop database if exists ${database} with (force)`)
    await admin.end()
    rmSync(work, { recursive: true, force: true })
  }
}

await main()
