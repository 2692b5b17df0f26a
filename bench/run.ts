/**
 * `npm run bench`: the service against the floors of its own design, on the machine's PostgreSQL,
 * once on embedded PGlite, and the embedded default's start. Loads the dataset of bench/dataset.ts
 * through the seed format (and its 100,000-row workspace by bulk SQL on PostgreSQL), drives each
 * operation with autocannon (fixed connections, a warm-up, then a run of a fixed number of
 * requests sized to last about BENCH_DURATION), measures the floors in the same run, prints the
 * tables and the targets (met / NOT met), and writes BENCHMARKS.md.
 *
 * Settings: BENCH_DATABASE_URL (an admin URL of the server, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_DURATION (s, default 8), BENCH_WARMUP (s, default 2), BENCH_CONNECTIONS (default 10),
 * BENCH_PORT (the first of four consecutive ports, default 3110), BENCH_SKIP_PGLITE=1 to leave out
 * the PGlite table (the embedded start is measured all the same), BENCH_START_RUNS (embedded
 * starts, default 3).
 * BENCH_SERVER=/abs/path/dist/src/server.js measures another checkout's service against this
 * checkout's floors and dataset (e.g. a branch whose audit trail is not merged here yet); its
 * schema must have this checkout's columns, which the page floor reads.
 * BENCH_BASELINE=DIR (another checkout, built with `npm ci && npm run build`) adds a side-by-side
 * section: that checkout's service and this one on the same database, each scenario driven on
 * both, alternating, BENCH_SIDE_BY_SIDE_ROUNDS times (default 3), compared by their medians (the
 * rows issue 23 added are left out of it).
 *
 * Issue 23's parts: CPU per request (bench/cpu.ts) of every row, its table beside the floors';
 * a regenerated-away token's first request (bench/revoked-token.ts; BENCH_REVOKED_ROUNDS, default
 * 200); the host's check path in process (bench/host-check.ts; BENCH_HOST_SECONDS, default 2,
 * BENCH_HOST_ROUNDS, default 3; BENCH_PLUGIN=/abs/path/dist/src/index.js measures another build's
 * plugin); the access set (bench/access-set-measure.ts, the code of `npm run bench:access-set`;
 * ACCESS_SET_REQUESTS, default 100 here); a 1,000-team seed with 100 removals and its dry run
 * (bench/seed-apply.ts; BENCH_SEED_ROUNDS, default 3, BENCH_SEED_ROUNDS_PGLITE, default 1).
 *
 * Issue 33's comparison (measureProjects): the same world with projects and without, each its own
 * database, service and floors, the show, page and host-check ratios taken round by round
 * (BENCH_PROJECT_ROUNDS, default 3) on ports BENCH_PORT + 5 … + 8.
 *
 * Parts of the run: BENCH_ONLY=postgres,revoked,host-check,projects,pglite,access-set,seed,embedded (any of
 * them; all when unset) and BENCH_ROWS=floor:read,show-owner,… (the table rows by key). A partial
 * run prints its report and leaves BENCHMARKS.md alone (BENCH_WRITE=1 writes it all the same).
 * Each part's time is printed and given in BENCHMARKS.md.
 */
