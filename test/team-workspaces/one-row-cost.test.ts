import t from 'tap'
import { CompiledQuery, sql, type Kysely } from 'kysely'
import { applySeedDocument } from '../../src/directory/seed.js'
import { TeamWorkspacesRepository } from '../../src/team-workspaces/team-workspaces-repository.js'
import { WorkspacesRepository } from '../../src/workspaces/workspaces-repository.js'
import type { Database } from '../../src/db/database.js'
import type { Caller } from '../../src/auth/caller.js'
import { updateChanges, type UpdateChanges } from '../../src/access/permissions.js'
import { ENGINE, freshDatabase } from '../helper.js'

/**
 * A statement about one row or one workspace (a show of a row or of a workspace, a page of one
 * workspace's rows, an update, a removal) reads what that workspace needs, however many rows the
 * caller's teams hold elsewhere: the test of the caller's rows on the workspace is a probe per team, not a hash of
 * every row its teams hold (src/access/predicates.ts, `Judged`). Measured in the team-access rows
 * each statement reads (EXPLAIN ANALYZE), which count rows, not time.
 */
const seed = {
  users: [{ id: 'user-dev', username: 'dev' }],
  organizations: [{
    id: 'org-acme',
    name: 'acme',
    teams: [{ id: 'team-dev', name: 'dev', members: ['dev'] }, { id: 'team-ops', name: 'ops', visibility: 'secret' }],
    workspaces: [{ id: 'ws-app', name: 'app' }],
    'team-access': [{ team: 'dev', workspace: 'app', access: 'admin' }, { team: 'ops', workspace: 'app', access: 'read' }]
  }]
}
const dev: Caller = { kind: 'user', userId: 'user-dev' }

/** `db`, with every statement sent through it kept, to be explained afterwards. */
function watched (db: Kysely<Database>): { db: Kysely<Database>, sent: CompiledQuery[] } {
  const sent: CompiledQuery[] = []
  const proxy = new Proxy(db, {
    get (target, property) {
      if (property === 'executeQuery') return async (query: CompiledQuery) => { sent.push(query); return await target.executeQuery(query) }
      const value = Reflect.get(target, property, target) as unknown
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    }
  })
  return { db: proxy, sent }
}

class Rollback extends Error {}

interface PlanNode { 'Node Type': string, 'Relation Name'?: string, 'Index Cond'?: string, 'Actual Rows': number, 'Actual Loops': number, 'Rows Removed by Filter'?: number, Plans?: PlanNode[] }

/**
 * The team-access rows a plan read, over every node that scans the table (subplans included), and
 * how many times it scanned it. (EXPLAIN's rows are per scan and rounded: a probe that finds one
 * row of two may count none.)
 */
const rowsRead = (node: PlanNode): { rows: number, scans: number } => (node.Plans ?? []).map(rowsRead).reduce(
  (sum, child) => ({ rows: sum.rows + child.rows, scans: sum.scans + child.scans }),
  node['Relation Name'] === 'team_workspaces' ? { rows: node['Actual Rows'] * node['Actual Loops'], scans: node['Actual Loops'] } : { rows: 0, scans: 0 })

/** A value as an SQL literal, for EXECUTE. */
const literal = (value: unknown): string => value === null
  ? 'null'
  : typeof value === 'string' ? `'${value.replaceAll("'", "''")}'` : Array.isArray(value) ? `array[${value.map(literal).join(', ')}]` : String(value)

let prepared = 0

/**
 * The team-access rows one statement reads on its generic plan — the plan the service's named
 * statements settle on from their sixth call when it costs no more than a custom one, forced here —
 * in a transaction that is rolled back (a write changes nothing).
 */
async function rowsReadBy (db: Kysely<Database>, query: CompiledQuery): Promise<{ rows: number, scans: number }> {
  return rowsRead(await planOf(db, query))
}

/** The nodes of a plan that scan `table`. */
const scansOf = (node: PlanNode, table: string): PlanNode[] =>
  [...(node['Relation Name'] === table ? [node] : []), ...(node.Plans ?? []).flatMap((child) => scansOf(child, table))]

