/**
 * What a workspace's access set costs beside the plain list (issue 22): the measure of
 * `npm run bench:access-set` (bench/access-set.ts), which `npm run bench` runs as a section too.
 *
 * One organization (its owner's token) with one workspace and 50 teams, each with a team-access
 * row (the levels read, plan, write, custom in turn). Over one keep-alive connection, one request
 * at a time, a warm-up and then `requests` rounds of, in turn:
 *
 * - the list: `GET /team-workspaces?filter[workspace][id]=…&page[size]=100` (the baseline);
 * - the set: `PUT /workspaces/:id/team-access` of all 50 entries (the set as GET answered it)
 *   where one team's access alternates read ↔ write, so that every PUT changes exactly one row
 *   (checked on every answer's meta.changes);
 * - effective access: `GET /workspaces/:id/effective-access`, where the service has the route
 *   (probed once: a 404 skips it).
 *
 * The three alternate within each round (the first of them rotating), so that the machine's
 * drift hits them alike; p50 and p90 in milliseconds, each to the end of its answer's body. On
 * embedded PGlite (in memory) and, given an admin URL, on a new database of that PostgreSQL
 * server, dropped at the end. Answers the section: one line per engine and a table.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { assertPortFree, start, stop, waitFor } from './processes.js'

export interface AccessSetOptions {
  /** An admin URL of a PostgreSQL server (a database of its own is made there and dropped); undefined: PGlite only. */
  adminUrl: string | undefined
  /** The service measured: dist/src/server.js, or another checkout's (an absolute path). */
  server: string
  /** Measured rounds, and rounds of warm-up before them. */
  requests: number
  warmup: number
  port: number
  /** The section's heading (with its `## `), and the command line it names as its origin. */
  heading: string
  command: string
}
const TEAMS = 50
const TOKEN = 'bench-access-set-owner-token'
const WORKSPACE = 'ws-access-set'
/** The team whose access alternates read ↔ write: seeded read. */
const FLIPPED = 'team-set-0'

const LEVELS = ['read', 'plan', 'write', 'custom'] as const

function world () {
  return {
    organizations: [{
      id: 'org-access-set',
      name: 'access-set',
      tokens: [TOKEN],
      teams: Array.from({ length: TEAMS }, (_, i) => ({ id: `team-set-${i}`, name: `set${i}` })),
      workspaces: [{ id: WORKSPACE, name: 'access-set' }],
      'team-access': Array.from({ length: TEAMS }, (_, i) => {
        const access = LEVELS[i % LEVELS.length]!
        return { team: `set${i}`, workspace: 'access-set', access, ...(access === 'custom' ? { runs: 'plan', variables: 'read' } : {}) }
      })
    }]
  }
}

const auth = { authorization: `Bearer ${TOKEN}` }

interface Answer { ms: number, status: number, body: any }

/** One request, timed to the end of its body; the body parsed after the clock stops. */
async function timed (url: string, init: RequestInit = {}): Promise<Answer> {
  const began = performance.now()
  const res = await fetch(url, { ...init, headers: { ...auth, ...init.headers } })
  const bytes = await res.arrayBuffer()
  const ms = performance.now() - began
  const text = new TextDecoder().decode(bytes)
  return { ms, status: res.status, body: text === '' ? undefined : JSON.parse(text) }
}

function expect (answer: Answer, status: number, what: string): Answer {
  if (answer.status !== status) throw new Error(`${what}: ${answer.status}, not ${status}: ${JSON.stringify(answer.body)}`)
  return answer
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}

interface Measured { name: string, p50: number, p90: number, n: number }