import autocannon, { type Options, type Result } from 'autocannon'
import type { ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { cpus, totalmem, tmpdir, platform, release } from 'node:os'
import { join } from 'node:path'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { connect, preparedStatements } from '../src/db/connect.js'
import { migrate } from '../src/db/migrate.js'
import { applySeed, type SeedDocument } from '../src/directory/seed.js'
import { projectFile } from '../src/project-file.js'
import { dataset, hostCheckDataset, largeWorkspaceSql, LARGE, ORG_TOKEN, PROJECTS, TEAMS, userToken } from './dataset.js'
import { countDatabase, cpuMark, perRequest, type CpuMark } from './cpu.js'
import { accessSetSection } from './access-set-measure.js'
import { measureHostCheck, MANY, type HostCheckRow, type HostCheckTarget } from './host-check.js'
import { measureRevokedFirstRequest, type RevokedSamples } from './revoked-token.js'
import { measureSeed, SEED_REMOVED, SEED_TEAMS, type SeedTimes } from './seed-apply.js'
import { assertPortFree, start, stop, throwawayDatabase, waitFor } from './processes.js'

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const DURATION = Number(process.env.BENCH_DURATION ?? 8)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const START_RUNS = Number(process.env.BENCH_START_RUNS ?? 3)
const PORT = Number(process.env.BENCH_PORT ?? 3110)
const SERVICE_PORT = PORT
const FLOOR_PORT = PORT + 1
const BASELINE_PORT = PORT + 2
const EMBEDDED_PORT = PORT + 3
const BASELINE = process.env.BENCH_BASELINE
const SIDE_BY_SIDE_ROUNDS = Number(process.env.BENCH_SIDE_BY_SIDE_ROUNDS ?? 3)
/** The service measured: this checkout's, or another's built entry (an absolute path). */
const SERVER = process.env.BENCH_SERVER ?? 'dist/src/server.js'
const AUDIT_TRAIL = '/api/v2/organization/audit-trail'
/** Parts of the run to do (a comma-separated list of SECTIONS; all when unset): a partial run prints, and writes BENCHMARKS.md only with BENCH_WRITE=1. */
/** The line after which BENCHMARKS.md holds what other commands measured (kept by every run). */
const KEPT = '<!-- Below: measured with other commands (each section says which); `npm run bench` keeps it as it is. -->'

const SECTIONS = ['postgres', 'revoked', 'host-check', 'projects', 'pglite', 'access-set', 'seed', 'embedded'] as const
type SectionName = typeof SECTIONS[number]
const ONLY = process.env.BENCH_ONLY?.split(',').map((name) => name.trim()).filter((name) => name !== '')
for (const name of ONLY ?? []) if (!(SECTIONS as readonly string[]).includes(name)) throw new Error(`BENCH_ONLY: no section ${name} (${SECTIONS.join(', ')})`)
const doing = (name: SectionName): boolean => ONLY === undefined || ONLY.includes(name)
/** Rows of the tables to drive, by key (floor:read, show-owner, …; all when unset). */
const ROWS = process.env.BENCH_ROWS?.split(',').map((key) => key.trim()).filter((key) => key !== '')
const selected = (key: string): boolean => ROWS === undefined || ROWS.includes(key)
const PARTIAL = ONLY !== undefined || ROWS !== undefined
/** The host's check path: seconds of each measured run, rounds, calls in flight. */
const HOST_SECONDS = Number(process.env.BENCH_HOST_SECONDS ?? 2)
const HOST_ROUNDS = Number(process.env.BENCH_HOST_ROUNDS ?? 3)
const HOST_CONCURRENCY = 16
/** The reference SELECT's row: on ws-small-1, in the whole dataset and in the host check's part of it. */
const HOST_ROW = 'tws-s1-5'
/** The revoked token's first request: measured rounds. */
const REVOKED_ROUNDS = Number(process.env.BENCH_REVOKED_ROUNDS ?? 200)
/** The seed's timed rounds. */
const SEED_ROUNDS = Number(process.env.BENCH_SEED_ROUNDS ?? 3)
/** On PGlite, where a round takes about 30 s on this machine: one by default. */
const SEED_ROUNDS_PGLITE = Number(process.env.BENCH_SEED_ROUNDS_PGLITE ?? 1)
/** The access set's rounds (as ACCESS_SET_REQUESTS of bench:access-set, whose own default is 200: 100 here, to keep the run short). */
const ACCESS_SET_REQUESTS = Number(process.env.ACCESS_SET_REQUESTS ?? 100)
const ACCESS_SET_PORT = PORT + 4

/**
 * How the service runs under the bench: no rate limit and no per-caller cap (the bench is one
 * caller on many connections: the cap would make most of them wait their turn), warnings only.
 */
const SERVICE_ENV = { HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT: '0', CALLER_CONCURRENCY: '0' }

type FloorKey = 'read' | 'update' | 'insertDelete' | 'page'
/** The floors measured (all of them, unless BENCH_ROWS leaves some out). */
type Floors = Partial<Record<FloorKey, Row>>

interface Scenario {
  /** What other rows compare with. */
  key: string
  name: string
  /** The ratio of this row's req/s to a floor's (floor:…) or to another row's (its key); a target, with the issue that set it. */
  compare?: { with: `floor:${FloorKey}` | string, label: string, target?: number, issue?: number }
  /** Counts cycles of two requests (POST + DELETE), not requests. */
  cycle?: boolean
  /** Only on PostgreSQL (the 100,000 rows are loaded by SQL there; issue 23's directory writes, to keep the run short). */
  postgresOnly?: boolean
  /** Left out of the side-by-side section (BENCH_BASELINE): rows added after it, to keep its run short. */
  sideBySide?: boolean
  /** Counts the audit events the row's run records, where the service keeps an audit trail. */
  countsAuditEvents?: boolean
  options: { path?: string, method?: Options['method'], headers?: Record<string, string>, body?: string, requests?: Options['requests'] }
}

interface Row {
  key: string
  name: string
  rps: number
  p50: number
  p99: number
  rssMb: number
  errors: number
  /** CPU per request of the measured run, ms: the server process's (node) and the PostgreSQL server's (pg). */
  cpu?: CpuMark
  /** Answers 2xx over the probe, the warm-up and the run. */
  succeeded: number
  ratio?: number
  compareLabel?: string
  target?: number
  issue?: number
  note?: string
}

const owner = { authorization: `Bearer ${ORG_TOKEN}` }
const member = { authorization: `Bearer ${userToken(7)}` }
const jsonapi = { 'content-type': 'application/vnd.api+json' }
const list = (ws: string, page = '') => `/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=${ws}${page}`
const page100 = (n: number) => `&page%5Bnumber%5D=${n}&page%5Bsize%5D=100`

function scenarios (audit: boolean): Scenario[] {
  // teams 10000.. have no rows on small workspaces: each cycle borrows a (team, small workspace)
  // pair and gives it back after its DELETE (autocannon's context lives for one POST + DELETE
  // sequence only); pairs on different workspaces, as adds by different people usually are
  // (one workspace's adds and removes queue on its row-count row)
  const free = Array.from({ length: 200 }, (_, i) => ({ team: `team-${10_000 + i}`, workspace: `ws-small-${i}` }))
  // updates go round the first row of each small workspace (custom or plan: runs=plan is valid on both)
  let nextRow = 0
  // the audited writes go round one custom row of each small workspace (row 4 of the even ones,
  // row 2 of the odd ones) and flip runs between plan and apply on each pass: every request is a change
  let nextAudited = 0
  const audited = (n: number) => {
    const k = n % 200
    return { path: `/api/v2/team-workspaces/tws-s${k}-${k % 2 === 0 ? 4 : 2}`, runs: Math.floor(n / 200) % 2 === 0 ? 'apply' : 'plan' }
  }
  const readFloor = { with: 'floor:read', label: 'one-row floor' }
  const writeFloor = { with: 'floor:update', label: 'write floor (one-row UPDATE)' }
  /** One of issue 23's writes of the directory: one request, set up anew each time (a real change), against the write floor, on PostgreSQL only. */
  const directoryWrite = (key: string, name: string, request: Record<string, unknown>): Scenario =>
    ({ key, name, compare: writeFloor, sideBySide: false, postgresOnly: true, options: { requests: [request] as any } })
  let nextTeam = 0
  let nextMember = 0
  let nextToken = 0
  return [
    { key: 'show-member', name: 'show, as a member', compare: { ...readFloor, target: 0.75, issue: 23 }, options: { path: '/api/v2/team-workspaces/tws-s0-7', headers: member } },
    { key: 'show-owner', name: 'show, as an owner', compare: { ...readFloor, target: 0.75, issue: 23 }, options: { path: '/api/v2/team-workspaces/tws-h-5000', headers: owner } },
    { key: 'list-50', name: 'list 50 rows, unpaginated', options: { path: list('ws-small-1'), headers: owner } },
    { key: 'page5-1k', name: 'list page 5 of 100 at 1,000 rows', options: { path: list('ws-mid', page100(5)), headers: owner } },
    { key: 'page5-10k', name: 'list page 5 of 100 at 10,000 rows', compare: { with: 'page5-1k', label: 'page 5 at 1,000 rows', target: 0.8, issue: 5 }, options: { path: list('ws-huge', page100(5)), headers: owner } },
    { key: 'page5-100k', name: 'list page 5 of 100 at 100,000 rows', postgresOnly: true, compare: { with: 'page5-1k', label: 'page 5 at 1,000 rows', target: 0.9, issue: 13 }, options: { path: list('ws-large', page100(5)), headers: owner } },
    { key: 'page50-10k', name: 'list page 50 of 100 at 10,000 rows (deep)', compare: { with: 'floor:page', label: 'page floor, same page', target: 0.8, issue: 23 }, options: { path: list('ws-huge', page100(50)), headers: owner } },
    { key: 'page5-10k-member', name: 'list page 5 of 100 at 10,000 rows, as a member', compare: { with: 'page5-10k', label: "an owner's same page", target: 0.9, issue: 23 }, options: { path: list('ws-huge', page100(5)), headers: member } },
    {
      key: 'update',
      name: 'update',
      compare: { with: 'floor:update', label: 'write floor (one-row UPDATE)', target: 0.8, issue: 13 },
      options: {
        requests: [{
          method: 'PATCH',
          headers: { ...owner, ...jsonapi },
          body: JSON.stringify({ data: { attributes: { runs: 'plan' } } }),
          setupRequest: (request: any) => ({ ...request, path: `/api/v2/team-workspaces/tws-s${nextRow++ % 200}-0` })
        }] as any
      }
    },
    {
      key: 'add-remove',
      name: 'add + remove cycle',
      compare: { with: 'floor:insertDelete', label: 'insert + delete floor', target: 0.6, issue: 13 },
      cycle: true,
      options: {
        requests: [
          {
            method: 'POST',
            path: '/api/v2/team-workspaces',
            headers: { ...owner, ...jsonapi },
            setupRequest: (request: any, context: any) => {
              context.pair = free.shift()
              return { ...request, body: JSON.stringify({ data: { type: 'team-workspaces', attributes: { access: 'write' }, relationships: { team: { data: { type: 'teams', id: context.pair.team } }, workspace: { data: { type: 'workspaces', id: context.pair.workspace } } } } }) }
            },
            onResponse: (_status: number, body: string, context: any) => { context.id = JSON.parse(body).data?.id }
          },
          {
            method: 'DELETE',
            headers: owner,
            setupRequest: (request: any, context: any) => ({ ...request, path: `/api/v2/team-workspaces/${context.id}` }),
            onResponse: (_status: number, _body: string, context: any) => { free.push(context.pair) }
          }
        ] as any
      }
    },
    {
      key: 'audit-write',
      name: 'audit event write: an update that changes a permission',
      compare: { with: 'floor:update', label: 'write floor (one-row UPDATE)' },
      countsAuditEvents: true,
      options: {
        requests: [{
          method: 'PATCH',
          headers: { ...owner, ...jsonapi },
          setupRequest: (request: any) => {
            const { path, runs } = audited(nextAudited++)
            return { ...request, path, body: JSON.stringify({ data: { attributes: { runs } } }) }
          }
        }] as any
      }
    },
    { key: 'workspace-show', name: 'workspace: show by id', compare: readFloor, options: { path: '/api/v2/workspaces/ws-small-3', headers: owner } },
    { key: 'workspace-by-name', name: 'workspace: show by organization and name', compare: readFloor, options: { path: '/api/v2/organizations/bench/workspaces/small3', headers: owner } },
    { key: 'workspace-list', name: 'workspaces: list, page 1 (20 of 204)', options: { path: '/api/v2/organizations/bench/workspaces', headers: owner } },
    { key: 'team-show', name: 'team: show by id', compare: readFloor, options: { path: '/api/v2/teams/team-5000', headers: owner } },
    { key: 'team-filter', name: 'teams: list, filter[names] of 2 teams', options: { path: '/api/v2/organizations/bench/teams?filter%5Bnames%5D=team5000%2Cteam42', headers: owner } },
    // issue 23's writes of the directory, each request a real change, against the write floor
    directoryWrite('team-create', 'team: create', {
      method: 'POST',
      path: '/api/v2/organizations/bench/teams',
      headers: { ...owner, ...jsonapi },
      setupRequest: (request: any) => ({ ...request, body: JSON.stringify({ data: { type: 'teams', attributes: { name: `made-${nextTeam++}` } } }) })
    }),
    directoryWrite('member-add', 'team: add a member', {
      method: 'POST',
      headers: { ...owner, ...jsonapi },
      setupRequest: (request: any) => {
        // teams 6000 … 10499 have no members in the dataset: every (team, user) pair is new
        const n = nextMember++
        return { ...request, path: `/api/v2/teams/team-${6000 + n % 4500}/relationships/users`, body: JSON.stringify({ data: [{ type: 'users', id: `user${Math.floor(n / 4500) % 2000}` }] }) }
      }
    }),
    directoryWrite('token-create', "token: create (regenerate a team's token)", {
      method: 'POST',
      headers: owner,
      // 200 teams in turn (not the one the 401 measure uses): each request creates one token and revokes the one before it
      setupRequest: (request: any) => ({ ...request, path: `/api/v2/teams/team-${6000 + nextToken++ % 200}/authentication-token` })
    }),
    ...(audit ? [{ key: 'audit-read', name: 'audit trail: read page 1 (100 events)', options: { path: `${AUDIT_TRAIL}?page%5Bsize%5D=100`, headers: owner } }] : [])
  ]
}

const floors: Record<FloorKey, Scenario> = {
  read: { key: 'floor:read', name: 'floor: one primary-key SELECT', options: { path: '/floor/read/tws-h-5000' } },
  update: (() => {
    let next = 0
    return { key: 'floor:update', name: 'floor: one primary-key UPDATE (the write floor)', options: { requests: [{ method: 'POST', setupRequest: (request: any) => ({ ...request, path: `/floor/update/tws-s${next++ % 200}-0` }) }] as any } }
  })(),
  insertDelete: { key: 'floor:insertDelete', name: 'floor: one INSERT + one DELETE', options: { method: 'POST', path: '/floor/write' } },
  page: { key: 'floor:page', name: 'floor: naive page 50 of 100 at 10,000 rows (OFFSET + count)', options: { path: '/floor/page/ws-huge/50' } }
}

const procStatusMb = (pid: number, field: 'VmRSS' | 'VmHWM'): number => {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) / 1024 : 0
}
const rssMb = (pid: number): number => procStatusMb(pid, 'VmRSS')