/** One statement's generic plan, executed (EXPLAIN ANALYZE) in a transaction that is rolled back. */
async function planOf (db: Kysely<Database>, query: CompiledQuery): Promise<PlanNode> {
  let plan: PlanNode | undefined
  // a name of its own each time: a prepared statement outlives its transaction, a failed one too
  const name = `judged_${++prepared}`
  await db.transaction().execute(async (trx) => {
    await sql`set local plan_cache_mode = force_generic_plan`.execute(trx)
    await trx.executeQuery(CompiledQuery.raw(`prepare ${name} as ${query.sql}`))
    const { rows: [row] } = await trx.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      CompiledQuery.raw(`explain (analyze, format json) execute ${name}(${query.parameters.map(literal).join(', ')})`))
    plan = row!['QUERY PLAN'][0]!.Plan
    await sql`deallocate ${sql.raw(name)}`.execute(trx)
    throw new Rollback()
  }).catch((err: unknown) => { if (!(err instanceof Rollback)) throw err })
  return plan!
}

t.test(`one row's statements do not read the caller's other rows, on ${ENGINE}`, async (t) => {
  const { db } = await freshDatabase(t)
  await applySeedDocument(db, seed)
  const { db: seen, sent } = watched(db)
  const repository = new TeamWorkspacesRepository(seen)
  const workspaces = new WorkspacesRepository(seen)
  let checks: Record<'check' | 'checkMany', CompiledQuery> | undefined
  const statements = async (): Promise<Record<string, CompiledQuery>> => {
    sent.length = 0
    const row = await repository.find(dev, 'tws-ops-app')
    t.equal(row?.team_id, 'team-ops', 'an admin of the workspace sees the secret team\'s row')
    const list = await repository.list(dev, { workspaceId: 'ws-app' }, { number: 1, size: 20 })
    t.equal(list?.total, 2)
    t.equal((await workspaces.find(dev, 'ws-app'))?.name, 'app')
    const [show, page, workspace] = sent
    t.match(show?.sql, /from "team_access"."team_workspaces" as "tw"/)
    t.match(page?.sql, /limit \$\d+ offset \$\d+/)
    t.match(workspace?.sql, /from "team_access"."workspaces" as "w"/)
    // the statements that update and remove, sent for a row that is not there, then explained
    // (and rolled back) for the real one
    sent.length = 0
    t.equal((await repository.update(dev, 'tws-none', updateChanges('write', {}) as UpdateChanges, 'req-1')).updated, undefined)
    t.notOk(await repository.remove(dev, 'tws-none', 'req-1'))
    const [update, remove] = sent.filter((q) => q.sql.startsWith('with "grants"')).map((q) => CompiledQuery.raw(q.sql, q.parameters.map((p) => p === 'tws-none' ? 'tws-ops-app' : p)))
    t.match(update?.sql, /update "team_access"."team_workspaces"/)
    t.match(remove?.sql, /delete from "team_access"."team_workspaces"/)
    // the host's check (DESIGN §10), of one workspace and of fifty
    sent.length = 0
    t.equal((await repository.grantsOn(dev, ['ws-app'])).get('ws-app')?.length, 1)
    await repository.grantsOn(dev, ['ws-app', ...Array.from({ length: 49 }, (_, n) => `ws-more-${n + 1}`)])
    const [check, checkMany] = sent
    checks = { check: check!, checkMany: checkMany! }
    return { show: show!, page: page!, workspace: workspace!, update: update!, remove: remove! }
  }
  await sql`update team_access.team_workspaces set id = 'tws-ops-app' where team_id = 'team-ops'`.execute(db)
  // an organization as they come: many teams of a few rows each, many rows on each workspace —
  // which makes PostgreSQL read the caller's rows whole (a hash) rather than those of the workspace
  await sql`insert into team_access.workspaces (id, organization_id, name, project_id)
    select 'ws-more-' || n, w.organization_id, 'more-' || n, w.project_id from team_access.workspaces w, generate_series(1, 200) n where w.id = 'ws-app'`.execute(db)
  await sql`insert into team_access.teams (id, organization_id, name, visibility)
    select 'team-t-' || n, 'org-acme', 't-' || n, 'organization' from generate_series(1, 3000) n`.execute(db)
  await sql`insert into team_access.team_workspaces (id, organization_id, team_id, workspace_id, access,
      runs, variables, state_versions, sentinel_mocks, workspace_locking, run_tasks, policy_overrides)
    select 'tws-t-' || n || '-' || k, 'org-acme', 'team-t-' || n, 'ws-more-' || ((n * 2 + k) % 200 + 1), 'read', 'read', 'read', 'read', 'none', false, false, false
    from generate_series(1, 3000) n, generate_series(0, 1) k`.execute(db)
  // before any statistics (PGlite keeps none unless told to ANALYZE): the host's check starts from
  // the caller's teams, not from the workspace's organization's 3,000
  sent.length = 0
  await repository.grantsOn(dev, ['ws-app'])
  const teamsRead = scansOf(await planOf(db, sent[0]!), 'teams')
    .reduce((sum, scan) => sum + (scan['Actual Rows'] + (scan['Rows Removed by Filter'] ?? 0)) * scan['Actual Loops'], 0)
  t.ok(teamsRead <= 2, `the check reads ${teamsRead} teams with no statistics`)
  await sql`analyze`.execute(db)

  const before = await statements()
  const small: Record<string, { rows: number, scans: number }> = {}
  for (const [name, query] of Object.entries(before)) small[name] = await rowsReadBy(db, query)

  // the caller's team comes to hold admin on the 200 workspaces
  await sql`insert into team_access.team_workspaces (id, organization_id, team_id, workspace_id, access,
      runs, variables, state_versions, sentinel_mocks, workspace_locking, run_tasks, policy_overrides)
    select 'tws-dev-' || w.id, w.organization_id, 'team-dev', w.id, 'admin', 'apply', 'write', 'write', 'read', true, true, false
    from team_access.workspaces w where w.id like 'ws-more-%'`.execute(db)
  await sql`analyze`.execute(db)

  const after = await statements()
  for (const [name, query] of Object.entries(after)) {
    const { rows: large } = await rowsReadBy(db, query)
    t.ok(small[name]!.scans > 0, `${name}: explained (team-access rows scanned ${small[name]!.scans} times)`)
    // a hash of the caller's rows reads each of the 201
    t.ok(large <= small[name]!.rows + 10, `${name}: ${small[name]!.rows} team-access rows read with one row of the caller's team, ${large} with 201`)
  }
  // the host's check, of one workspace and of fifty: each of the caller's teams' rows is probed by
  // its (team, workspace) key, not read team by team and filtered; an organization membership, which
  // grants nothing on a workspace, is not read at all
  for (const [name, query] of Object.entries(checks!)) {
    const plan = await planOf(db, query)
    const rows = scansOf(plan, 'team_workspaces')
    t.ok(rows.length > 0 && rows.every((scan) => /team_id = .*workspace_id = /.test(scan['Index Cond'] ?? '')),
      `${name}: team-access rows probed by (team, workspace): ${rows.map((scan) => `${scan['Node Type']} (${scan['Index Cond'] ?? 'no key'})`).join('; ')}`)
    t.same(scansOf(plan, 'organization_memberships'), [], `${name}: no organization membership read`)
  }
  // an organization's token owns its organization and acts through no team: its show, update and
  // removal of a row read that row, not the rule's branches for a caller's teams (which PostgreSQL
  // sets up on every execution, executed or not)
  const owner: Caller = { kind: 'organization', organizationId: 'org-acme' }
  sent.length = 0
  t.equal((await repository.find(owner, 'tws-ops-app'))?.team_id, 'team-ops', 'the owner sees the secret team\'s row')
  t.equal((await repository.update(owner, 'tws-none', updateChanges('write', {}) as UpdateChanges, 'req-3')).updated, undefined)
  t.notOk(await repository.remove(owner, 'tws-none', 'req-3'))
  const ownerStatements = sent.filter((q) => q.sql.startsWith('with "grants"')).map((q) => CompiledQuery.raw(q.sql, q.parameters.map((p) => p === 'tws-none' ? 'tws-ops-app' : p)))
  t.equal(ownerStatements.length, 3)
  for (const [k, name] of ['show', 'update', 'remove'].entries()) {
    const scans = scansOf(await planOf(db, ownerStatements[k]!), 'team_workspaces').filter((scan) => scan['Node Type'] !== 'ModifyTable')
    t.ok(scans.length > 0 && scans.every((scan) => /^\(id = /.test(scan['Index Cond'] ?? '')),
      `the owner's ${name} reads team-access rows by id alone: ${scans.map((scan) => scan['Index Cond'] ?? scan['Node Type']).join('; ')}`)
  }
  t.ok(await repository.remove(dev, 'tws-ops-app', 'req-2'), 'and the row is removed for real, once')
})
