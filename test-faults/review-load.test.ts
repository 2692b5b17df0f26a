import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { projectFile } from '../src/project-file.js'
import { connect, type DatabaseLocation } from '../src/db/connect.js'
import { migrate } from '../src/db/migrate.js'
import { table } from '../src/db/tables.js'
import { applySeedDocument } from '../src/directory/seed.js'
import { recordFigure } from '../test/hardening/figures.js'
import { throwawayPostgres } from './throwaway-postgres.js'

/**
 * One owner's heavy use of the access review must not stall another organization (issue 43): the
 * built server (`node dist/src/server.js`) with the standalone defaults (admission's per-caller
 * cap and wait limit, the pool, the load shedder; RATE_LIMIT=0, so the owner is held back by
 * admission alone), an organization of 400 teams × 2,000 workspaces, and a victim — a member of
 * another organization — reading its workspace's team-access list every ~20 ms. While each load
 * of PHASES runs, the victim is never stalled — every answer a 200, none a 503, and its p99 under a
 * second (the p99 itself is recorded as a figure: on these shared 2-core machines it ranges from
 * 130 to 440 ms run to run, even on the code that first passed at 250 ms, so the bound asserted is
 * the stall, not the figure); on PGlite and on a
 * PostgreSQL of the test's own.
 *
 * A load is a function that runs for about LOAD_MS and resolves when its last request has ended;
 * a phase is a name and a load. More of them go into PHASES.
 */
const LOAD_MS = 4000
const VICTIM_EVERY_MS = 20
/** A stall, not a figure: the victim's p99 is recorded (test/hardening/figures.ts), the bound only catches a victim held for a second. */
const P99_MS = 1000
const TEAMS = 400
const WORKSPACES = 2000
const PG_PORT = 25532 + (process.pid % 50)
const PORT = 3300 + (process.pid % 100)
const base = `http://127.0.0.1:${PORT}`

const OWNER = 'review-load-owner-token'
const VICTIM = 'review-load-victim-token'
const VICTIM_LIST = '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-victim'
const REVIEW = '/api/v2/organizations/review/access-review'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The world: the seed's skeleton (owners, the victim's organization), then the big organization by SQL. */
const skeleton = {
  users: [{ id: 'user-reviewer', username: 'reviewer', tokens: [OWNER] }, { id: 'user-victim', username: 'victim', tokens: [VICTIM] }],
  organizations: [
    { id: 'org-review', name: 'review', teams: [{ id: 'team-review-owners', name: 'owners', owners: true, members: ['reviewer'] }] },
    {
      id: 'org-victim',
      name: 'victim',
      teams: [{ id: 'team-victim', name: 'victims', visibility: 'organization', members: ['victim'] }],
      workspaces: [{ id: 'ws-victim', name: 'app' }],
      'team-access': [{ team: 'victims', workspace: 'app', access: 'write' }]
    }
  ]
}

/**
 * 20 projects (a fifth of the workspaces stay in the default project), members, 20 team-access
 * rows a team at every level, a team-project row on every seventh team, and the organization-wide
 * flags of bench/review-world.ts (read-workspaces, manage-workspaces) on a few teams: about 50,000
 * entries, 500 pages of 100.
 */
const worldSql = [
  sql`insert into ${table.projects} (id, organization_id, name) select 'prj-r-' || p, 'org-review', 'project-' || p from generate_series(0, 19) p`,
  sql`insert into ${table.workspaces} (id, organization_id, name, project_id)
    select 'ws-r-' || w, 'org-review', 'workspace-' || lpad(w::text, 4, '0'),
      case when w % 5 = 0 then (select id from ${table.projects} where organization_id = 'org-review' and is_default) else 'prj-r-' || (w * 7 % 20) end
    from generate_series(0, ${sql.lit(WORKSPACES - 1)}) w`,
  sql`insert into ${table.teams} (id, organization_id, name, visibility, read_workspaces, manage_workspaces)
    select 'team-r-' || i, 'org-review', 'team-' || lpad(i::text, 3, '0'), case when i % 4 = 0 then 'secret' else 'organization' end,
      i % 37 = 11 or i % 41 = 17, i % 53 = 13
    from generate_series(1, ${sql.lit(TEAMS - 1)}) i`,
  sql`insert into ${table.users} (id, username) select 'user-r-' || u, 'user-' || u from generate_series(0, 799) u`,
  sql`insert into ${table.team_memberships} (team_id, user_id) select 'team-r-' || i, 'user-r-' || ((i * 13 + k * 101) % 800)
    from generate_series(1, ${sql.lit(TEAMS - 1)}) i, generate_series(0, i % 5) k on conflict do nothing`,
  sql`insert into ${table.team_workspaces} (id, organization_id, team_id, workspace_id, access, runs, variables, state_versions, sentinel_mocks, workspace_locking, run_tasks)
    select 'tws-r-' || i || '-' || k, 'org-review', 'team-r-' || i, 'ws-r-' || ((i * 37 + k * 251) % ${sql.lit(WORKSPACES)}),
      (array['read','plan','write','admin'])[1 + (i + k) % 4],
      (array['read','plan','apply','apply'])[1 + (i + k) % 4], (array['read','read','write','write'])[1 + (i + k) % 4],
      (array['read','read','write','write'])[1 + (i + k) % 4], (array['none','none','read','read'])[1 + (i + k) % 4],
      (i + k) % 4 >= 2, (i + k) % 4 = 3
    from generate_series(1, ${sql.lit(TEAMS - 1)}) i, generate_series(0, 19) k on conflict do nothing`,
  sql`insert into ${table.team_projects} (id, organization_id, team_id, project_id, access, project_settings, project_teams, project_variable_sets,
      runs, sentinel_mocks, state_versions, variables, workspace_create, workspace_locking, workspace_delete, workspace_move, run_tasks)
    select 'tprj-r-' || i, 'org-review', 'team-r-' || i, 'prj-r-' || (i % 20), (array['read','write','maintain','admin'])[1 + i % 4], 'read', 'none', 'none',
      'read', 'none', 'read', 'read', false, false, false, false, false
    from generate_series(1, ${sql.lit(TEAMS - 1)}) i where i % 7 = 2`,
  sql`analyze`
]

