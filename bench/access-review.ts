/**
 * `npm run bench:access-review` (DESIGN §12.1, issues 34 and 47): the access review of an
 * organization of 1,000 teams × 5,000 workspaces, with members, on the machine's PostgreSQL — a
 * JSON:API page of 100 at the first, the middle and the last page (the median of 7 of each, with
 * §4's total-count checked against the CSV's rows), and the whole CSV: its time, its size, and the
 * service's resident memory while it streams (sampled from /proc/<pid>/status every 20 ms): the
 * answer must not sit whole in memory.
 *
 * The world, loaded by SQL after a one-organization seed (the seed gives the owners' token):
 * 3,000 users, each in one team (3 members a team); 5,000 workspaces in 10 projects; 20 team-access
 * rows a team (20,000, every level); 100 team-project rows; and 5 teams with read-workspaces, which
 * reach every workspace. Settings: BENCH_DATABASE_URL (an admin URL, default
 * postgres://postgres@127.0.0.1:5432/postgres), BENCH_PORT (default 3150).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { ACCESS_REVIEW_CSV_COLUMNS } from '../schemas/access-review.js'
import { assertPortFree, start, stop, throwawayDatabase, waitFor } from './processes.js'
import { median } from './stats.js'

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const PORT = Number(process.env.BENCH_PORT ?? 3150)
const base = `http://127.0.0.1:${PORT}`
const TOKEN = 'review-owners-token'
const TEAMS = 1_000
const WORKSPACES = 5_000
const MEMBERS = 3
const ROWS_A_TEAM = 20

const seed = {
  users: [{ id: 'user-reviewer', username: 'reviewer' }],
  organizations: [{ id: 'org-review', name: 'review', teams: [{ id: 'team-review-owners', name: 'owners', owners: true, members: ['reviewer'], tokens: [TOKEN] }] }]
}

/** The world's rows, by SQL (the triggers of every insert fire, as for the service's own). */
const worldSql = (): string[] => [
  'insert into projects (id, organization_id, name) select \'prj-r-\' || p, \'org-review\', \'project\' || p from generate_series(0, 9) p',
  `insert into workspaces (id, organization_id, name, project_id) select 'ws-r-' || w, 'org-review', 'workspace' || lpad(w::text, 4, '0'), 'prj-r-' || (w % 10) from generate_series(0, ${WORKSPACES - 1}) w`,
  `insert into teams (id, organization_id, name, visibility, read_workspaces) select 'team-r-' || i, 'org-review', 'team' || lpad(i::text, 4, '0'),
     case when i % 5 = 4 then 'secret' else 'organization' end, i < 5 from generate_series(0, ${TEAMS - 1}) i`,
  `insert into users (id, username) select 'user-r-' || u, 'user' || u from generate_series(0, ${TEAMS * MEMBERS - 1}) u`,
  `insert into team_memberships (team_id, user_id) select 'team-r-' || (u / ${MEMBERS}), 'user-r-' || u from generate_series(0, ${TEAMS * MEMBERS - 1}) u`,
  `insert into team_workspaces (id, organization_id, team_id, workspace_id, access, runs, variables, state_versions, sentinel_mocks, workspace_locking, run_tasks)
     select 'tws-r-' || i || '-' || k, 'org-review', 'team-r-' || i, 'ws-r-' || ((i * 37 + k * 251) % ${WORKSPACES}),
       (array['read','plan','write','admin'])[1 + (i + k) % 4],
       (array['read','plan','apply','apply'])[1 + (i + k) % 4], (array['read','read','write','write'])[1 + (i + k) % 4],
       (array['read','read','write','write'])[1 + (i + k) % 4], (array['none','none','read','read'])[1 + (i + k) % 4],
       (i + k) % 4 >= 2, (i + k) % 4 = 3
     from generate_series(0, ${TEAMS - 1}) i, generate_series(0, ${ROWS_A_TEAM - 1}) k on conflict do nothing`,
  `insert into team_projects (id, organization_id, team_id, project_id, access, project_settings, project_teams, project_variable_sets,
       runs, sentinel_mocks, state_versions, variables, workspace_create, workspace_locking, workspace_delete, workspace_move, run_tasks)
     select 'tprj-r-' || i, 'org-review', 'team-r-' || (100 + i), 'prj-r-' || (i % 10), 'read', 'read', 'none', 'none',
       'read', 'none', 'read', 'read', false, false, false, false, false from generate_series(0, 99) i`,
  'vacuum analyze'
]

const rssOf = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))!
  return Number(line.replace(/\D+/g, '')) / 1024
}

const ROUNDS = 7

