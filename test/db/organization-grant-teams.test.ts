import t from 'tap'
import { CompiledQuery, createQueryId, sql, type KyselyPlugin, type RootOperationNode } from 'kysely'
import { freshDatabase, ENGINE } from '../helper.js'
import { table } from '../../src/db/tables.js'
import { teamGrants } from '../../src/access/grants.js'
import { grantsOrganizationWide } from '../../src/access/predicates.js'
import { ORGANIZATION_GRANTS } from '../../src/access/effective-access.js'
import { EffectiveAccessRepository } from '../../src/effective-access/effective-access-repository.js'

/**
 * Migration 0014's partial index of the teams that hold an organization-wide grant names its flags
 * itself (a migration imports nothing from src/); the rule is `grantsOrganizationWide` on a team's
 * grant row (ORGANIZATION_GRANTS). The two must pick the same teams — a team with any one boolean
 * column of `teams` set, each in turn — and a workspace's effective access, on an organization of
 * many teams, must find its flagged teams through the index rather than by reading every team.
 */
const INDEX = 'teams_organization_grants_idx'

t.test(`the index's teams are the rule's (${ENGINE})`, async (t) => {
  const { db, schema } = await freshDatabase(t)
  const { rows: columns } = await sql<{ name: string }>`select column_name as name from information_schema.columns
    where table_schema = ${schema} and table_name = 'teams' and data_type = 'boolean' order by column_name`.execute(db)
  t.ok(columns.length >= 10, 'the flags of teams, and the other organization-access columns')
  await db.insertInto('organizations').values({ id: 'org-flags', name: 'flags' }).execute()
  await db.insertInto('teams').values({ id: 'team-none', organization_id: 'org-flags', name: 'none' }).execute()
  for (const { name } of columns) {
    await db.insertInto('teams').values({ id: `team-${name}`, organization_id: 'org-flags', name, [name]: true } as never).execute()
  }

  const { rows: [index] } = await sql<{ predicate: string | null, definition: string }>`select pg_get_expr(i.indpred, i.indrelid) as predicate, pg_get_indexdef(i.indexrelid) as definition
    from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace where c.relname = ${INDEX} and n.nspname = ${schema}`.execute(db)
  t.ok(index?.predicate, `${INDEX} is a partial index: ${index?.definition}`)
  const byIndex = (await sql<{ id: string }>`select t.id from ${table.teams} t where ${sql.raw(index!.predicate!)} order by t.id`.execute(db)).rows.map((r) => r.id)
  const byRule = (await db.selectFrom(teamGrants(db).as('f')).where(grantsOrganizationWide('f')).select('f.team_id').orderBy('f.team_id').execute()).map((r) => r.team_id)
  t.equal(byRule.length, ORGANIZATION_GRANTS.length, 'one team for each flag of ORGANIZATION_GRANTS, set alone')
  t.same(byIndex, byRule, 'the index holds exactly the teams the rule grants organization-wide')
})

t.test(`a workspace's effective access finds the flagged teams of a large organization by the index (${ENGINE})`, async (t) => {
  const { db } = await freshDatabase(t)
  await db.insertInto('organizations').values({ id: 'org-big', name: 'big' }).execute()
  await sql`insert into ${table.teams} (id, organization_id, name, is_owners, manage_workspaces, read_workspaces, manage_projects, read_projects)
    select 'team-' || i, 'org-big', 'team' || i, i = 0, i = 100, i = 200, i = 300, i = 400 from generate_series(0, 2999) i`.execute(db)
  await db.insertInto('users').values({ id: 'user-owner', username: 'owner' }).execute()
  await db.insertInto('team_memberships').values({ team_id: 'team-0', user_id: 'user-owner' }).execute()
  await db.insertInto('workspaces').values({ id: 'ws-one', organization_id: 'org-big', name: 'one' }).execute()
  await sql`analyze`.execute(db)

  let statement: RootOperationNode | undefined
  const recorder: KyselyPlugin = { transformQuery: ({ node }) => { statement = node; return node }, transformResult: async ({ result }) => result }
  const answer = await new EffectiveAccessRepository(db.withPlugin(recorder)).ofWorkspace({ kind: 'user', userId: 'user-owner' }, 'ws-one')
  t.same(answer?.map((x) => x.teamId), ['team-0', 'team-100', 'team-200', 'team-300', 'team-400'], 'the owners team and the four flagged teams, by name')
  const compiled = db.getExecutor().compileQuery(statement!, createQueryId())
  const plan = (await db.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]))).rows.map((r) => r['QUERY PLAN']).join('\n')
  t.match(plan, INDEX, `the plan reads ${INDEX}`)
  t.notMatch(plan, /Seq Scan on teams/, 'and no team otherwise')
})
