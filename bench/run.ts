/**
 * `npm run bench`: the service against the floor of its own design, on the machine's PostgreSQL
 * (and once on embedded PGlite). Loads the dataset of bench/dataset.ts through the seed format,
 * drives each operation with autocannon (fixed connections and duration, after a warm-up),
 * measures the floor in the same run, prints a table and writes BENCHMARKS.md.
 *
 * Settings: BENCH_DATABASE_URL (an admin URL of the server, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_DURATION (s, default 10), BENCH_WARMUP (s, default 3), BENCH_CONNECTIONS (default 10),
 * BENCH_SKIP_PGLITE=1 to measure PostgreSQL only. BENCH_BASELINE=DIR (another checkout, built with
 * `npm ci && npm run build`) adds a side-by-side section: that checkout's service and this one on the
 * same database, each scenario driven on both, one after the other.
 */
import autocannon, { type Options, type Result } from 'autocannon'
import type { ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { cpus, totalmem, tmpdir, platform, release } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { projectFile } from '../src/project-file.js'
import { dataset, ORG_TOKEN, userToken } from './dataset.js'
import { start, stop, waitFor } from './processes.js'

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const SERVICE_PORT = 3110
const FLOOR_PORT = 3111
const BASELINE_PORT = 3112
const BASELINE = process.env.BENCH_BASELINE

interface Scenario {
  name: string
  /** 'read' and 'write' compare to the floor of that kind; the cycle counts two requests per cycle. */
  floor?: 'read' | 'write'
  target?: number
  cycle?: boolean
  options: { path?: string, method?: Options['method'], headers?: Record<string, string>, body?: string, requests?: Options['requests'] }
}

interface Row {
  name: string
  rps: number
  p50: number
  p99: number
  rssMb: number
  errors: number
  ratio?: number
  target?: number
}

const owner = { authorization: `Bearer ${ORG_TOKEN}` }
const jsonapi = { 'content-type': 'application/vnd.api+json' }
const list = (ws: string, page = '') => `/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=${ws}${page}`
const page100 = (n: number) => `&page%5Bnumber%5D=${n}&page%5Bsize%5D=100`

function scenarios (): Scenario[] {
  // teams 10000.. have no rows: each cycle borrows a (team, small workspace) pair and gives it back
  // after its DELETE (autocannon's context lives for one POST + DELETE sequence only); pairs on
  // different workspaces, as adds by different people usually are
  // (one workspace's adds and removes queue on its row-count row)
  const free = Array.from({ length: 200 }, (_, i) => ({ team: `team-${10_000 + i}`, workspace: `ws-small-${i}` }))
  // updates go round the 200 custom rows (the first row of each small workspace)
  let nextRow = 0
  return [
    { name: 'show, as a member', floor: 'read', target: 0.6, options: { path: '/api/v2/team-workspaces/tws-s0-7', headers: { authorization: `Bearer ${userToken(7)}` } } },
    { name: 'show, as an owner', floor: 'read', target: 0.6, options: { path: '/api/v2/team-workspaces/tws-h-5000', headers: owner } },
    { name: 'list 50 rows, unpaginated', options: { path: list('ws-small-1'), headers: owner } },
    { name: 'list page 5 of 100 at 10,000 rows', floor: 'read', target: 0.3, options: { path: list('ws-huge', page100(5)), headers: owner } },
    { name: 'list page 5 of 100 at 1,000 rows', floor: 'read', target: 0.3, options: { path: list('ws-mid', page100(5)), headers: owner } },
    { name: 'list page 50 of 100 at 10,000 rows (deep)', floor: 'read', options: { path: list('ws-huge', page100(50)), headers: owner } },
    { name: 'list page 5 of 100 at 10,000 rows, as a member', floor: 'read', options: { path: list('ws-huge', page100(5)), headers: { authorization: `Bearer ${userToken(7)}` } } },
    {
      name: 'update',
      floor: 'write',
      target: 0.5,
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
      name: 'add + remove cycle',
      floor: 'write',
      target: 0.5,
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
    }
  ]
}

const floors: Record<'read' | 'write', Scenario> = {
  read: { name: 'floor: one primary-key SELECT', options: { path: '/floor/read/tws-h-5000' } },
  write: { name: 'floor: one INSERT + one DELETE', options: { method: 'POST', path: '/floor/write' } }
}

const rssMb = (pid: number): number => {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) / 1024 : 0
}

