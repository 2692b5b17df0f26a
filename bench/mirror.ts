/**
 * The mirror (DESIGN §13.2) under `npm run bench` (bench/run.ts, BENCH_ONLY=mirror): an HCP
 * Terraform organization of 5,000 workspaces, 1,000 teams and about 40,000 team-workspace rows,
 * read from a stand-in that allows 30 requests a second and applied here — its time against the
 * floor of its request count ÷ 30, the mirror's peak RSS and its apply's time; then the same run
 * again with nothing changed: its time, and no audit event written.
 *
 * The stand-in is this service itself (`node SERVER`, RATE_LIMIT=30: the per-caller limit) on a
 * PostgreSQL database of its own, seeded in process (applySeedDocument) with bench/review-world.ts's
 * world, its users given emails. The mirror is the built command, `node dist/src/bin.js mirror
 * --from http://127.0.0.1:PORT --organization review --rate 30`, a child process under
 * /usr/bin/time (peak RSS, wall time) with the world's owner token in TFE_TOKEN: into a fresh
 * embedded database (DATA_DIR) and into a fresh PostgreSQL database, each migrated first.
 * Its summary line gives the requests and the read's and the apply's seconds; the stand-in's
 * /metrics the requests it answered and its 429s.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'kysely'
import { connect, type DatabaseLocation } from '../src/db/connect.js'
import { migrate } from '../src/db/migrate.js'
import { applySeedDocument } from '../src/directory/seed.js'
import { projectFile } from '../src/project-file.js'
import { reviewWorld } from './review-world.js'
import { assertPortFree, start, stop, throwawayDatabase, waitFor } from './processes.js'
import { checkTable, type Check } from './report.js'
import { ADMIN_URL, MIRROR_PORT, MIRROR_RATE, SERVER } from './settings.js'

export const MIRROR_WORLD = { teams: 1_000, workspaces: 5_000, projects: 20, users: 2_000, rowsPerTeam: 40, seed: 1 }
/** The tables compared between the stand-in's database and the mirror's (the rows of one organization in each). */
const TABLES = ['teams', 'team_memberships', 'projects', 'workspaces', 'team_workspaces', 'team_projects', 'users'] as const
/** The tables whose rows the mirror must equal: every user in the world is not in a team, so users only shown. */
const MUST_EQUAL = ['teams', 'team_memberships', 'workspaces', 'team_workspaces', 'team_projects']

/**
 * The stand-in's statement timeout (its default is 5 s), kept generous: the bench measures the
 * mirror, not the stand-in. (A page of organization memberships once cost more the further in it
 * was — page 13 of 1,242 took 4 s on a loaded machine — until its rows' teams were read for the
 * page alone: 21 ms since.)
 */
const STAND_IN_STATEMENT_TIMEOUT_MS = 60_000

type Counts = Record<typeof TABLES[number], number>

/** `slowestList`: the organization's list (projects, workspaces, teams, memberships) the stand-in spent longest on, its pages' seconds summed: read one after another, before the team access. */
export interface MirrorRun { wallSeconds: number, peakMb: number, requests: number, readSeconds?: number, applySeconds?: number, line: string, served: number, tooMany: number, slowestList: { name: string, seconds: number } }
export interface MirrorEngine { engine: string, first: MirrorRun, second: MirrorRun, events: { before: number, afterFirst: number, afterSecond: number }, secondNothingChanged: boolean, counts: Counts }
export interface MirrorResult { seedSeconds: number, source: Counts, engines: MirrorEngine[] }

/** The world as a seed document, each user with an email (the mirror reads them from the organization's memberships). */
function world (): ReturnType<typeof reviewWorld> {
  const made = reviewWorld(MIRROR_WORLD)
  const document = made.document as unknown as { users: Array<{ username: string, email?: string }> }
  for (const user of document.users) user.email = `${user.username}@review.example`
  return made
}

async function counts (location: DatabaseLocation): Promise<Counts> {
  const { db, close } = await connect(location)
  try {
    const found = {} as Counts
    for (const table of TABLES) {
      const row = await db.selectFrom(table as any).select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow()
      found[table] = Number(row.n)
    }
    return found
  } finally {
    await close()
  }
}

async function auditEvents (location: DatabaseLocation): Promise<number> {
  const { db, close } = await connect(location)
  try {
    return Number((await db.selectFrom('audit_events' as any).select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow()).n)
  } finally {
    await close()
  }
}