/** The JSON:API pages of 100: page 1, the middle and the last, each timed ROUNDS times in turn; the total-count they state. */
async function timePages (): Promise<{ total: number, rows: Array<[string, number]> }> {
  const page = async (n: number): Promise<{ ms: number, body: any }> => {
    const began = performance.now()
    const response = await fetch(`${base}/api/v2/organizations/review/access-review?page%5Bsize%5D=100&page%5Bnumber%5D=${n}`, { headers: { authorization: `Bearer ${TOKEN}` } })
    const body = await response.json() as any
    const ms = performance.now() - began
    if (response.status !== 200) throw new Error(`page ${n}: ${response.status} ${JSON.stringify(body)}`)
    return { ms, body }
  }
  const first = (await page(1)).body
  const { 'total-count': total, 'total-pages': last } = first.meta.pagination as { 'total-count': number, 'total-pages': number }
  const numbers: Array<[string, number]> = [['page 1', 1], [`page ${Math.ceil(last / 2)}`, Math.ceil(last / 2)], [`page ${last}, the last`, last]]
  const times = numbers.map((): number[] => [])
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, [, n]] of numbers.entries()) times[i]!.push((await page(n)).ms)
  }
  return { total, rows: numbers.map(([name], i) => [name, median(times[i]!)]) }
}

async function main (): Promise<void> {
  await assertPortFree(PORT)
  const work = mkdtempSync(join(tmpdir(), 'bench-review-'))
  const seedFile = join(work, 'seed.json')
  writeFileSync(seedFile, JSON.stringify(seed))
  const database = await throwawayDatabase(ADMIN_URL, `team_access_bench_review_${process.pid}`)
  const service = start('dist/src/server.js', { DATABASE_URL: database.url, SEED_FILE: seedFile, PORT: String(PORT), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT: '0' })
  try {
    await waitFor(`${base}/readyz`, 600_000)
    const db = new pg.Client({ connectionString: database.url })
    await db.connect()
    await db.query('set search_path to team_access')
    const loading = performance.now()
    for (const statement of worldSql()) await db.query(statement)
    const counts = (await db.query(`select (select count(*) from teams) teams, (select count(*) from workspaces) workspaces,
      (select count(*) from team_workspaces) rows, (select count(*) from team_projects) project_rows, (select count(*) from team_memberships) memberships`)).rows[0]
    await db.end()
    console.log(`world loaded in ${((performance.now() - loading) / 1000).toFixed(1)} s: ${JSON.stringify(counts)}`)

    const headers = { authorization: `Bearer ${TOKEN}`, accept: 'text/csv' }
    const pages = await timePages()
    const before = rssOf(service.pid!)
    let peak = before
    const sampler = setInterval(() => { peak = Math.max(peak, rssOf(service.pid!)) }, 20)
    const started = performance.now()
    const response = await fetch(`${base}/api/v2/organizations/review/access-review`, { headers })
    if (response.status !== 200) throw new Error(`CSV: ${response.status} ${await response.text()}`)
    let bytes = 0
    let lines = 0
    // the entries (team × workspace) behind the lines (user × team × workspace), for the pages' total-count
    const entries = new Set<string>()
    const decoder = new TextDecoder()
    let partial = ''
    // the client's own work kept small (it shares the machine's 2 cores with the service and the
    // database): each line split once, its entry's two fields cut out where a full split would
    // allocate all thirteen
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length
      const text = partial + decoder.decode(chunk, { stream: true })
      const split = text.split('\r\n')
      partial = split.pop()!
      lines += split.length
      for (const line of split) {
        const a = line.indexOf(',')
        const b = line.indexOf(',', a + 1)
        const c = line.indexOf(',', b + 1)
        entries.add(`${line.slice(a + 1, b)},${line.slice(c + 1, line.indexOf(',', c + 1))}`)
      }
    }
    entries.delete(`${ACCESS_REVIEW_CSV_COLUMNS[1]!},${ACCESS_REVIEW_CSV_COLUMNS[3]!}`)
    const seconds = (performance.now() - started) / 1000
    clearInterval(sampler)
    peak = Math.max(peak, rssOf(service.pid!))
    console.log(`
| access review CSV, PostgreSQL | ${TEAMS.toLocaleString('en-US')} teams × ${WORKSPACES.toLocaleString('en-US')} workspaces |
|---|---|
| rows (user, team, workspace) | ${(lines - 1).toLocaleString('en-US')} |
| size | ${(bytes / 1048576).toFixed(1)} MB |
| time to the last byte | ${seconds.toFixed(1)} s (${((lines - 1) / seconds).toFixed(0)} rows/s) |
| service RSS before | ${before.toFixed(0)} MB |
| service RSS, peak while streaming (sampled every 20 ms) | ${peak.toFixed(0)} MB |
| growth | ${(peak - before).toFixed(0)} MB (target < 64 MB) |
| total-count of the pages | ${pages.total.toLocaleString('en-US')} (${pages.total === entries.size ? 'the CSV\'s entries, team × workspace' : `NOT the CSV's ${entries.size.toLocaleString('en-US')} entries`}) |
${pages.rows.map(([name, ms]) => `| a page of 100, ${name} (median of ${ROUNDS}) | ${ms.toFixed(1)} ms |`).join('\n')}`)
  } finally {
    await stop(service)
    await database.drop()
    rmSync(work, { recursive: true, force: true })
  }
}

await main()