async function drive (base: string, scenario: Scenario, pid: number): Promise<Row> {
  const { path = '', ...options } = scenario.options
  const run = (duration: number) => autocannon({ url: `${base}${path}`, connections: CONNECTIONS, duration, ...options } as Options) as unknown as Promise<Result>
  await run(WARMUP)
  let peak = 0
  const sampler = setInterval(() => { peak = Math.max(peak, rssMb(pid)) }, 200)
  const result = await run(DURATION)
  clearInterval(sampler)
  peak = Math.max(peak, rssMb(pid))
  const rps = scenario.cycle ? result.requests.average / 2 : result.requests.average
  const row: Row = { name: scenario.cycle ? `${scenario.name} (cycles/s)` : scenario.name, rps, p50: result.latency.p50, p99: result.latency.p99, rssMb: peak, errors: result.non2xx + result.errors + result.timeouts }
  console.log(`  ${row.name}: ${rps.toFixed(0)} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, rss ${peak.toFixed(0)} MB${row.errors ? `, ${row.errors} errors` : ''}`)
  return row
}

async function measureService (engine: 'postgres' | 'pglite', env: Record<string, string>, floorRows: Record<'read' | 'write', Row> | undefined): Promise<{ rows: Row[], startSeconds: number }> {
  const began = Date.now()
  const service = start('dist/src/server.js', { ...env, PORT: String(SERVICE_PORT), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT: '0' })
  try {
    await waitFor(`http://127.0.0.1:${SERVICE_PORT}/readyz`, 600_000)
    const startSeconds = (Date.now() - began) / 1000
    console.log(`${engine}: listening after ${startSeconds.toFixed(1)} s`)
    const rows: Row[] = []
    for (const scenario of scenarios()) {
      const row = await drive(`http://127.0.0.1:${SERVICE_PORT}`, scenario, service.pid!)
      if (scenario.floor && floorRows) {
        row.ratio = row.rps / floorRows[scenario.floor].rps
        row.target = scenario.target
      }
      rows.push(row)
    }
    return { rows, startSeconds }
  } finally {
    await stop(service)
  }
}

/**
 * The baseline checkout and this one, side by side on one database: the baseline seeds and
 * migrates first (it knows fewer migrations), then this checkout starts and migrates on.
 */
async function measureSideBySide (env: Record<string, string>, seedFile: string): Promise<string> {
  const script = join(BASELINE!, 'dist/src/server.js')
  const common = { ...env, HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT: '0' }
  const baseline = start(script, { ...common, SEED_FILE: seedFile, PORT: String(BASELINE_PORT) })
  let branch: ChildProcess | undefined
  try {
    await waitFor(`http://127.0.0.1:${BASELINE_PORT}/readyz`, 600_000)
    branch = start('dist/src/server.js', { ...common, PORT: String(SERVICE_PORT) })
    await waitFor(`http://127.0.0.1:${SERVICE_PORT}/readyz`, 600_000)
    const lines: string[] = []
    for (const scenario of scenarios()) {
      const before = await drive(`http://127.0.0.1:${BASELINE_PORT}`, { ...scenario, name: `baseline: ${scenario.name}` }, baseline.pid!)
      const after = await drive(`http://127.0.0.1:${SERVICE_PORT}`, { ...scenario, name: `this checkout: ${scenario.name}` }, branch.pid!)
      lines.push(`| ${scenario.cycle ? `${scenario.name} (cycles/s)` : scenario.name} | ${before.rps.toFixed(0)} | ${after.rps.toFixed(0)} | ${(after.rps / before.rps).toFixed(2)} | ${before.p50} / ${after.p50} |`)
    }
    return `## Side by side on PostgreSQL: ${BASELINE} (baseline) and this checkout

Each scenario driven on the baseline, then on this checkout, against the same database.

| operation | baseline req/s | this checkout req/s | this / baseline | p50 ms (baseline / this) |
|---|---:|---:|---:|---:|
${lines.join('\n')}`
  } finally {
    if (branch !== undefined) await stop(branch)
    await stop(baseline)
  }
}