async function seed (location: DatabaseLocation): Promise<void> {
  const { db, close } = await connect(location)
  try {
    await migrate(db)
    await applySeedDocument(db, skeleton)
    for (const statement of worldSql) await statement.execute(db)
  } finally {
    await close()
  }
}

interface Answer { status: number, ms: number }

async function get (path: string, token: string): Promise<Answer & { body: any }> {
  const began = performance.now()
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } })
  const text = await res.text()
  let body: any
  try { body = JSON.parse(text) } catch { body = text }
  return { status: res.status, ms: performance.now() - began, body }
}

/** The built server on `database`, with the standalone defaults but RATE_LIMIT=0, ready. */
async function serve (t: Test, database: Record<string, string>): Promise<void> {
  const server = spawn(process.execPath, [projectFile('dist/src/server.js')], {
    env: { PATH: process.env.PATH ?? '', PORT: String(PORT), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT: '0', ...database },
    stdio: ['ignore', 'inherit', 'inherit']
  })
  const exited = new Promise((resolve) => server.on('exit', resolve))
  t.teardown(async () => {
    if (server.exitCode === null) {
      server.kill('SIGTERM')
      await exited
    }
  })
  for (let i = 0; ; i++) {
    if (i > 300) throw new Error('the server did not start')
    try { if ((await get('/readyz', VICTIM)).status === 200) break } catch {}
    await sleep(100)
  }
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)]!

interface VictimFigures { requests: number, statuses: Record<number, number>, p50: number, p99: number, max: number }

/** The victim's requests while `load` runs: one at a time, every VICTIM_EVERY_MS. */
async function underLoad (load: () => Promise<void>): Promise<VictimFigures> {
  let done = false
  const answers: Answer[] = []
  const victim = (async () => {
    // eslint-disable-next-line no-unmodified-loop-condition -- set when the load ends
    while (!done) {
      const began = performance.now()
      const { status, ms } = await get(VICTIM_LIST, VICTIM).catch(() => ({ status: 0, ms: performance.now() - began }))
      answers.push({ status, ms })
      await sleep(Math.max(0, VICTIM_EVERY_MS - (performance.now() - began)))
    }
  })()
  try {
    await load()
  } finally {
    done = true
    await victim
  }
  const sorted = answers.map((a) => a.ms).sort((a, b) => a - b)
  const statuses: Record<number, number> = {}
  for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1
  return { requests: answers.length, statuses, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1]! }
}

/** `concurrency` loops of `request` for LOAD_MS; resolves when the last has ended. */
async function forLoadTime (concurrency: number, request: (loop: number) => Promise<void>): Promise<void> {
  const until = performance.now() + LOAD_MS
  await Promise.all(Array.from({ length: concurrency }, async (_, loop) => {
    while (performance.now() < until) await request(loop)
  }))
}

interface Phase {
  name: string
  /** What the phase's load did, for its figure, and whether it did it. */
  load: (t: Test, total: number) => Promise<() => string>
}