/** The stand-in's answers so far, from its /metrics (`http_request_duration_seconds` by route and status): requests, 429s, and seconds spent on each list's pages. */
async function answered (base: string): Promise<{ total: number, tooMany: number, listSeconds: Record<string, number> }> {
  const text = await (await fetch(`${base}/metrics`)).text()
  let total = 0
  let tooMany = 0
  const listSeconds: Record<string, number> = {}
  for (const line of text.split('\n')) {
    if (line.includes('route="/metrics"')) continue
    const n = Number(line.slice(line.lastIndexOf(' ') + 1))
    if (line.startsWith('http_request_duration_seconds_count{')) {
      total += n
      if (line.includes('status_code="429"')) tooMany += n
    }
    const list = /^http_request_duration_seconds_sum\{.*route="\/api\/v2\/organizations\/:organization\/([a-z-]+)"/.exec(line)
    if (list !== null) listSeconds[list[1]!] = (listSeconds[list[1]!] ?? 0) + n
  }
  return { total, tooMany, listSeconds }
}

/** Runs `team-access` (dist/src/bin.js) with `args` under /usr/bin/time; its output, exit code, peak RSS (MB) and wall seconds. */
async function timedCommand (args: string[], env: Record<string, string>, work: string): Promise<{ output: string, code: number, peakMb: number, wallSeconds: number }> {
  const timeFile = join(work, 'time.txt')
  const child = spawn('/usr/bin/time', ['-o', timeFile, '-f', '%M %e', process.execPath, projectFile('dist/src/bin.js'), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const code = await new Promise<number>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (exit) => resolve(exit ?? 1))
  })
  // /usr/bin/time writes "Command exited with non-zero status N" before its line when the command fails
  const [kb, seconds] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number) as [number, number]
  return { output, code, peakMb: kb / 1024, wallSeconds: seconds }
}

/** One mirror run into `target`: the command's summary line parsed, its time and memory, the stand-in's count of what it answered. */
async function mirrorOnce (base: string, token: string, target: Record<string, string>, work: string): Promise<MirrorRun> {
  const before = await answered(base)
  const run = await timedCommand(['mirror', '--from', base, '--organization', 'review', '--rate', String(MIRROR_RATE)], { ...target, TFE_TOKEN: token }, work)
  if (run.code !== 0) throw new Error(`the mirror exited with ${run.code}:\n${run.output.slice(-4000)}`)
  const after = await answered(base)
  const line = run.output.split('\n').map((l) => l.trim()).reverse().find((l) => /\bmirror review from\b/.test(l))
  if (line === undefined) throw new Error(`the mirror printed no summary line:\n${run.output.slice(-4000)}`)
  const number = (pattern: RegExp): number | undefined => {
    const found = pattern.exec(line)
    return found === null ? undefined : Number(found[1]!.replace(/,/g, ''))
  }
  const requests = number(/([\d,]+) requests/)
  if (requests === undefined) throw new Error(`the summary line gives no request count: ${line}`)
  const lists = Object.entries(after.listSeconds).map(([name, seconds]) => ({ name, seconds: seconds - (before.listSeconds[name] ?? 0) }))
  const slowestList = lists.reduce((a, b) => b.seconds > a.seconds ? b : a, { name: 'none', seconds: 0 })
  return { wallSeconds: run.wallSeconds, peakMb: run.peakMb, requests, readSeconds: number(/read in ([\d.]+) s/), applySeconds: number(/applied in ([\d.]+) s/), line, served: after.total - before.total, tooMany: after.tooMany - before.tooMany, slowestList }
}

function describe (engine: string, what: string, run: MirrorRun): void {
  console.log(`  ${engine}, ${what}: ${run.wallSeconds.toFixed(1)} s wall, floor ${(run.requests / MIRROR_RATE).toFixed(1)} s, peak RSS ${run.peakMb.toFixed(0)} MB; the stand-in answered ${run.served} requests (${run.tooMany} of them 429), its slowest list ${run.slowestList.name} in ${run.slowestList.seconds.toFixed(1)} s\n    ${run.line}`)
}