/**
 * One autocannon run of a fixed number of requests, spread evenly over the connections (whole
 * cycles for a cycle): each connection stops after the answer to its last request, so no request
 * is ever cut off in flight. (A run by duration destroys its connections at the deadline with
 * requests in flight; the service's admission queue does not get back the turns of some of
 * those, and after a few runs it answers every request 503.) Requests per second are the
 * answers over the time from the start to the last answer.
 */
async function runFor (url: string, scenario: Scenario, amount: number): Promise<{ result: Result, rps: number, seconds: number }> {
  const { path: _path, ...options } = scenario.options
  const began = performance.now()
  let last = began
  const result = await new Promise<Result>((resolve, reject) => {
    const instance = autocannon({ url, connections: CONNECTIONS, amount, ...options } as Options, (err, done) => { if (err) reject(err); else resolve(done) })
    instance.on('response', () => { last = performance.now() })
  })
  const seconds = Math.max(last - began, 1) / 1000
  return { result, rps: result.requests.total / seconds, seconds }
}

/** A whole number of requests per connection (of cycles, for a cycle) near `rps` × `seconds`. */
function amountFor (scenario: Scenario, rps: number, seconds: number): number {
  const unit = CONNECTIONS * (scenario.cycle ? 2 : 1)
  return Math.max(1, Math.round(rps * seconds / unit)) * unit
}

async function drive (base: string, scenario: Scenario, pid: number): Promise<Row> {
  const url = `${base}${scenario.options.path ?? ''}`
  const earlier: Result[] = []
  // a few requests to gauge the rate, then warm-up runs, each sized from the rate of the one
  // before, until WARMUP seconds have passed (a rate gauged cold is low)
  const probe = await runFor(url, scenario, amountFor(scenario, 0, 0) * 5)
  earlier.push(probe.result)
  let rate = probe.rps
  let warmed = 0
  for (let i = 0; i < 5 && warmed < WARMUP; i++) {
    const warm = await runFor(url, scenario, amountFor(scenario, rate, Math.max(WARMUP - warmed, 0.5)))
    earlier.push(warm.result)
    warmed += warm.seconds
    rate = warm.rps
  }
  // the measured run, sized from the last rate; a run over in under 60 % of DURATION was sized from
  // a rate still rising: it counts as warm-up, and the run is sized again (twice at most)
  let peak = 0
  const sampler = setInterval(() => { peak = Math.max(peak, rssMb(pid)) }, 200)
  let mark = cpuMark(pid)
  let measured = await runFor(url, scenario, amountFor(scenario, rate, DURATION))
  for (let i = 0; i < 2 && measured.seconds < 0.6 * DURATION; i++) {
    earlier.push(measured.result)
    peak = 0
    mark = cpuMark(pid)
    measured = await runFor(url, scenario, amountFor(scenario, measured.rps, DURATION))
  }
  // CPU per request (per request, not per cycle: a cycle's two requests count as two)
  const cpu = perRequest(pid, mark, measured.result.requests.total)
  const { result, rps: requestRate, seconds } = measured
  clearInterval(sampler)
  peak = Math.max(peak, rssMb(pid))
  const rps = scenario.cycle ? requestRate / 2 : requestRate
  const errors = result.non2xx + result.errors + result.timeouts
  const statuses = Object.entries(result.statusCodeStats ?? {}).filter(([code]) => !code.startsWith('2')).map(([code, { count }]) => `${code} × ${count ?? 0}`)
  const succeeded = [...earlier, result].reduce((n, r) => n + r.requests.total - r.non2xx, 0)
  const row: Row = { key: scenario.key, name: scenario.cycle ? `${scenario.name} (cycles/s)` : scenario.name, rps, p50: result.latency.p50, p99: result.latency.p99, rssMb: peak, errors, succeeded, cpu, ...(statuses.length > 0 ? { note: `answers ${statuses.join(', ')}` } : {}) }
  console.log(`  ${row.name}: ${rps.toFixed(0)} req/s over ${seconds.toFixed(1)} s, p50 ${row.p50} ms, p99 ${row.p99} ms, rss ${peak.toFixed(0)} MB, CPU/request node ${cpu.node.toFixed(3)} ms pg ${cpu.pg.toFixed(3)} ms${errors ? `, ${errors} errors${statuses.length > 0 ? ` (${statuses.join(', ')})` : ''}` : ''}`)
  return row
}

/** The audit trail's event count, or undefined when the service has no audit trail (the route answers 404). */
async function auditEvents (base: string): Promise<number | undefined> {
  const response = await fetch(`${base}${AUDIT_TRAIL}?page%5Bsize%5D=1`, { headers: owner })
  if (response.status !== 200) return undefined
  const body = await response.json() as { pagination?: { total_count?: number }, meta?: { pagination?: { 'total-count'?: number } } }
  return body.pagination?.total_count ?? body.meta?.pagination?.['total-count'] ?? 0
}

/** Ratios of each row to its floor or to another row of the same table; targets only where floors exist (PostgreSQL). */
function compare (rows: Row[], all: Scenario[], floorRows: Floors | undefined): void {
  for (const row of rows) {
    const scenario = all.find((s) => s.key === row.key)
    const compared = scenario?.compare
    if (compared === undefined) continue
    const other = compared.with.startsWith('floor:')
      ? floorRows?.[compared.with.slice('floor:'.length) as FloorKey]
      : rows.find((r) => r.key === compared.with)
    if (other === undefined) continue
    row.ratio = row.rps / other.rps
    row.compareLabel = compared.label
    if (floorRows !== undefined) {
      row.target = compared.target
      row.issue = compared.issue
    }
  }
}