const PHASES: Phase[] = [{
  // six of the owner's page requests at once (past the per-caller cap of 8 nothing would run
  // sooner), pages of 100 anywhere in the review: the first, the last and random ones between
  name: 'the owner pages through the review',
  load: async (t, total) => {
    const pages = Math.ceil(total / 100)
    const times: number[] = []
    const failed: string[] = []
    await forLoadTime(6, async (loop) => {
      const number = loop === 0 ? 1 : loop === 1 ? pages : 1 + Math.floor(Math.random() * pages)
      const page = await get(`${REVIEW}?page%5Bsize%5D=100&page%5Bnumber%5D=${number}`, OWNER)
      if (page.status !== 200 || page.body.meta.pagination['total-count'] !== total) failed.push(`page ${number}: ${page.status}`)
      times.push(page.ms)
    })
    t.same(failed, [], 'every page 200, with the exact total-count')
    const sorted = [...times].sort((a, b) => a - b)
    return () => `${times.length} pages of 100 (p50 ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms, max ${sorted[sorted.length - 1]!.toFixed(0)} ms)`
  }
}, {
  // forty CSVs of the whole organization at once, each read to its end, again until the time is up
  // (past the per-caller cap of 8 the rest wait their turn; a wait past the limit is the owner's
  // own 503): the streams' reads take turns, so the victim runs between them
  name: 'the owner streams forty CSVs at once',
  load: async (t) => {
    const statuses: Record<number, number> = {}
    let bytes = 0
    let streams = 0
    await forLoadTime(40, async () => {
      const res = await fetch(`${base}${REVIEW}`, { headers: { authorization: `Bearer ${OWNER}`, accept: 'text/csv' } })
      const text = await res.text()
      statuses[res.status] = (statuses[res.status] ?? 0) + 1
      if (res.status === 200) { streams++; bytes += text.length }
    })
    t.ok(streams > 0, `streams read whole: ${streams}`)
    return () => `${streams} CSVs read whole (${(bytes / streams / 1e6).toFixed(1)} MB each), answers ${JSON.stringify(statuses)}`
  }
}, {
  // twenty HEADs at once, again and again: each costs the owner's check, never the review
  name: 'the owner sends twenty HEADs at once, again and again',
  load: async (t) => {
    const statuses: Record<number, number> = {}
    await forLoadTime(20, async () => {
      const res = await fetch(`${base}${REVIEW}`, { method: 'HEAD', headers: { authorization: `Bearer ${OWNER}`, accept: 'text/csv' } })
      statuses[res.status] = (statuses[res.status] ?? 0) + 1
    })
    t.ok((statuses[200] ?? 0) > 0, 'HEADs answered 200')
    return () => `HEADs answered ${JSON.stringify(statuses)}`
  }
}]

const ENGINES: Array<{ engine: string, database: (t: Test) => Promise<Record<string, string>> }> = [
  {
    engine: 'pglite',
    database: async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'team-access-review-load-'))
      t.teardown(() => rmSync(dir, { recursive: true, force: true }))
      await seed({ dataDir: join(dir, 'data') })
      return { DATA_DIR: join(dir, 'data') }
    }
  },
  {
    engine: 'postgres',
    database: async (t) => {
      const postgres = throwawayPostgres(PG_PORT)
      t.teardown(() => postgres.remove())
      await seed({ url: postgres.url })
      return { DATABASE_URL: postgres.url }
    }
  }
]

for (const { engine, database } of ENGINES) {
  t.test(`the access review under load leaves another organization alone (${engine})`, async (t) => {
    const seeding = performance.now()
    await serve(t, await database(t))
    const first = await get(`${REVIEW}?page%5Bsize%5D=100`, OWNER)
    t.equal(first.status, 200)
    const total = first.body.meta.pagination['total-count'] as number
    t.ok(total > 40_000, `${total} entries, ready in ${((performance.now() - seeding) / 1000).toFixed(1)} s`)
    // one page at a time, nothing else running: what a page costs (the first, the last, one between)
    const pages = Math.ceil(total / 100)
    const single: number[] = []
    for (const number of [1, pages, Math.ceil(pages / 2), 1, pages, Math.ceil(pages / 3)]) single.push((await get(`${REVIEW}?page%5Bsize%5D=100&page%5Bnumber%5D=${number}`, OWNER)).ms)
    t.comment(`one page of 100 alone: ${single.map((ms) => ms.toFixed(0)).join(', ')} ms`)
    const alone = await underLoad(async () => { await sleep(1000) })
    t.same(Object.keys(alone.statuses), ['200'], `alone, the victim: p50 ${alone.p50.toFixed(0)} ms, p99 ${alone.p99.toFixed(0)} ms`)

    for (const phase of PHASES) {
      await t.test(phase.name, async (t) => {
        let did = (): string => ''
        const victim = await underLoad(async () => { did = await phase.load(t, total) })
        const figure = `${did()}; the victim (another organization): ${victim.requests} requests ${JSON.stringify(victim.statuses)}, p50 ${victim.p50.toFixed(0)} ms, p99 ${victim.p99.toFixed(0)} ms, max ${victim.max.toFixed(0)} ms (alone p99 ${alone.p99.toFixed(0)} ms)`
        t.comment(figure)
        t.ok(victim.requests >= 8, `the victim kept asking (${victim.requests} requests)`)
        t.same(Object.keys(victim.statuses), ['200'], `the victim: every answer 200 (${JSON.stringify(victim.statuses)})`)
        t.ok(victim.p99 < P99_MS, `the victim's p99 ${victim.p99.toFixed(0)} ms < ${P99_MS} ms`)
        await recordFigure(`review load, ${phase.name}, ${engine}`, figure, `victim p99 < ${P99_MS} ms, no 503`)
      })
    }
  })
}
