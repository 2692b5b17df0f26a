/**
 * `npm run bench:timing`: does a hidden id answer measurably slower than a missing one?
 * (DESIGN §3: existence never leaks — not through the body, and as far as we can help it not
 * through the clock.) A member shows, lists and deletes by ids it may not see and ids that do
 * not exist, interleaved, 3,000 requests per case over one keep-alive connection, and the
 * medians are compared — on PostgreSQL and on embedded PGlite. And a 401 (PostgreSQL): a token
 * revoked a moment after it was used beside a token never valid, each on its first request.
 *
 * Settings: BENCH_DATABASE_URL, TIMING_SERVER (another checkout's dist/src/server.js), TIMING_REQUESTS.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { start, stop, waitFor } from './processes.js'

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const SERVER = process.env.TIMING_SERVER ?? 'dist/src/server.js'
const REQUESTS = Number(process.env.TIMING_REQUESTS ?? 3000)
const PORT = 3130
const TOKEN = 'timing-member-token'
/** Tokens used once, then revoked, for the 401 case (PostgreSQL: the bench revokes them in the database). */
const REVOKED = Array.from({ length: Math.min(REQUESTS, 1000) }, (_, i) => `timing-revoked-token-${i}`)

const world = {
  users: [{ id: 'user-timing', username: 'timing', tokens: [TOKEN] }, { id: 'user-revoked', username: 'revoked', tokens: REVOKED }],
  organizations: [{
    id: 'org-timing',
    name: 'timing',
    teams: [{ id: 'team-mine', name: 'mine', members: ['timing'] }, { id: 'team-secret', name: 'secret' }],
    workspaces: [{ id: 'ws-visible', name: 'visible' }, { id: 'ws-elsewhere', name: 'elsewhere' }],
    'team-access': [
      { id: 'tws-mine', team: 'mine', workspace: 'visible', access: 'read' },
      { id: 'tws-hidden', team: 'secret', workspace: 'visible', access: 'admin' }
    ]
  }, {
    id: 'org-other',
    name: 'other',
    teams: [{ id: 'team-other', name: 'other' }],
    workspaces: [{ id: 'ws-other', name: 'other' }],
    'team-access': [{ id: 'tws-other-org', team: 'other', workspace: 'other', access: 'read' }]
  }]
}

const base = `http://127.0.0.1:${PORT}/api/v2`
const cases: Array<{ name: string, hidden: [string, string], missing: [string, string] }> = [
  { name: 'show', hidden: ['GET', '/team-workspaces/tws-hidden'], missing: ['GET', '/team-workspaces/tws-missing'] },
  { name: 'show, another organization', hidden: ['GET', '/team-workspaces/tws-other-org'], missing: ['GET', '/team-workspaces/tws-missing'] },
  { name: 'list, another organization', hidden: ['GET', '/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-other'], missing: ['GET', '/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-missing'] },
  { name: 'remove', hidden: ['DELETE', '/team-workspaces/tws-hidden'], missing: ['DELETE', '/team-workspaces/tws-missing'] }
]

async function timeOne ([method, path]: [string, string], token = TOKEN, status = 404): Promise<number> {
  const began = process.hrtime.bigint()
  const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${token}` } })
  await res.arrayBuffer()
  if (res.status !== status) throw new Error(`${method} ${path}: ${res.status}, not ${status}`)
  return Number(process.hrtime.bigint() - began) / 1000
}

/**
 * A 401 is one answer (issue 18): the first request with a token revoked a moment after it was
 * used (its caller still remembered) beside the first with a token never valid, each token once.
 */
async function revokedBesideNeverValid (databaseUrl: string): Promise<string> {
  const db = new pg.Client({ connectionString: databaseUrl })
  await db.connect()
  // the service's tables: in its schema, or in public for a checkout from before it had one
  await db.query('set search_path to team_access, public')
  const show: [string, string] = ['GET', '/team-workspaces/tws-missing']
  const revoked: number[] = []
  const never: number[] = []
  try {
    for (const [i, token] of REVOKED.entries()) {
      await timeOne(show, token, 404) // seen: its caller is remembered
      await db.query("delete from tokens where digest = encode(sha256($1::bytea), 'hex')", [token])
      if (i % 2 === 0) { revoked.push(await timeOne(show, token, 401)); never.push(await timeOne(show, `timing-never-valid-${i}`, 401)) } else { never.push(await timeOne(show, `timing-never-valid-${i}`, 401)); revoked.push(await timeOne(show, token, 401)) }
    }
  } finally {
    await db.end()
  }
  const gap = median(revoked) - median(never)
  console.log(`postgres, 401: revoked a moment ago ${median(revoked).toFixed(0)} µs, never valid ${median(never).toFixed(0)} µs, gap ${gap.toFixed(0)} µs`)
  return `| postgres | 401: a token revoked a moment ago (remembered) vs one never valid, ${REVOKED.length} of each | ${median(revoked).toFixed(0)} | ${median(never).toFixed(0)} | ${gap.toFixed(0)} |`
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

async function measure (engine: string, env: Record<string, string>): Promise<string[]> {
  const service = start(SERVER, { ...env, PORT: String(PORT), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT: '0' })
  try {
    await waitFor(`http://127.0.0.1:${PORT}/readyz`, 600_000)
    const rows: string[] = []
    for (const c of cases) {
      for (let i = 0; i < 200; i++) { await timeOne(c.hidden); await timeOne(c.missing) } // warm-up
      const hidden: number[] = []
      const missing: number[] = []
      for (let i = 0; i < REQUESTS; i++) {
        // interleaved, alternating which goes first, so drift hits both alike
        if (i % 2 === 0) { hidden.push(await timeOne(c.hidden)); missing.push(await timeOne(c.missing)) } else { missing.push(await timeOne(c.missing)); hidden.push(await timeOne(c.hidden)) }
      }
      const gap = median(hidden) - median(missing)
      console.log(`${engine}, ${c.name}: hidden ${median(hidden).toFixed(0)} µs, missing ${median(missing).toFixed(0)} µs, gap ${gap.toFixed(0)} µs`)
      rows.push(`| ${engine} | ${c.name} | ${median(hidden).toFixed(0)} | ${median(missing).toFixed(0)} | ${gap.toFixed(0)} |`)
    }
    if (env.DATABASE_URL !== '') rows.push(await revokedBesideNeverValid(env.DATABASE_URL!))
    return rows
  } finally {
    await stop(service)
  }
}

async function main (): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'team-access-timing-'))
  const seedFile = join(work, 'seed.json')
  writeFileSync(seedFile, JSON.stringify(world))
  const database = `team_access_timing_${process.pid}`
  const admin = new pg.Client({ connectionString: ADMIN_URL })
  await admin.connect()
  await admin.query(`create database ${database}`)
  const url = new URL(ADMIN_URL)
  url.pathname = `/${database}`
  const rows: string[] = []
  try {
    rows.push(...await measure('postgres', { DATABASE_URL: url.toString(), SEED_FILE: seedFile }))
    rows.push(...await measure('pglite', { DATA_DIR: 'memory://', SEED_FILE: seedFile, DATABASE_URL: '' }))
  } finally {
    await admin.query(`drop database if exists ${database} with (force)`)
    await admin.end()
    rmSync(work, { recursive: true, force: true })
  }
  console.log(`
Hidden vs missing ids, as a member, ${REQUESTS} interleaved requests per case (${SERVER}); medians in µs:

| engine | case | hidden | missing | gap |
|---|---|---:|---:|---:|
${rows.join('\n')}`)
}

await main()