async function measureService (engine: 'postgres' | 'pglite', env: Record<string, string>, floorRows: Floors | undefined, parts: { rows: boolean, revoked: boolean }): Promise<{ rows: Row[], startSeconds: number, audit: boolean, revoked?: RevokedSamples }> {
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
async function measureSideBySide (env: Record<string, string>, seedFile: string, url: string): Promise<string> {
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
async function bulkLoad (url: string): Promise<number> {
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

interface StartRun { firstSeconds: number, firstPeakMb: number, restartSeconds: number, restartPeakMb: number, rssAfterMb: number }

/** Starts the service until /readyz answers 200, polling every 20 ms; returns the seconds from spawn, and the process's peak and current RSS then. */
async function timedStart (env: Record<string, string>): Promise<{ child: ChildProcess, seconds: number, peakMb: number, rssMb: number }> {
  await assertPortFree(EMBEDDED_PORT)
  const began = performance.now()
  const child = start(SERVER, env)
  const until = began + 60_000
  while (performance.now() < until) {
    if (child.exitCode !== null) throw new Error(`the embedded service exited with ${child.exitCode} before it was ready`)
    try {
      if ((await fetch(`http://127.0.0.1:${EMBEDDED_PORT}/readyz`)).status === 200) {
        const seconds = (performance.now() - began) / 1000
        return { child, seconds, peakMb: procStatusMb(child.pid!, 'VmHWM'), rssMb: procStatusMb(child.pid!, 'VmRSS') }
      }
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  await stop(child)
  throw new Error('the embedded service was not ready within 60 s')
}

/**
 * The embedded default, as a person starts it: `node dist/src/server.js` with DATA_DIR a fresh
 * empty directory, no DATABASE_URL, no SEED_FILE, HOST=127.0.0.1 (so the demo data goes in on the
 * first start). First start, then a restart on the same DATA_DIR; each until /readyz answers 200.
 * Peak RSS is the process's VmHWM when it is ready; "RSS after" its VmRSS then, after the restart.
 */
async function measureEmbeddedStart (): Promise<StartRun[]> {
  const runs: StartRun[] = []
  for (let i = 0; i < START_RUNS; i++) {
    const dataDir = mkdtempSync(join(tmpdir(), 'team-access-bench-embedded-'))
    const env = { DATA_DIR: dataDir, DATABASE_URL: '', SEED_FILE: '', HOST: '127.0.0.1', PORT: String(EMBEDDED_PORT), LOG_LEVEL: 'warn' }
    try {
      const first = await timedStart(env)
      // the demo data is there: its owners can list its workspace
      const demo = await fetch(`http://127.0.0.1:${EMBEDDED_PORT}/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-DemoProduction01`, { headers: { authorization: 'Bearer acme-owners-demo-token' } })
      await stop(first.child)
      if (demo.status !== 200) throw new Error(`the demo data is not there after the first start (${demo.status})`)
      const restart = await timedStart(env)
      await stop(restart.child)
      const run = { firstSeconds: first.seconds, firstPeakMb: first.peakMb, restartSeconds: restart.seconds, restartPeakMb: restart.peakMb, rssAfterMb: restart.rssMb }
      console.log(`  embedded start ${i + 1}: first start ${run.firstSeconds.toFixed(2)} s (peak RSS ${run.firstPeakMb.toFixed(0)} MB), restart ${run.restartSeconds.toFixed(2)} s (peak RSS ${run.restartPeakMb.toFixed(0)} MB, ${run.rssAfterMb.toFixed(0)} MB when ready)`)
      runs.push(run)
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
  return runs
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN
}

const fixed = (n: number, digits = 2): string => Number.isFinite(n) ? n.toFixed(digits) : '–'

/**
 * CPU per request of the service and of the floor on the same rows (issue 23), from the measured
 * runs of the PostgreSQL table: "ratio" is the floor's CPU (Node + PostgreSQL) over the service's,
 * so that it reads as the req/s ratios do (1: as cheap as the floor).
 */
function cpuSection (rows: Row[], floorRows: Floors): string {
  const pairs: Array<{ name: string, service?: Row, floor?: Row }> = [
    { name: 'show, as an owner ÷ one-row floor', service: rows.find((r) => r.key === 'show-owner'), floor: floorRows.read },
    { name: 'show, as a member ÷ one-row floor', service: rows.find((r) => r.key === 'show-member'), floor: floorRows.read },
    { name: 'page 50 of 100 at 10,000 rows ÷ page floor', service: rows.find((r) => r.key === 'page50-10k'), floor: floorRows.page },
    { name: 'update ÷ write floor', service: rows.find((r) => r.key === 'update'), floor: floorRows.update }
  ]
  const ms = (n: number | undefined) => n === undefined ? '' : n.toFixed(3)
  const lines = pairs.filter((p) => p.service !== undefined || p.floor !== undefined).map(({ name, service, floor }) => {
    const total = (row: Row | undefined) => row?.cpu === undefined ? undefined : row.cpu.node + row.cpu.pg
    const [s, f] = [total(service), total(floor)]
    return `| ${name} | ${ms(service?.cpu?.node)} | ${ms(service?.cpu?.pg)} | ${ms(floor?.cpu?.node)} | ${ms(floor?.cpu?.pg)} | ${s !== undefined && f !== undefined && s > 0 ? (f / s).toFixed(2) : ''} |`
  })
  const others = rows.filter((r) => r.cpu !== undefined && !pairs.some((p) => p.service === r))
    .map((r) => `| ${r.name} | ${ms(r.cpu!.node)} | ${ms(r.cpu!.pg)} | | | |`)
  return `## CPU per request on PostgreSQL (issue 23)

The measured run of each row above: the CPU time the server's process used (Node: /proc/<pid>/stat
utime + stime, every thread) and PostgreSQL's (utime + stime of the backends serving the bench's
database, with the server's own processes: postmaster, checkpointer, background writer, WAL writer;
backends of other databases, other work on this shared server, are left out), after the run less
before it, over the run's requests (a cycle's two requests count as two). req/s on this shared
machine move by 2× from run to run; CPU per request is the steadier figure. **ratio** is the floor's CPU (Node + PostgreSQL) ÷
the service's: 1 is as cheap as the floor.

| request | service Node ms | service PG ms | floor Node ms | floor PG ms | ratio (floor ÷ service) |
|---|---:|---:|---:|---:|---:|
${[...lines, ...others].join('\n')}`
}

/** The host's check path: who asks (user 7, a member of 3 teams), on which workspace, and the reference SELECT through `tables` (the plugin's tables: in its schema on PostgreSQL). */
function hostTarget (tables: Kysely<any>): { select: () => Promise<unknown>, caller: unknown, workspaceId: string, workspaceIds: string[] } {
  const select = async () => await tables.selectFrom('team_workspaces').select(['id', 'access', 'runs']).where('id', '=', HOST_ROW).executeTakeFirstOrThrow()
  return { select, caller: { kind: 'user', userId: 'user-7' }, workspaceId: 'ws-small-0', workspaceIds: Array.from({ length: MANY }, (_, k) => `ws-small-${k}`) }
}

const hostOptions = () => ({ concurrency: HOST_CONCURRENCY, seconds: HOST_SECONDS, rounds: HOST_ROUNDS, warmup: Math.min(1, HOST_SECONDS) })

function hostCheckSection (engines: Array<{ engine: string, rows: HostCheckRow[] }>): string {
  const lines: string[] = []
  for (const { engine, rows } of engines) {
    const [select, single, many] = rows as [HostCheckRow, HostCheckRow, HostCheckRow]
    const rate = (row: HostCheckRow) => median(row.callsPerSecond)
    const cpu = (row: HostCheckRow) => `${fixed(median(row.nodeMs), 3)} | ${engine.startsWith('postgres') ? fixed(median(row.pgMs), 3) : 'in process'}`
    const each = (row: HostCheckRow) => row.callsPerSecond.map((n) => n.toFixed(0)).join(', ')
    lines.push(`| ${engine} | ${select.name} | ${rate(select).toFixed(0)} (${each(select)}) | | ${cpu(select)} | 1.00 |`)
    lines.push(`| ${engine} | ${single.name} | ${rate(single).toFixed(0)} (${each(single)}) | | ${cpu(single)} | ${(rate(single) / rate(select)).toFixed(2)} ÷ the SELECT |`)
    if (many.missing === true) lines.push(`| ${engine} | effectiveAccessMany | not in this build | | | |`)
    else lines.push(`| ${engine} | ${many.name} | ${rate(many).toFixed(0)} (${each(many)}) | ${(rate(many) * MANY).toFixed(0)} | ${cpu(many)} | ${(rate(many) * MANY / rate(single)).toFixed(2)} ÷ ${MANY} single calls |`)
  }
  return `## The host's check path, in process (issue 23)

The plugin (the package's default export, dist/src/index.js) registered into a bare Fastify app on
a Kysely the bench made — on PostgreSQL \`new Kysely({ dialect: new PostgresDialect({ pool }) })\` over
a pg Pool of ${HOST_CONCURRENCY} on the bench's database, once as it is and once wrapped with the package's
\`preparedStatements(pool)\` (every statement through it, the reference SELECT's too, parsed and planned once per connection); on PGlite the engine in memory, seeded with the part of
the dataset the calls read (the first ${MANY} small workspaces, their 2,500 rows, their teams and all users; the
whole takes about two minutes to seed there) — with ${HOST_CONCURRENCY} calls in flight for ${HOST_SECONDS} s each (BENCH_HOST_SECONDS), the three kinds alternating,
${HOST_ROUNDS} rounds (BENCH_HOST_ROUNDS): the median calls/s, each round in brackets. The caller is user 7 (a member of 3
teams), the workspace ws-small-0, where one of them holds access; the reference is one primary-key
SELECT of a team-workspace row through the same Kysely. effectiveAccessMany asks for ws-small-0 …
ws-small-${MANY - 1} in one call: its ratio is workspaces/s over single calls/s (${MANY} single calls answer as
much). CPU per call: this process's (process.cpuUsage: the plugin, the driver, and PGlite's engine)
and PostgreSQL's (as in "CPU per request").

| engine | call | calls/s, median (rounds) | workspaces/s | Node ms/call | PG ms/call | ratio |
|---|---|---:|---:|---:|---:|---|
${lines.join('\n')}`
}

/** Issue 33's comparison: rounds (BENCH_PROJECT_ROUNDS) of each world, alternating; the ports of the second world's service and floors. */
const PROJECT_ROUNDS = Number(process.env.BENCH_PROJECT_ROUNDS ?? 3)
const PROJECT_PORTS = [PORT + 5, PORT + 6, PORT + 7, PORT + 8] as const

/** One of the two worlds of issue 33's comparison: its database, its service and its floors, running. */
interface World {
  name: string
  projects: number
  database: string
  url: string
  service: ChildProcess
  base: string
  floor: ChildProcess
  floorBase: string
}

/**
 * A world with projects beside the same world without them (issue 33: "show, the member's page and
 * the host's check on a world with projects — each within 10 % of this turn's ratios"). Each world
 * is its own database, seeded from bench/dataset.ts (10 projects, or none), VACUUM ANALYZEd, with
 * its service and its floors running. Then, PROJECT_ROUNDS times, the worlds in turn (the first of
 * each round alternating): the one-row floor, the two shows, the owner's and the member's page 5 at
 * 10,000 rows; and the host's check on the plain pool, on preparedStatements(pool) and on PGlite.
 * Each ratio is taken within a round — the row and what it is compared with, measured one after
 * the other — and the median of the rounds is reported: on this shared machine a row's req/s moves
 * by 2× between runs, and a ratio of medians taken minutes apart moves with it.
 */
async function measureProjects (work: string): Promise<string> {
  const worlds: World[] = []
  const lites: Array<{ close: () => Promise<void> }> = []
  const pools: Array<Kysely<any>> = []
  const drops: Array<() => Promise<void>> = []
  try {
    // seeded side by side (each through the service's own start with SEED_FILE), then restarted
    await Promise.all([{ name: 'without projects', projects: 0 }, { name: 'with projects', projects: PROJECTS }].map(async ({ name, projects }, k) => {
      const database = `team_access_bench_projects${projects}_${process.pid}`
      const made = await throwawayDatabase(ADMIN_URL, database)
      drops.push(made.drop)
      const seedFile = join(work, `seed-projects${projects}.json`)
      writeFileSync(seedFile, JSON.stringify(dataset(projects)))
      const [servicePort, floorPort] = k === 0 ? [PROJECT_PORTS[0], PROJECT_PORTS[1]] : [PROJECT_PORTS[2], PROJECT_PORTS[3]]
      const env = { DATABASE_URL: made.url, ...SERVICE_ENV }
      const seeding = start(SERVER, { ...env, SEED_FILE: seedFile, PORT: String(servicePort) })
      try {
        await waitFor(`http://127.0.0.1:${servicePort}/readyz`, 900_000)
      } finally {
        await stop(seeding)
      }
      const client = new pg.Client({ connectionString: made.url })
      await client.connect()
      await client.query('vacuum analyze').finally(async () => await client.end())
      const service = start(SERVER, { ...env, PORT: String(servicePort) })
      const floor = start('dist/bench/floor-server.js', { DATABASE_URL: made.url, PORT: String(floorPort) })
      const world: World = { name, projects, database, url: made.url, service, base: `http://127.0.0.1:${servicePort}`, floor, floorBase: `http://127.0.0.1:${floorPort}` }
      worlds[k] = world
      await waitFor(`${world.base}/readyz`, 600_000)
      await waitFor(`${world.floorBase}/floor/read/x`, 30_000)
      console.log(`projects: the world ${name} seeded and running`)
    }))
    phaseDone('issue 33: two worlds seeded')

    const keys = ['show-member', 'show-owner', 'page5-10k', 'page5-10k-member'] as const
    const all = scenarios(false)
    const rows = new Map<World, Array<Record<string, Row>>>(worlds.map((w) => [w, []]))
    for (let round = 0; round < PROJECT_ROUNDS; round++) {
      for (const world of round % 2 === 0 ? worlds : [...worlds].reverse()) {
        countDatabase(world.database)
        const measured: Record<string, Row> = {}
        measured.floor = await drive(world.floorBase, { ...floors.read, name: `${world.name}, round ${round + 1}: ${floors.read.name}` }, world.floor.pid!)
        for (const key of keys) {
          const scenario = all.find((s) => s.key === key)!
          measured[key] = await drive(world.base, { ...scenario, name: `${world.name}, round ${round + 1}: ${scenario.name}` }, world.service.pid!)
        }
        rows.get(world)!.push(measured)
      }
    }
    phaseDone('issue 33: the rows, alternating')

    // the host's check: the same target as the host-check section, on each world's pools and on PGlite
    type Engine = { engine: string, world: World, target: HostCheckTarget }
    const engines: Engine[] = []
    for (const world of worlds) {
      for (const prepared of [false, true]) {
        const pool = new pg.Pool({ connectionString: world.url, max: HOST_CONCURRENCY })
        const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: prepared ? preparedStatements(pool) : pool }) })
        pools.push(db)
        engines.push({ engine: prepared ? 'postgres, preparedStatements(pool)' : 'postgres', world, target: { engine: 'postgres', db, ...hostTarget(db.withSchema('team_access')) } })
      }
      const lite = await connect({ dataDir: 'memory://' })
      lites.push(lite)
      await migrate(lite.db)
      await applySeed(lite.db, hostCheckDataset(MANY, world.projects) as unknown as SeedDocument)
      const db = lite.db as Kysely<any>
      engines.push({ engine: 'pglite', world, target: { engine: 'pglite', db, ...hostTarget(db) } })
    }
    const checkRatios = new Map<Engine, number[]>(engines.map((e) => [e, []]))
    for (let round = 0; round < PROJECT_ROUNDS; round++) {
      for (const world of round % 2 === 0 ? worlds : [...worlds].reverse()) {
        countDatabase(world.database)
        for (const e of engines.filter((x) => x.world === world)) {
          const [select, single] = await measureHostCheck(e.target, { ...hostOptions(), rounds: 1 }) as [HostCheckRow, HostCheckRow]
          checkRatios.get(e)!.push(single.callsPerSecond[0]! / select.callsPerSecond[0]!)
          console.log(`  ${world.name}, round ${round + 1}: the host's check, ${e.engine}: ${single.callsPerSecond[0]!.toFixed(0)} ÷ ${select.callsPerSecond[0]!.toFixed(0)} calls/s`)
        }
      }
    }
    phaseDone('issue 33: the host\'s check, alternating')

    // each ratio per round, then the median of the rounds
    const cpuOf = (row: Row) => row.cpu === undefined ? NaN : row.cpu.node + row.cpu.pg
    const measures: Array<{ what: string, of: (world: World) => number[] }> = [
      { what: 'show, as a member ÷ one-row floor (req/s)', of: (w) => rows.get(w)!.map((r) => r['show-member']!.rps / r.floor!.rps) },
      { what: 'show, as an owner ÷ one-row floor (req/s)', of: (w) => rows.get(w)!.map((r) => r['show-owner']!.rps / r.floor!.rps) },
      { what: 'show, as a member ÷ one-row floor (CPU, floor ÷ show)', of: (w) => rows.get(w)!.map((r) => cpuOf(r.floor!) / cpuOf(r['show-member']!)) },
      { what: 'show, as an owner ÷ one-row floor (CPU, floor ÷ show)', of: (w) => rows.get(w)!.map((r) => cpuOf(r.floor!) / cpuOf(r['show-owner']!)) },
      { what: "the member's page 5 of 100 at 10,000 rows ÷ the owner's (req/s)", of: (w) => rows.get(w)!.map((r) => r['page5-10k-member']!.rps / r['page5-10k']!.rps) },
      { what: "the member's page 5 of 100 at 10,000 rows ÷ the owner's (CPU, owner's ÷ member's)", of: (w) => rows.get(w)!.map((r) => cpuOf(r['page5-10k']!) / cpuOf(r['page5-10k-member']!)) },
      ...['postgres', 'postgres, preparedStatements(pool)', 'pglite'].map((engine) => ({
        what: `the host's effectiveAccess ÷ the one-row SELECT, ${engine === 'pglite' ? 'PGlite (in process)' : engine === 'postgres' ? 'PostgreSQL pool' : 'PostgreSQL, `preparedStatements(pool)`'}`,
        of: (w: World) => checkRatios.get(engines.find((e) => e.world === w && e.engine === engine)!)!
      }))
    ]
    const [without, withProjects] = worlds as [World, World]
    const each = (values: number[]) => values.map((v) => v.toFixed(2)).join(', ')
    const lines = measures.map(({ what, of }) => {
      const [a, b] = [of(without), of(withProjects)]
      const [ma, mb] = [median(a), median(b)]
      const change = mb / ma - 1
      const met = Math.abs(change) <= 0.1 || change > 0
      return `| ${what} | ${ma.toFixed(2)} (${each(a)}) | ${mb.toFixed(2)} (${each(b)}) | ${change >= 0 ? '+' : ''}${(change * 100).toFixed(0)} % | ${met ? 'met' : '**NOT met**'} |`
    })
    // the worlds side by side: each row's req/s and CPU per request with projects ÷ without, round by round
    const direct = ['floor', ...keys].map((key) => {
      const label = key === 'floor' ? floors.read.name : all.find((s) => s.key === key)!.name
      const pairs = rows.get(without)!.map((r, round) => [r[key]!, rows.get(withProjects)![round]![key]!] as const)
      const rps = pairs.map(([a, b]) => b.rps / a.rps)
      const cpu = pairs.map(([a, b]) => cpuOf(b) / cpuOf(a))
      return `| ${label} | ${median(rps).toFixed(2)} (${each(rps)}) | ${median(cpu).toFixed(2)} (${each(cpu)}) |`
    })
    const text = `## A world with projects beside one without (issue 33)

Two databases of the same world (bench/dataset.ts without the \`large\` workspace's bulk rows): one
without projects, one with ${PROJECTS} projects holding the workspaces and 1,002 team-project rows (the
member's teams with a row on the projects of ws-small-0 and ws-huge); each seeded, VACUUM ANALYZEd,
with its own service and floors running. ${PROJECT_ROUNDS} rounds (BENCH_PROJECT_ROUNDS), the worlds in turn, the
first of each round alternating; in each, the one-row floor, the two shows and the owner's and the
member's page, driven as in the tables above, then the host's check as in its section (one ${HOST_SECONDS} s run
of each call). Each ratio is taken within one round, on one world — the row and what it is compared
with, one after the other — and the median of the rounds is given, each round in brackets. The
target: the world with projects within 10 % of the world without (or better).

| ratio | without projects, median (rounds) | with projects, median (rounds) | with ÷ without | within 10 % |
|---|---:|---:|---:|---|
${lines.join('\n')}

The same rows, world against world: each row's req/s and CPU per request (Node + PostgreSQL) with
projects ÷ without, in the same round (req/s above 1 and CPU below 1: cheaper with projects).

| row | req/s, with ÷ without, median (rounds) | CPU per request, with ÷ without, median (rounds) |
|---|---:|---:|
${direct.join('\n')}`
    console.log(text)
    return text
  } finally {
    for (const db of pools) await db.destroy()
    for (const lite of lites) await lite.close()
    for (const world of worlds) {
      if (world === undefined) continue
      await stop(world.service)
      await stop(world.floor)
    }
    for (const drop of drops) await drop()
    countDatabase(undefined)
  }
}

function revokedSection (engines: Array<{ engine: string, samples: RevokedSamples }>): string {
  const lines: string[] = []
  for (const { engine, samples } of engines) {
    const valid = quantile(samples.valid, 0.5)
    const row = (name: string, values: number[]) => `| ${engine} | ${name} | ${values.length} | ${fixed(quantile(values, 0.5))} | ${fixed(quantile(values, 0.9))} | ${fixed(quantile(values, 0.5) / valid)} |`
    lines.push(row('GET the team, a valid remembered team token: 200 (the reference)', samples.valid))
    lines.push(row("GET the team, the token's first request after it was regenerated away: 401", samples.revoked))
    lines.push(row('GET the team, a token that never existed: 401', samples.never))
  }
  return `## A token's first request after regeneration (issue 23)

Over one keep-alive connection, one request at a time, ${REVOKED_ROUNDS} rounds (BENCH_REVOKED_ROUNDS) after a warm-up, each:
regenerate team-6400's token as the owner (\`POST /teams/:id/authentication-token\`), use the new secret
once (looked up, remembered) and once more, timed (the reference); regenerate again (the secret is
revoked); then the old secret's first request, timed: 401; then a never-valid secret's, timed: 401.
Milliseconds to the end of each body; "ratio" is the p50 over the reference's p50.

| engine | request | requests | p50 ms | p90 ms | ratio (p50 ÷ valid token's) |
|---|---|---:|---:|---:|---:|
${lines.join('\n')}`
}

function seedSection (engines: Array<{ engine: string, times: SeedTimes }>): string {
  const lines: string[] = []
  for (const { engine, times } of engines) {
    const unchanged = median(times.unchanged)
    const each = (values: number[]) => values.map((n) => n.toFixed(0)).join(', ')
    const row = (name: string, values: number[]) => `| ${engine} | ${name} | ${median(values).toFixed(0)} | ${each(values)} | ${(median(values) / unchanged).toFixed(2)} |`
    lines.push(`| ${engine} | the first apply: everything created | ${times.first.toFixed(0)} | | ${(times.first / unchanged).toFixed(2)} |`)
    lines.push(row('the same document again: nothing changes (the reference)', times.unchanged))
    lines.push(row(`dry run of the document without ${SEED_REMOVED} teams`, times.dryRun))
    lines.push(row(`apply of it: ${SEED_REMOVED} teams removed, with their memberships and rows`, times.apply))
    lines.push(row(`the whole document again: the ${SEED_REMOVED} teams back`, times.restore))
  }
  return `## A seed of ${SEED_TEAMS.toLocaleString('en-US')} teams with ${SEED_REMOVED} removals, and its dry run (issue 23)

The seed function (\`applySeed\`, what \`team-access seed [--dry-run] FILE\` and SEED_FILE run) on a database of
its own, in process: one organization, ${SEED_TEAMS.toLocaleString('en-US')} users, ${SEED_TEAMS.toLocaleString('en-US')} teams (each with one member), one workspace
where every team holds read (${SEED_TEAMS.toLocaleString('en-US')} team-access entries). Applied once, then ${SEED_ROUNDS} rounds on PostgreSQL (BENCH_SEED_ROUNDS), ${SEED_ROUNDS_PGLITE} on PGlite in memory
(BENCH_SEED_ROUNDS_PGLITE), each of: the same document (no change), a dry run of the document without its last ${SEED_REMOVED} teams, its apply (each
removal checked in the summary: ${SEED_REMOVED} teams), the whole document again. Milliseconds, the median and each
round; "ratio" is the median over the no-change apply's median.

| engine | apply | ms, median | rounds | ratio (÷ no-change apply) |
|---|---|---:|---:|---:|
${lines.join('\n')}`
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

function embeddedSection (runs: StartRun[]): { text: string, checks: Check[] } {
  const first = median(runs.map((r) => r.firstSeconds))
  const restart = median(runs.map((r) => r.restartSeconds))
  const firstPeak = median(runs.map((r) => r.firstPeakMb))
  const restartPeak = median(runs.map((r) => r.restartPeakMb))
  const after = median(runs.map((r) => r.rssAfterMb))
  const peak = Math.max(firstPeak, restartPeak)
  const each = (pick: (r: StartRun) => number, digits: number) => runs.map((r) => pick(r).toFixed(digits)).join(', ')
  const text = `## Embedded default: start and memory (PGlite on disk, demo data)

\`node ${SERVER}\` with DATA_DIR a fresh empty directory, no DATABASE_URL, no SEED_FILE,
HOST=127.0.0.1 (the demo data goes in on the first start), then restarted on the same DATA_DIR;
each until GET /readyz answers 200, timed from the spawn. Peak RSS is the process's VmHWM when it
is ready. ${runs.length} run${runs.length === 1 ? '' : 's'}: the median, and each run.

| measure | median | runs | target |
|---|---:|---:|---:|
| first start on an empty DATA_DIR, s | ${first.toFixed(2)} | ${each((r) => r.firstSeconds, 2)} | ≤ 1.5 |
| peak RSS of the first start, MB | ${firstPeak.toFixed(0)} | ${each((r) => r.firstPeakMb, 0)} | ≤ 200 |
| restart on the same DATA_DIR, s | ${restart.toFixed(2)} | ${each((r) => r.restartSeconds, 2)} | ≤ 0.8 |
| peak RSS of the restart, MB | ${restartPeak.toFixed(0)} | ${each((r) => r.restartPeakMb, 0)} | ≤ 200 |
| RSS when ready after the restart, MB | ${after.toFixed(0)} | ${each((r) => r.rssAfterMb, 0)} | |`
  const checks: Check[] = [
    { what: 'embedded: first start on an empty DATA_DIR (median)', measured: `${first.toFixed(2)} s`, goal: '≤ 1.5 s', met: first <= 1.5 },
    { what: 'embedded: restart on the same DATA_DIR (median)', measured: `${restart.toFixed(2)} s`, goal: '≤ 0.8 s', met: restart <= 0.8 },
    { what: 'embedded: peak RSS, the larger of first start and restart (medians)', measured: `${peak.toFixed(0)} MB`, goal: '≤ 200 MB', met: peak <= 200 }
  ]
  return { text, checks }
}

/** How long each part of the run took, for the report. */
const phases: Array<{ name: string, seconds: number }> = []
let phaseStarted = Date.now()
function phaseDone (name: string): void {
  const seconds = (Date.now() - phaseStarted) / 1000
  phases.push({ name, seconds })
  console.log(`[${name}: ${seconds.toFixed(0)} s]`)
  phaseStarted = Date.now()
}

async function main (): Promise<void> {
  const began = Date.now()
  for (const port of [SERVICE_PORT, FLOOR_PORT, BASELINE_PORT, EMBEDDED_PORT, ...(doing('projects') ? PROJECT_PORTS : [])]) await assertPortFree(port)
  const work = mkdtempSync(join(tmpdir(), 'team-access-bench-'))
  const seedFile = join(work, 'seed.json')
  writeFileSync(seedFile, JSON.stringify(dataset()))
  const database = `team_access_bench_${process.pid}`
  const admin = new pg.Client({ connectionString: ADMIN_URL })
  await admin.connect()
  const pgVersion = (await admin.query('show server_version')).rows[0].server_version as string
  await admin.query(`create database ${database}`)
  const url = new URL(ADMIN_URL)
  url.pathname = `/${database}`
  // PostgreSQL's CPU per request: this database's backends and the server's own processes, not other work's
  countDatabase(database)
  const sections: string[] = []
  /** Issue 23's targets, issue 13's, issue 5's. */
  const checks: Check[] = []
  const issue13: Check[] = []
  const earlier: Check[] = []
  let audit = false
  const pgTables = doing('postgres') || doing('revoked') || doing('host-check')
  try {
    console.log(`PostgreSQL ${pgVersion}: ${CONNECTIONS} connections, ${WARMUP} s warm-up, ${DURATION} s per run`)
    const pgEnv = { DATABASE_URL: url.toString() }
    phaseStarted = Date.now()
    if (BASELINE !== undefined && doing('postgres')) {
      sections.push(await measureSideBySide(pgEnv, seedFile, url.toString()))
      phaseDone('side by side')
    }
    let revoked: Array<{ engine: string, samples: RevokedSamples }> = []
    const hostRows: Array<{ engine: string, rows: HostCheckRow[] }> = []
    if (pgTables) {
      const seedSeconds = await seed(pgEnv, seedFile)
      console.log(`postgres: migrated and seeded in ${seedSeconds.toFixed(1)} s`)
      const bulkSeconds = await bulkLoad(url.toString())
      console.log(`postgres: ${LARGE.toLocaleString('en-US')} rows of workspace large bulk-loaded in ${bulkSeconds.toFixed(1)} s`)
      phaseDone('PostgreSQL seed and bulk load')
      if (doing('postgres') || doing('revoked')) {
        const floorRows = doing('postgres') ? await measureFloor(pgEnv) : {}
        const service = await measureService('postgres', pgEnv, floorRows, { rows: doing('postgres'), revoked: doing('revoked') })
        audit = service.audit
        if (service.revoked !== undefined) revoked.push({ engine: 'postgres', samples: service.revoked })
        if (doing('postgres')) {
          const floorList = [floorRows.read, floorRows.update, floorRows.insertDelete, floorRows.page].filter((row): row is Row => row !== undefined)
          sections.push(section(`PostgreSQL ${pgVersion}`, [...floorList, ...service.rows],
            `Migrated and seeded (SEED_FILE) in ${seedSeconds.toFixed(1)} s, ${LARGE.toLocaleString('en-US')} rows bulk-loaded in ${bulkSeconds.toFixed(1)} s; restarted on the loaded database in ${service.startSeconds.toFixed(1)} s.`))
          sections.push(cpuSection(service.rows, floorRows))
          checks.push(...targets(service.rows, 23))
          issue13.push(...targets(service.rows, 13))
          earlier.push(...targets(service.rows, 5), ...spreadAndMemory(service.rows))
        }
        phaseDone(doing('postgres') ? 'PostgreSQL table' : 'PostgreSQL: the revoked token')
      }
      if (doing('host-check')) {
        // the host's pool as it is, and wrapped with preparedStatements (as the README advises)
        for (const prepared of [false, true]) {
          const engine = prepared ? 'postgres, preparedStatements(pool)' : 'postgres'
          console.log(`${engine}: the host's check path, in process`)
          const pool = new pg.Pool({ connectionString: url.toString(), max: HOST_CONCURRENCY })
          const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: prepared ? preparedStatements(pool) : pool }) })
          try {
            hostRows.push({ engine, rows: await measureHostCheck({ engine: 'postgres', db, ...hostTarget(db.withSchema('team_access')) }, hostOptions()) })
          } finally {
            await db.destroy()
          }
        }
        phaseDone('host check on PostgreSQL')
      }
    }

    if (doing('pglite') || doing('revoked')) {
      if (process.env.BENCH_SKIP_PGLITE !== '1') {
        console.log('PGlite (embedded, in memory)')
        const lite = await measureService('pglite', { DATA_DIR: 'memory://', SEED_FILE: seedFile, DATABASE_URL: '' }, undefined, { rows: doing('pglite'), revoked: doing('revoked') })
        if (lite.revoked !== undefined) revoked.push({ engine: 'pglite', samples: lite.revoked })
        if (doing('pglite')) {
          sections.push(section('PGlite, embedded in the service, in memory (no floor: the floors are defined on PostgreSQL)', lite.rows,
            `Started, migrated and seeded (SEED_FILE) in ${lite.startSeconds.toFixed(1)} s. No 100,000-row workspace: it is loaded by SQL on PostgreSQL only, and no team create, member add or token create row. Ratios compare rows of this table; no target applies here.`))
        }
        phaseDone(doing('pglite') ? 'PGlite table' : 'PGlite: the revoked token')
      }
    }
    if (doing('host-check')) {
      console.log('pglite: the host\'s check path, in process (the part of the dataset it reads, seeded in memory)')
      const connection = await connect({ dataDir: 'memory://' })
      try {
        const seeding = Date.now()
        await migrate(connection.db)
        await applySeed(connection.db, hostCheckDataset() as unknown as SeedDocument)
        console.log(`pglite: migrated and seeded in ${((Date.now() - seeding) / 1000).toFixed(1)} s`)
        const db = connection.db as Kysely<any>
        hostRows.push({ engine: 'pglite', rows: await measureHostCheck({ engine: 'pglite', db, ...hostTarget(db) }, hostOptions()) })
      } finally {
        await connection.close()
      }
      sections.push(hostCheckSection(hostRows))
      // the host's check path (issue 23): effectiveAccess ÷ the primary-key SELECT through the same pool, PostgreSQL, 16 in flight
      for (const { engine, rows } of hostRows.filter((r) => r.engine.startsWith('postgres'))) {
        const [select, single] = rows as [HostCheckRow, HostCheckRow]
        const ratio = median(single.callsPerSecond) / median(select.callsPerSecond)
        checks.push({ what: `the host's effectiveAccess ÷ a one-row primary-key SELECT through the same Kysely pool (${engine}, ${HOST_CONCURRENCY} in flight)`, measured: `${ratio.toFixed(2)} (${median(single.callsPerSecond).toFixed(0)} vs ${median(select.callsPerSecond).toFixed(0)} per second)`, goal: '≥ 0.8', met: ratio >= 0.8 })
      }
      phaseDone('host check on PGlite')
    }
    if (revoked.length > 0) sections.push(revokedSection(revoked))
    revoked = []

    if (doing('access-set')) {
      console.log('The access set and effective access (bench/access-set-measure.ts)')
      sections.push(await accessSetSection({
        adminUrl: ADMIN_URL,
        server: SERVER,
        requests: ACCESS_SET_REQUESTS,
        warmup: Math.max(5, Math.round(ACCESS_SET_REQUESTS / 10)),
        port: ACCESS_SET_PORT,
        heading: '## The access set and effective access (issue 22)',
        command: 'Measured by bench/access-set-measure.ts (as `npm run bench:access-set` measures it)'
      }))
      phaseDone('access set')
    }

    if (doing('projects')) {
      console.log('Issue 33: a world with projects beside one without')
      sections.push(await measureProjects(work))
    }

    if (doing('seed')) {
      const seedDatabase = `team_access_bench_seed_${process.pid}`
      await admin.query(`create database ${seedDatabase}`)
      const seedUrl = new URL(ADMIN_URL)
      seedUrl.pathname = `/${seedDatabase}`
      try {
        console.log(`postgres: a seed of ${SEED_TEAMS} teams, ${SEED_REMOVED} removed`)
        const onPostgres = await measureSeed({ url: seedUrl.toString() }, SEED_ROUNDS)
        console.log(`pglite: a seed of ${SEED_TEAMS} teams, ${SEED_REMOVED} removed`)
        const onPglite = await measureSeed({ dataDir: 'memory://' }, SEED_ROUNDS_PGLITE)
        sections.push(seedSection([{ engine: 'postgres', times: onPostgres }, { engine: 'pglite', times: onPglite }]))
        phaseDone('seed')
      } finally {
        await admin.query(`drop database if exists ${seedDatabase} with (force)`)
      }
    }
  } finally {
    await admin.query(`drop database if exists ${database} with (force)`)
    await admin.end()
    rmSync(work, { recursive: true, force: true })
  }

  if (doing('embedded')) {
    console.log('Embedded default: start and memory')
    const embedded = embeddedSection(await measureEmbeddedStart())
    sections.push(embedded.text)
    checks.push(...embedded.checks)
    phaseDone('embedded start')
  }
  if (doing('postgres')) {
    issue13.push({ what: 'the audit event write has its own row ("audit event write: …")', measured: audit ? 'present, with its event' : `present, the write alone: no audit trail in this service (GET ${AUDIT_TRAIL} absent, so no audit read row)`, goal: 'a row', met: true })
    issue13.push({ what: 'the workspace and team reads have their own rows', measured: 'workspace: show by id, by organization and name, list; team: show by id, list with filter[names]', goal: 'rows', met: true })
  }

  const minutes = (Date.now() - began) / 60_000
  const cpu = cpus()
  const report = `# Benchmarks

Produced by \`npm run bench\` (bench/run.ts) on ${new Date().toISOString().slice(0, 10)}, in ${minutes.toFixed(1)} minutes (the build not included).
Machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${platform()} ${release()}, Node ${process.version}.
Figures from one run on a shared 2-core machine: noisy; compare within a run, which is what every
ratio and target below does.

## Targets (issue 23)

On PostgreSQL, each a ratio of two rows of the same run; the embedded ones from the start runs
(median of ${START_RUNS}). The CPU per request, the new rows and the host's check path follow in
their own sections, each with its ratio.

${checkTable(checks)}

## Targets (issue 13), still checked

${checkTable(issue13)}

## Earlier targets (issue 5), still checked

${checkTable(earlier)}

## How it is measured

**Load.** autocannon in the bench process, on the same machine, ${CONNECTIONS} connections (BENCH_CONNECTIONS). Each row is
a few requests to gauge the rate, a warm-up of about ${WARMUP} s (BENCH_WARMUP), then a measured run of about ${DURATION} s
(BENCH_DURATION): each a fixed number of requests sized from the run before, so that every connection
stops after the answer to its last request and no request is cut off in flight (a run cut off at a
deadline leaves the service's admission queue short of the turns of some aborted requests, and
after a few rows it answered everything 503). req/s are answers over the time to the last answer.
The defaults are 2 s and 8 s (they were 3 s and 10 s). Each part's time in this run: ${phases.map((p) => `${p.name} ${(p.seconds / 60).toFixed(1)} min`).join(', ')}.
RSS is the server process's peak during the measured run.

**Dataset** (bench/dataset.ts), loaded through the seed format (SEED_FILE): ${TEAMS.toLocaleString('en-US')} teams, 2,000 users
with 6,000 memberships, 204 workspaces, 21,000 team-workspace rows (one workspace with 10,000, one with
1,000, 200 with 50). On PostgreSQL the workspace \`large\` then gets ${LARGE.toLocaleString('en-US')} rows, and the organization
${(LARGE - TEAMS).toLocaleString('en-US')} more teams (${LARGE.toLocaleString('en-US')} in all), by INSERT … SELECT generate_series, 1,000 rows a statement,
which fires the same triggers as any insert; then VACUUM ANALYZE. A 100,000-entry seed file would
take minutes through the seed writer. PGlite has no \`large\` workspace.

**The service** runs as \`node ${SERVER}\` with LOG_LEVEL=warn, RATE_LIMIT=0 and CALLER_CONCURRENCY=0 (the
bench is one caller on ${CONNECTIONS} connections: the per-caller cap would make most of them wait their turn). Owner rows use the
organization token, member rows the token of a user in 3 of the 10,500 teams.

**The floors** are bare Fastify routes on a pool built as the service builds its own, every statement
prepared (bench/floor-server.ts); no auth, no validation, no admission queue:
- the one-row floor: one primary-key SELECT of a team-workspace row;
- the write floor: one UPDATE of one team-workspace row by primary key, RETURNING it (the same 200 rows the update row changes);
- the insert + delete floor: one INSERT and one DELETE of a row of a bare table, in one request
  (the add + remove row counts cycles of two requests against it);
- the page floor: page 50 of 100 of the 10,000-row workspace by the naive
  \`SELECT … FROM team_workspaces WHERE workspace_id = $1 ORDER BY created_at, id LIMIT 100 OFFSET $2\`, then a
  count(*) of the workspace's rows, built into the same JSON:API document (data, meta.pagination,
  links) with the service's own serializer and response schema.

**"ratio"** is the row's req/s over the req/s of what it is compared with (a floor, or another row of the table).

**Issue 23's writes** (PostgreSQL only, to keep the run short), each request a real change, each
compared with the write floor (one primary-key UPDATE): "team: create" is
\`POST /organizations/bench/teams\` of a new name each time; "team: add a member" is
\`POST /teams/:id/relationships/users\` of one user, a (team, user) pair never added before (teams
6000 … 10499 have no members in the dataset); "token: create" is \`POST /teams/:id/authentication-token\`
on 200 teams in turn, each creating a token and revoking the one before it. Each records its audit
event where the service keeps them. Their CPU per request is in "CPU per request".

**Audit.** Once the audit trail is merged, every add, update and remove records its event in the same
statement, so the update and add + remove rows include it. The row "audit event write" is an update
that changes a permission on every request (runs plan ↔ apply): every request is a change the trail
records. ${audit ? `This service keeps an audit trail: the row's note gives the events recorded against its successful writes, and "audit trail: read page 1" reads GET ${AUDIT_TRAIL}.` : `This service has no audit trail yet (GET ${AUDIT_TRAIL} does not answer 200): the row measures the write alone, and there is no audit read row; the bench adds one when the route answers.`}

${sections.join('\n\n')}
`
  console.log(`\n${report}`)
  if (!PARTIAL || process.env.BENCH_WRITE === '1') writeFileSync(projectFile('BENCHMARKS.md'), report + keptSections())
  else console.log(`BENCHMARKS.md not written: a partial run (BENCH_ONLY=${ONLY?.join(',') ?? ''} BENCH_ROWS=${ROWS?.join(',') ?? ''}; BENCH_WRITE=1 writes it all the same)`)
}

/** Migrates and seeds through the service's own start with SEED_FILE; returns how long that took. */
async function seed (env: Record<string, string>, seedFile: string): Promise<number> {
  const began = Date.now()
  const seeding = start(SERVER, { ...env, ...SERVICE_ENV, SEED_FILE: seedFile, PORT: String(SERVICE_PORT) })
  await waitFor(`http://127.0.0.1:${SERVICE_PORT}/readyz`, 600_000)
  await stop(seeding)
  return (Date.now() - began) / 1000
}