/** Into one fresh database, migrated (`team-access migrate`): the first run, and the second (nothing changed). */
async function measureEngine (engine: string, base: string, token: string, target: Record<string, string>, location: DatabaseLocation, work: string): Promise<MirrorEngine> {
  // migrated first, so that the audit events can be counted before, and the runs' times are the mirror's alone
  const migrated = await timedCommand(['migrate'], target, work)
  if (migrated.code !== 0) throw new Error(`team-access migrate exited with ${migrated.code}:\n${migrated.output}`)
  const before = await auditEvents(location)
  const first = await mirrorOnce(base, token, target, work)
  describe(engine, 'the first run', first)
  const found = await counts(location)
  const afterFirst = await auditEvents(location)
  const second = await mirrorOnce(base, token, target, work)
  describe(engine, 'the second run, nothing changed', second)
  const afterSecond = await auditEvents(location)
  console.log(`  ${engine}: audit events ${before} before, ${afterFirst} after the first run, ${afterSecond} after the second`)
  return { engine, first, second, events: { before, afterFirst, afterSecond }, secondNothingChanged: /nothing changed/.test(second.line), counts: found }
}

export async function measureMirror (work: string): Promise<MirrorResult> {
  await assertPortFree(MIRROR_PORT)
  const made = world()
  const source = await throwawayDatabase(ADMIN_URL, `team_access_bench_mirror_source_${process.pid}`)
  const into = await throwawayDatabase(ADMIN_URL, `team_access_bench_mirror_${process.pid}`)
  const dataDir = mkdtempSync(join(work, 'mirror-embedded-'))
  let standIn: ReturnType<typeof start> | undefined
  try {
    const seeding = performance.now()
    const { db, close } = await connect({ url: source.url })
    try {
      await migrate(db)
      await applySeedDocument(db, made.document)
    } finally {
      await close()
    }
    const seedSeconds = (performance.now() - seeding) / 1000
    const sourceCounts = await counts({ url: source.url })
    console.log(`mirror: the stand-in's world seeded in ${seedSeconds.toFixed(1)} s: ${JSON.stringify(sourceCounts)}`)
    standIn = start(SERVER, { DATABASE_URL: source.url, HOST: '127.0.0.1', PORT: String(MIRROR_PORT), LOG_LEVEL: 'warn', RATE_LIMIT: String(MIRROR_RATE), DB_STATEMENT_TIMEOUT_MS: String(STAND_IN_STATEMENT_TIMEOUT_MS) })
    const base = `http://127.0.0.1:${MIRROR_PORT}`
    await waitFor(`${base}/readyz`, 120_000)

    const engines: MirrorEngine[] = []
    engines.push(await measureEngine('pglite', base, made.tokens.owner, { DATA_DIR: dataDir, DATABASE_URL: '' }, { dataDir }, work))
    engines.push(await measureEngine('postgres', base, made.tokens.owner, { DATABASE_URL: into.url }, { url: into.url }, work))
    return { seedSeconds, source: sourceCounts, engines }
  } finally {
    if (standIn !== undefined) await stop(standIn)
    await into.drop()
    await source.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** The section of BENCHMARKS.md, with its targets. */
export function mirrorSection (result: MirrorResult): { text: string, checks: Check[] } {
  const checks: Check[] = []
  const rows: string[] = []
  const s = (n: number | undefined, digits = 1) => n === undefined ? '' : n.toFixed(digits)
  for (const e of result.engines) {
    const floor = e.first.requests / MIRROR_RATE
    const ratio = e.first.wallSeconds / floor
    rows.push(`| ${e.engine} | the first run: everything created | ${e.first.requests.toLocaleString('en-US')} | ${e.first.served.toLocaleString('en-US')} (${e.first.tooMany}) | ${floor.toFixed(1)} | ${e.first.wallSeconds.toFixed(1)} | ${ratio.toFixed(2)} | ${s(e.first.readSeconds)} | ${s(e.first.applySeconds)} | ${e.first.slowestList.name} ${e.first.slowestList.seconds.toFixed(1)} | ${e.first.peakMb.toFixed(0)} | ${(e.events.afterFirst - e.events.before).toLocaleString('en-US')} |`)
    const floor2 = e.second.requests / MIRROR_RATE
    rows.push(`| ${e.engine} | the second run: nothing changed | ${e.second.requests.toLocaleString('en-US')} | ${e.second.served.toLocaleString('en-US')} (${e.second.tooMany}) | ${floor2.toFixed(1)} | ${e.second.wallSeconds.toFixed(1)} | ${(e.second.wallSeconds / floor2).toFixed(2)} | ${s(e.second.readSeconds)} | ${s(e.second.applySeconds)} | ${e.second.slowestList.name} ${e.second.slowestList.seconds.toFixed(1)} | ${e.second.peakMb.toFixed(0)} | ${(e.events.afterSecond - e.events.afterFirst).toLocaleString('en-US')} |`)
    for (const [what, run] of [['first run', e.first], ['second run, nothing changed', e.second]] as const) {
      const r = run.wallSeconds / (run.requests / MIRROR_RATE)
      checks.push({ what: `${e.engine}, ${what}: wall time ÷ (requests ÷ ${MIRROR_RATE}/s)`, measured: `${r.toFixed(2)} (${run.wallSeconds.toFixed(1)} s for ${run.requests.toLocaleString('en-US')} requests)`, goal: '≤ 1.2', met: r <= 1.2 })
      checks.push({ what: `${e.engine}, ${what}: the mirror's peak RSS`, measured: `${run.peakMb.toFixed(0)} MB`, goal: '< 256 MB', met: run.peakMb < 256 })
    }
    const missing = MUST_EQUAL.filter((table) => e.counts[table as keyof Counts] !== result.source[table as keyof Counts])
    checks.push({ what: `${e.engine}: the mirrored rows equal the stand-in's (${MUST_EQUAL.join(', ')})`, measured: missing.length === 0 ? 'equal' : missing.map((t) => `${t} ${e.counts[t as keyof Counts]} vs ${result.source[t as keyof Counts]}`).join('; '), goal: 'equal', met: missing.length === 0 })
    const written = e.events.afterSecond - e.events.afterFirst
    checks.push({ what: `${e.engine}: the second run finds nothing changed and writes no audit event`, measured: `${e.secondNothingChanged ? '"nothing changed"' : 'a change reported'}, ${written} events written`, goal: 'none', met: e.secondNothingChanged && written === 0 })
  }
  const c = result.source
  const text = `## The mirror: an organization of ${MIRROR_WORLD.workspaces.toLocaleString('en-US')} workspaces and ${MIRROR_WORLD.teams.toLocaleString('en-US')} teams at ${MIRROR_RATE} requests a second (DESIGN §13.2)

The stand-in for HCP Terraform is this service (\`node ${SERVER}\`, RATE_LIMIT=${MIRROR_RATE}: the per-caller limit) on a
PostgreSQL database of its own, seeded in process (applySeedDocument, ${result.seedSeconds.toFixed(0)} s) with bench/review-world.ts's world
(seed ${MIRROR_WORLD.seed}), each user with an email: ${c.teams.toLocaleString('en-US')} teams, ${c.team_memberships.toLocaleString('en-US')} memberships, ${c.users.toLocaleString('en-US')} users,
${c.projects.toLocaleString('en-US')} projects, ${c.workspaces.toLocaleString('en-US')} workspaces, ${c.team_workspaces.toLocaleString('en-US')} team-workspace rows and ${c.team_projects.toLocaleString('en-US')} team-project rows.
The mirror is the built command, \`node dist/src/bin.js mirror --from http://127.0.0.1:PORT --organization review --rate ${MIRROR_RATE}\`
(TFE_TOKEN: the owner's token), a child process under \`/usr/bin/time\`: wall time and peak RSS are the whole
process's, from its start to its exit. Into a fresh embedded database (DATA_DIR) and a fresh PostgreSQL database,
each migrated first (\`team-access migrate\`): the first run creates everything; the second, at once after it,
finds nothing changed.
"requests" and the read's and the apply's seconds are the summary line's; "answered" is the stand-in's count
(its /metrics), its 429s in brackets; the floor is requests ÷ ${MIRROR_RATE}; "events" the audit events the run wrote.
"slowest list" is the organization's list (projects, workspaces, teams, organization memberships) the stand-in
took longest to answer, its pages' seconds summed (its /metrics): a list's pages are read one after another,
and the team access of the workspaces and projects (all but about 80 of the requests) after the lists. The
stand-in runs with DB_STATEMENT_TIMEOUT_MS=${STAND_IN_STATEMENT_TIMEOUT_MS} (default 5,000): its later pages of organization memberships
take seconds each, past the default a 503.

| engine | run | requests | answered (429s) | floor s | wall s | wall ÷ floor | read s | apply s | slowest list, s | peak RSS MB | events |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
${rows.join('\n')}

${checkTable(checks)}`
  return { text, checks }
}