async function main (): Promise<void> {
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
  const sections: string[] = []
  const checks: string[] = []
  try {
    console.log(`PostgreSQL ${pgVersion}: ${CONNECTIONS} connections, ${WARMUP} s warm-up, ${DURATION} s per run`)
    const pgEnv = { DATABASE_URL: url.toString() }
    if (BASELINE !== undefined) sections.push(await measureSideBySide(pgEnv, seedFile))
    const seedSeconds = await seed(pgEnv, seedFile)
    console.log(`postgres: migrated and seeded in ${seedSeconds.toFixed(1)} s`)
    const floorRows = await measureFloor(pgEnv)
    const service = await measureService('postgres', pgEnv, floorRows)
    sections.push(section(`PostgreSQL ${pgVersion}`, [floorRows.read, floorRows.write, ...service.rows], seedSeconds, service.startSeconds))
    checks.push(...targets(service.rows))

    if (process.env.BENCH_SKIP_PGLITE !== '1') {
      console.log('PGlite (embedded, in memory)')
      const lite = await measureService('pglite', { DATA_DIR: 'memory://', SEED_FILE: seedFile, DATABASE_URL: '' }, undefined)
      sections.push(section('PGlite, embedded in the service (no floor: the floor is defined on PostgreSQL)', lite.rows, undefined, lite.startSeconds))
    }
  } finally {
    await admin.query(`drop database if exists ${database} with (force)`)
    await admin.end()
    rmSync(work, { recursive: true, force: true })
  }

  const cpu = cpus()
  const report = `# Benchmarks

Produced by \`npm run bench\` (bench/run.ts) on ${new Date().toISOString().slice(0, 10)}.
Machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${platform()} ${release()}, Node ${process.version}.
Load: autocannon on the same machine, ${CONNECTIONS} connections, ${WARMUP} s warm-up then ${DURATION} s per row.
Dataset (bench/dataset.ts), loaded through the seed format: 10,500 teams, 2,000 users with 6,000
memberships, 203 workspaces, 21,000 team-workspace rows (one workspace with 10,000, one with 1,000).
The service runs as \`node dist/src/server.js\` with LOG_LEVEL=warn and RATE_LIMIT=0; the floor is a bare
Fastify route on a pool built the same way (bench/floor-server.ts). "ratio" is req/s over the floor's
req/s of the same kind (read or write); the add + remove row counts cycles (two requests each).
RSS is the server process's peak during the row's run. Figures from one run on a shared 2-core
machine: noisy, compare within a run.

${sections.join('\n\n')}

## Targets (issue 5)

${checks.map((c) => `- ${c}`).join('\n')}
`
  writeFileSync(projectFile('BENCHMARKS.md'), report)
  console.log(`\n${report}`)
}

/** Migrates and seeds through the service's own start with SEED_FILE; returns how long that took. */
async function seed (env: Record<string, string>, seedFile: string): Promise<number> {
  const began = Date.now()
  const seeding = start('dist/src/server.js', { ...env, SEED_FILE: seedFile, PORT: String(SERVICE_PORT), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT: '0' })
  await waitFor(`http://127.0.0.1:${SERVICE_PORT}/readyz`, 600_000)
  await stop(seeding)
  return (Date.now() - began) / 1000
}

async function measureFloor (env: Record<string, string>): Promise<Record<'read' | 'write', Row>> {
  const floor = start('dist/bench/floor-server.js', { ...env, PORT: String(FLOOR_PORT) })
  try {
    await waitFor(`http://127.0.0.1:${FLOOR_PORT}/floor/read/x`, 30_000)
    return {
      read: await drive(`http://127.0.0.1:${FLOOR_PORT}`, floors.read, floor.pid!),
      write: await drive(`http://127.0.0.1:${FLOOR_PORT}`, floors.write, floor.pid!)
    }
  } finally {
    await stop(floor)
  }
}

function section (title: string, rows: Row[], seedSeconds: number | undefined, startSeconds: number): string {
  const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
  const lines = rows.map((r) => `| ${r.name} | ${fmt(r.rps)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${r.ratio === undefined ? '' : `${fmt(r.ratio, 2)}${r.target ? ` (≥ ${r.target})` : ''}`} | ${fmt(r.rssMb)} | ${r.errors} |`)
  return `## ${title}

${seedSeconds === undefined ? `Started, migrated and seeded (SEED_FILE) in ${startSeconds.toFixed(1)} s.` : `Migrated and seeded (SEED_FILE) in ${seedSeconds.toFixed(1)} s; restarted on the seeded database in ${startSeconds.toFixed(1)} s.`}

| operation | req/s | p50 ms | p99 ms | ratio to floor | RSS MB | errors |
|---|---:|---:|---:|---:|---:|---:|
${lines.join('\n')}`
}

function targets (rows: Row[]): string[] {
  const by = (name: string) => rows.find((r) => r.name.startsWith(name))!
  const out: string[] = []
  for (const r of rows) {
    if (r.ratio !== undefined && r.target !== undefined) out.push(`${r.ratio >= r.target ? 'met' : 'NOT met'}: ${r.name} at ${r.ratio.toFixed(2)} × the floor (target ≥ ${r.target})`)
  }
  const scale = by('list page 5 of 100 at 10,000 rows').rps / by('list page 5 of 100 at 1,000 rows').rps
  out.push(`${scale >= 0.8 ? 'met' : 'NOT met'}: page 5 of 100 at 10,000 rows runs at ${scale.toFixed(2)} × the same page at 1,000 rows (target ≥ 0.8)`)
  for (const r of rows) {
    const spread = r.p99 / Math.max(r.p50, 0.001)
    if (spread > 5) out.push(`NOT met: ${r.name} p99 is ${spread.toFixed(1)} × p50 (target ≤ 5)`)
  }
  if (rows.every((r) => r.p99 <= 5 * Math.max(r.p50, 0.001))) out.push('met: p99 ≤ 5 × p50 for every operation')
  const rss = Math.max(...rows.map((r) => r.rssMb))
  out.push(`${rss <= 250 ? 'met' : 'NOT met'}: peak server RSS under load ${rss.toFixed(0)} MB on PostgreSQL (target ≤ 250 MB)`)
  return out
}

await main()