async function measureFloor (env: Record<string, string>): Promise<Floors> {
  const floor = start('dist/bench/floor-server.js', { ...env, PORT: String(FLOOR_PORT) })
  const base = `http://127.0.0.1:${FLOOR_PORT}`
  try {
    await waitFor(`${base}/floor/read/x`, 30_000)
    const page = await fetch(`${base}/floor/page/ws-huge/50`)
    if (page.status !== 200 || ((await page.json()) as { data: unknown[] }).data.length !== 100) throw new Error(`the page floor does not answer a page of 100 (${page.status})`)
    const measured: Floors = {}
    for (const key of ['read', 'update', 'insertDelete', 'page'] as const) {
      if (selected(floors[key].key)) measured[key] = await drive(base, floors[key], floor.pid!)
    }
    return measured
  } finally {
    await stop(floor)
  }
}

function section (title: string, rows: Row[], about: string): string {
  const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
  const lines = rows.map((r) => `| ${r.name} | ${fmt(r.rps)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${r.ratio === undefined ? '' : fmt(r.ratio, 2)} | ${r.compareLabel ?? ''} | ${r.target === undefined ? '' : `≥ ${r.target} (issue ${r.issue})`} | ${fmt(r.rssMb)} | ${r.errors} | ${r.note ?? ''} |`)
  return `## ${title}

${about}

| operation | req/s | p50 ms | p99 ms | ratio | compared with | target | RSS MB | errors | note |
|---|---:|---:|---:|---:|---|---|---:|---:|---|
${lines.join('\n')}`
}

