/**
 * `npm run bench:effective-access` (issue 47): the statement of `GET /workspaces/:id/effective-access`
 * (src/effective-access/effective-access-repository.ts) for an owner, on an organization of 10,500
 * teams, timed on the machine's PostgreSQL by EXPLAIN (ANALYZE, BUFFERS).
 *
 * The world, by SQL on a migrated database of its own (dropped at the end; every insert's triggers
 * fire as for the service's own): one organization of 10,500 teams — the owners team and four teams
 * with one organization-wide flag each (manage-workspaces, read-workspaces, manage-projects,
 * read-projects), one with manage-teams (no grant on workspaces) — 3,000 workspaces in 10 projects
 * (every tenth in the default project), 10 team-access rows a workspace (30,000) and 20 team-project
 * rows a project (200); beside it a second organization whose 10 teams all hold flags, which the
 * answer must not name. The owner is a user of the owners team, as a host vouches for it.
 *
 * The statement is the one the repository sends (caught by Kysely's log hook, with its values),
 * explained `RUNS` times each way: unnamed (the planner sees the values: a custom plan) and as a
 * prepared statement under `plan_cache_mode = force_generic_plan` (what the service's pool of named
 * statements may settle on after five executions). Prints the median and the range of the
 * execution and planning times, and the plan of the median run; and a digest of the answers on
 * every 29th workspace, which a change of the statement must leave as it is.
 *
 * Settings: BENCH_DATABASE_URL (an admin URL, default postgres://postgres@127.0.0.1:5432/postgres),
 * EFFECTIVE_ACCESS_RUNS (default 21), EFFECTIVE_ACCESS_WORKSPACE (default ws-ea-1234).
 */
import { createHash } from 'node:crypto'
import pg from 'pg'
import type { CompiledQuery } from 'kysely'
import { connect } from '../src/db/connect.js'
import { migrate } from '../src/db/migrate.js'
import { EffectiveAccessRepository } from '../src/effective-access/effective-access-repository.js'
import { throwawayDatabase } from './processes.js'

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const RUNS = Number(process.env.EFFECTIVE_ACCESS_RUNS ?? 21)
const WORKSPACE = process.env.EFFECTIVE_ACCESS_WORKSPACE ?? 'ws-ea-1234'
const TEAMS = 10_500
const WORKSPACES = 3_000
const ROWS_A_WORKSPACE = 10
const PROJECT_ROWS = 200
/** The owner, as a host vouches for it (no token). */
const OWNER = { kind: 'user', userId: 'user-ea-owner' } as const

/** The world's rows, by SQL. Team i's flags: 0 owners; 2100, 4200, 6300, 8400 one flag each; 1 manage-teams. */
const worldSql = (): string[] => [
  'insert into organizations (id, name) values (\'org-ea\', \'ea\'), (\'org-ea-other\', \'ea-other\')',
  'insert into projects (id, organization_id, name) select \'prj-ea-\' || p, \'org-ea\', \'project\' || p from generate_series(0, 9) p',
  `insert into workspaces (id, organization_id, name, project_id)
     select 'ws-ea-' || w, 'org-ea', 'workspace' || lpad(w::text, 4, '0'), 'prj-ea-' || (w % 10) from generate_series(0, ${WORKSPACES - 1}) w where w % 10 <> 9`,
  `insert into workspaces (id, organization_id, name) select 'ws-ea-' || w, 'org-ea', 'workspace' || lpad(w::text, 4, '0') from generate_series(0, ${WORKSPACES - 1}) w where w % 10 = 9`,
  `insert into teams (id, organization_id, name, visibility, is_owners, manage_workspaces, read_workspaces, manage_projects, read_projects, manage_teams)
     select 'team-ea-' || i, 'org-ea', 'team' || lpad(i::text, 5, '0'), case when i % 5 = 4 then 'secret' else 'organization' end,
       i = 0, i = 2100, i = 4200, i = 6300, i = 8400, i = 1
     from generate_series(0, ${TEAMS - 1}) i`,
  `insert into teams (id, organization_id, name, is_owners, manage_workspaces, read_workspaces)
     select 'team-other-' || i, 'org-ea-other', 'team' || i, i = 0, i % 2 = 1, i % 2 = 0 and i > 0 from generate_series(0, 9) i`,
  'insert into users (id, username) values (\'user-ea-owner\', \'owner\')',
  'insert into team_memberships (team_id, user_id) values (\'team-ea-0\', \'user-ea-owner\')',
  `insert into team_workspaces (id, organization_id, team_id, workspace_id, access, runs, variables, state_versions, sentinel_mocks, workspace_locking, run_tasks)
     select 'tws-ea-' || w || '-' || k, 'org-ea', 'team-ea-' || ((w * 37 + k * 1049) % ${TEAMS}), 'ws-ea-' || w,
       (array['read','plan','write','admin'])[1 + (w + k) % 4],
       (array['read','plan','apply','apply'])[1 + (w + k) % 4], (array['read','read','write','write'])[1 + (w + k) % 4],
       (array['read','read','write','write'])[1 + (w + k) % 4], (array['none','none','read','read'])[1 + (w + k) % 4],
       (w + k) % 4 >= 2, (w + k) % 4 = 3
     from generate_series(0, ${WORKSPACES - 1}) w, generate_series(0, ${ROWS_A_WORKSPACE - 1}) k`,
  `insert into team_projects (id, organization_id, team_id, project_id, access, project_settings, project_teams, project_variable_sets,
       runs, sentinel_mocks, state_versions, variables, workspace_create, workspace_locking, workspace_delete, workspace_move, run_tasks)
     select 'tprj-ea-' || i, 'org-ea', 'team-ea-' || (1000 + i * 7), 'prj-ea-' || (i % 10), 'read', 'read', 'none', 'none',
       'read', 'none', 'read', 'read', false, false, false, false, false from generate_series(0, ${PROJECT_ROWS - 1}) i`,
  'vacuum analyze'
]