async function measure (options: AccessSetOptions, engine: string, env: Record<string, string>): Promise<{ line: string, rows: string[] }> {
  const { server: SERVER, port: PORT, requests: REQUESTS, warmup: WARMUP } = options
  const api = `http://127.0.0.1:${PORT}/api/v2`
  const listUrl = `${api}/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=${WORKSPACE}&page%5Bsize%5D=100`
  const setUrl = `${api}/workspaces/${WORKSPACE}/team-access`
  const effectiveUrl = `${api}/workspaces/${WORKSPACE}/effective-access`
  await assertPortFree(PORT)
  const service = start(SERVER, { ...env, PORT: String(PORT), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT: '0', CALLER_CONCURRENCY: '0' })
  try {
    await waitFor(`http://127.0.0.1:${PORT}/readyz`, 600_000)
    const list = expect(await timed(listUrl), 200, 'the list')
    if (list.body.data.length !== TEAMS) throw new Error(`the list answers ${list.body.data.length} rows, not ${TEAMS}`)

    // the desired set: what GET answers, sent back as it is, but for the one team that changes
    const current = expect(await timed(setUrl), 200, 'GET the set').body.data as any[]
    if (current.length !== TEAMS) throw new Error(`the set has ${current.length} rows, not ${TEAMS}`)
    const unchanged = current.map((row) => ({ type: row.type, attributes: row.attributes, relationships: { team: row.relationships.team } }))
    const flipped = unchanged.findIndex((entry) => entry.relationships.team.data.id === FLIPPED)
    if (flipped < 0 || unchanged[flipped]!.attributes.access !== 'read') throw new Error(`${FLIPPED} does not hold read`)
    let puts = 0
    const put = async (): Promise<Answer> => {
      const access = puts++ % 2 === 0 ? 'write' : 'read'
      const data = unchanged.map((entry, i) => i === flipped ? { type: entry.type, attributes: { access }, relationships: entry.relationships } : entry)
      const answer = expect(await timed(setUrl, { method: 'PUT', headers: { 'content-type': 'application/vnd.api+json' }, body: JSON.stringify({ data }) }), 200, 'PUT the set')
      const { added, updated, removed } = answer.body.meta.changes
      if (added.length !== 0 || removed.length !== 0 || updated.length !== 1 || updated[0] !== FLIPPED) throw new Error(`a PUT changed more or less than ${FLIPPED}: ${JSON.stringify(answer.body.meta.changes)}`)
      return answer
    }

    const probe = await timed(effectiveUrl)
    let effectiveTeams: number | undefined
    if (probe.status === 404) console.log(`${engine}: effective-access: not in this build`)
    else effectiveTeams = Array.isArray(expect(probe, 200, 'GET effective-access').body?.data) ? probe.body.data.length : TEAMS

    const kinds: Array<{ name: string, run: () => Promise<Answer>, samples: number[] }> = [
      { name: `list (page[size]=100, ${TEAMS} rows)`, run: async () => expect(await timed(listUrl), 200, 'the list'), samples: [] },
      { name: `PUT the ${TEAMS}-entry set, one row changed`, run: put, samples: [] },
      ...(effectiveTeams === undefined ? [] : [{ name: `effective-access, ${effectiveTeams} teams`, run: async () => expect(await timed(effectiveUrl), 200, 'effective-access'), samples: [] as number[] }])
    ]
    for (let round = 0; round < WARMUP + REQUESTS; round++) {
      for (let k = 0; k < kinds.length; k++) {
        const kind = kinds[(round + k) % kinds.length]!
        const { ms } = await kind.run()
        if (round >= WARMUP) kind.samples.push(ms)
      }
    }
    const measured: Measured[] = kinds.map((kind) => ({ name: kind.name, p50: quantile(kind.samples, 0.5), p90: quantile(kind.samples, 0.9), n: kind.samples.length }))
    const [base, set, effective] = measured as [Measured, Measured, Measured | undefined]
    const ratio = (m: Measured) => `${(m.p50 / base.p50).toFixed(1)} ×`
    const line = `${engine}: list p50 ${fmt(base.p50)} ms; PUT ${TEAMS}-set, one change p50 ${fmt(set.p50)} ms (${ratio(set)}); ` +
      (effective === undefined ? 'effective-access not in this build' : `effective-access ${effectiveTeams} teams p50 ${fmt(effective.p50)} ms (${ratio(effective)})`)
    console.log(line)
    const rows = measured.map((m) => `| ${engine} | ${m.name} | ${m.n} | ${fmt(m.p50)} | ${fmt(m.p90)} | ${m === base ? '1.0 ×' : ratio(m)} |`)
    if (effective === undefined) rows.push(`| ${engine} | effective-access | | | | not in this build (404) |`)
    return { line, rows }
  } finally {
    await stop(service)
  }
}

const fmt = (n: number) => n.toFixed(n < 10 ? 2 : 1)

/** Measures both engines (PostgreSQL where `adminUrl` is given) and answers the section, its heading first. */
export async function accessSetSection (options: AccessSetOptions): Promise<string> {
  const { adminUrl: ADMIN_URL, requests: REQUESTS, warmup: WARMUP, heading: SECTION } = options
  const began = Date.now()
  const work = mkdtempSync(join(tmpdir(), 'team-access-access-set-'))
  const seedFile = join(work, 'seed.json')
  writeFileSync(seedFile, JSON.stringify(world()))
  const lines: string[] = []
  const rows: string[] = []
  let pgVersion: string | undefined
  try {
    const lite = await measure(options, 'pglite', { DATA_DIR: 'memory://', SEED_FILE: seedFile, DATABASE_URL: '' })
    lines.push(lite.line)
    rows.push(...lite.rows)
    if (ADMIN_URL === undefined) {
      console.log('postgres: skipped (set BENCH_DATABASE_URL or DATABASE_URL to an admin URL to measure it too)')
    } else {
      const database = `team_access_access_set_${process.pid}`
      const admin = new pg.Client({ connectionString: ADMIN_URL })
      await admin.connect()
      try {
        pgVersion = (await admin.query('show server_version')).rows[0].server_version as string
        await admin.query(`create database ${database}`)
        const url = new URL(ADMIN_URL)
        url.pathname = `/${database}`
        const postgres = await measure(options, 'postgres', { DATABASE_URL: url.toString(), SEED_FILE: seedFile })
        lines.push(postgres.line)
        rows.push(...postgres.rows)
      } finally {
        await admin.query(`drop database if exists ${database} with (force)`)
        await admin.end()
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }

  return `${SECTION}

${options.command} on ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ` +
    `PGlite in memory${pgVersion === undefined ? ' (no PostgreSQL: no BENCH_DATABASE_URL or DATABASE_URL)' : ` and PostgreSQL ${pgVersion}`}; ${((Date.now() - began) / 1000).toFixed(0)} s in all.
One organization's owner, one workspace with ${TEAMS} teams' rows (read, plan, write, custom in turn), one keep-alive
connection, one request at a time: ${WARMUP} rounds of warm-up, then ${REQUESTS} rounds of the list, the PUT and (where the
service has it) effective access, alternating. The PUT sends the whole set as GET answered it but for one team,
whose access goes read ↔ write: every PUT changes one row (and records its audit event). Milliseconds, to the
end of each answer's body; "÷ list" is the p50 over the list's p50 on the same engine.

${lines.map((line) => `- ${line}`).join('\n')}

| engine | request | requests | p50 ms | p90 ms | ÷ list (p50) |
|---|---|---:|---:|---:|---:|
${rows.join('\n')}
`
}