interface Check { what: string, measured: string, goal: string, met: boolean }

function checkTable (checks: Check[]): string {
  return `| target | measured | goal | |
|---|---|---|---|
${checks.map((c) => `| ${c.what} | ${c.measured} | ${c.goal} | ${c.met ? 'met' : '**NOT met**'} |`).join('\n')}`
}

/** The ratio targets of one issue, met or not. */
function targets (rows: Row[], issue: number): Check[] {
  return rows.filter((r) => r.ratio !== undefined && r.target !== undefined && r.issue === issue)
    .map((r) => ({ what: `${r.name} ÷ ${r.compareLabel}`, measured: `${r.ratio!.toFixed(2)} (${r.rps.toFixed(0)} req/s)`, goal: `≥ ${r.target}`, met: r.ratio! >= r.target! }))
}

/** Issue 5's other targets: p99 within 5 × p50 for every operation, and the server's peak RSS under load. */
function spreadAndMemory (rows: Row[]): Check[] {
  const spread = (r: Row) => r.p99 / Math.max(r.p50, 1) // latencies are whole milliseconds
  const widest = rows.reduce((a, b) => spread(b) > spread(a) ? b : a)
  const rss = Math.max(...rows.map((r) => r.rssMb))
  return [
    { what: 'p99 ≤ 5 × p50 for every operation (the widest shown)', measured: `${spread(widest).toFixed(1)} × (${widest.name})`, goal: '≤ 5 ×', met: spread(widest) <= 5 },
    { what: 'peak server RSS under load on PostgreSQL', measured: `${rss.toFixed(0)} MB`, goal: '≤ 250 MB', met: rss <= 250 }
  ]
}

await main()

/** What BENCHMARKS.md holds from KEPT on: sections measured with other commands, which a run keeps as they are. */
function keptSections (): string {
  let current = ''
  try {
    current = readFileSync(projectFile('BENCHMARKS.md'), 'utf8')
  } catch {}
  const at = current.indexOf(KEPT)
  return at === -1 ? `\n${KEPT}\n` : `\n${current.slice(at)}`
}