interface Run { execution: number, planning: number, plan: string[] }

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const timeOf = (plan: string[], what: 'Execution' | 'Planning'): number => {
  const line = plan.find((l) => l.startsWith(`${what} Time:`))
  if (line === undefined) throw new Error(`no ${what} Time in the plan`)
  return Number(/([\d.]+) ms/.exec(line)![1])
}

async function explained (client: pg.Client, text: string, values: unknown[]): Promise<Run> {
  const { rows } = await client.query<{ 'QUERY PLAN': string }>(text, values)
  const plan = rows.map((r) => r['QUERY PLAN'])
  return { execution: timeOf(plan, 'Execution'), planning: timeOf(plan, 'Planning'), plan }
}

function report (name: string, runs: Run[]): void {
  const executions = runs.map((r) => r.execution)
  const m = median(executions)
  const at = runs.find((r) => r.execution === m)!
  console.log(`\n${name}: execution median ${m.toFixed(3)} ms (min ${Math.min(...executions).toFixed(3)}, max ${Math.max(...executions).toFixed(3)}, ${runs.length} runs); planning median ${median(runs.map((r) => r.planning)).toFixed(3)} ms`)
  console.log(`the plan of the median run:\n${at.plan.join('\n')}`)
}

async function main (): Promise<void> {
  const database = await throwawayDatabase(ADMIN_URL, `team_access_bench_ea_${process.pid}`)
  let statement: CompiledQuery | undefined
  const connection = await connect({ url: database.url }, { log: (event) => { if (event.level === 'query') statement = event.query } })
  const client = new pg.Client({ connectionString: database.url })
  try {
    await migrate(connection.db)
    await client.connect()
    await client.query('set search_path to team_access')
    const loading = performance.now()
    for (const text of worldSql()) await client.query(text)
    const counts = (await client.query(`select (select count(*) from teams) teams, (select count(*) from workspaces) workspaces,
      (select count(*) from team_workspaces) rows, (select count(*) from team_projects) project_rows`)).rows[0]
    console.log(`world loaded in ${((performance.now() - loading) / 1000).toFixed(1)} s: ${JSON.stringify(counts)}`)

    const answer = await new EffectiveAccessRepository(connection.db).ofWorkspace(OWNER, WORKSPACE)
    if (answer === undefined || statement === undefined) throw new Error(`the owner is not answered on ${WORKSPACE}`)
    const caught = statement
    console.log(`${WORKSPACE}: ${answer.length} teams answered (${answer.filter((x) => x.grants.some((g) => g.kind !== 'team-access' && g.kind !== 'team-project')).length} through a flag)`)
    console.log(`values: ${JSON.stringify(caught.parameters)}`)
    // the answers on every 29th workspace, as one digest: the same before and after a change of the statement
    const digest = createHash('sha256')
    for (let w = 0; w < WORKSPACES; w += 29) digest.update(JSON.stringify(await new EffectiveAccessRepository(connection.db).ofWorkspace(OWNER, `ws-ea-${w}`)))
    console.log(`the answers on ${Math.ceil(WORKSPACES / 29)} workspaces: sha256 ${digest.digest('hex')}`)

    const unnamed: Run[] = []
    for (let i = 0; i < RUNS + 2; i++) {
      const run = await explained(client, `explain (analyze, buffers) ${caught.sql}`, [...caught.parameters])
      if (i >= 2) unnamed.push(run) // the first two warm the caches
    }
    report('unnamed (custom plan)', unnamed)

    await client.query('set plan_cache_mode = force_generic_plan')
    await client.query(`prepare effective_access as ${caught.sql}`)
    const literals = caught.parameters.map((v) => v === null ? 'null' : client.escapeLiteral(String(v))).join(', ')
    const generic: Run[] = []
    for (let i = 0; i < RUNS + 2; i++) {
      const run = await explained(client, `explain (analyze, buffers) execute effective_access(${literals})`, [])
      if (i >= 2) generic.push(run)
    }
    report('prepared (generic plan)', generic)
  } finally {
    await client.end().catch(() => {})
    await connection.close()
    await database.drop()
  }
}

await main()
