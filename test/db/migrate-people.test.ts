import t from 'tap'
import { sql, type Kysely } from 'kysely'
import { migrations } from '../../migrations/index.js'
import { migrate, withSearchPath } from '../../src/db/migrate.js'
import { schemaOf } from '../../src/db/tables.js'
import { applySeed } from '../../src/directory/seed.js'
import { world } from '../fixtures/world.js'
import { freshDatabase, ENGINE } from '../helper.js'

/**
 * Migration 0012 (DESIGN §14): a database of 0011 with rows upgrades in place — every (user,
 * organization) with a team membership gets one active organization membership, managed as the
 * user's team memberships there (an API or host one before a seed's), nothing else changes — and
 * from then on a team membership inserted by anyone makes its organization membership. Emails are
 * unique case-insensitively. Down and up again is the same database.
 */
t.test(`0011 → 0012: an active organization membership for every team member (${ENGINE})`, async (t) => {
  const { db: typed } = await freshDatabase(t)
  const db = typed as unknown as Kysely<any>
  const down = async () => await withSearchPath(db, schemaOf(db), async (connection) => {
    for (const name of ['0014_organization_grant_teams', '0013_mirror', '0012_workspaces_and_people']) {
      await migrations[name]!.down!(connection)
      await connection.deleteFrom('team_access_migrations').where('name', '=', name).execute()
    }
  })
  await applySeed(db, world)
  await down()
  t.notOk((await db.introspection.getTables()).some((x) => x.name === 'organization_memberships'), 'at 0011 there are no organization memberships')
  // one membership the API made, beside the seed's: the person's organization membership is then the API's
  const someone = await db.selectFrom('team_memberships as m').innerJoin('teams as t', 't.id', 'm.team_id').select(['m.user_id', 't.organization_id']).orderBy('m.user_id').executeTakeFirstOrThrow()
  const other = await db.selectFrom('teams').select('id').where('organization_id', '=', someone.organization_id)
    .where('id', 'not in', db.selectFrom('team_memberships').select('team_id').where('user_id', '=', someone.user_id)).orderBy('id').executeTakeFirstOrThrow()
  await db.insertInto('team_memberships').values({ team_id: other.id, user_id: someone.user_id, managed_by: 'api' }).execute()
  const rowsOf = async (table: string) => (await sql<{ row: string }>`select to_jsonb(t) - 'description' - 'settings' - 'email' as row from ${sql.table(table)} t`.execute(db)).rows.map((r) => JSON.stringify(r.row)).sort()
  const tables = ['organizations', 'users', 'teams', 'team_memberships', 'workspaces', 'team_workspaces', 'tokens', 'projects', 'team_projects', 'audit_events']
  const before = Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await rowsOf(table)] as const)))
  const pairs = await db.selectFrom('team_memberships as m').innerJoin('teams as t', 't.id', 'm.team_id')
    .select(['m.user_id', 't.organization_id']).distinct().orderBy('m.user_id').orderBy('t.organization_id').execute()
  t.ok(pairs.length >= 3, 'the world has members in more than one team')

  t.same((await migrate(db)).map((r) => [r.migrationName, r.status]), [['0012_workspaces_and_people', 'Success'], ['0013_mirror', 'Success'], ['0014_organization_grant_teams', 'Success']])
  for (const table of tables) t.same(await rowsOf(table), before[table], `${table}: every row kept as it was`)
  const memberships = await db.selectFrom('organization_memberships').selectAll().orderBy('user_id').orderBy('organization_id').execute()
  t.same(memberships.map((m) => [m.user_id, m.organization_id, m.status]), pairs.map((p) => [p.user_id, p.organization_id, 'active']), 'one active membership per (user, organization) with a team membership, nothing more')
  t.ok(memberships.every((m) => /^ou-[1-9A-HJ-NP-Za-km-z]{16}$/.test(m.id)), 'ids of the service’s shape')
  t.same(memberships.filter((m) => m.managed_by === 'api').map((m) => [m.user_id, m.organization_id]), [[someone.user_id, someone.organization_id]],
    'managed by the API where one of the person’s team memberships there is the API’s; the seed’s otherwise')
  t.ok(memberships.filter((m) => m.user_id !== someone.user_id || m.organization_id !== someone.organization_id).every((m) => m.managed_by === 'seed'))

  // from now on: a team membership inserted by anyone makes the organization membership, once
  await db.insertInto('organizations').values({ id: 'org-new', name: 'new' }).execute()
  await db.insertInto('teams').values([{ id: 'team-n1', organization_id: 'org-new', name: 'n1' }, { id: 'team-n2', organization_id: 'org-new', name: 'n2' }]).execute()
  await db.insertInto('users').values({ id: 'user-new', username: 'newcomer', email: 'New@Example.com' }).execute()
  await db.insertInto('team_memberships').values([{ team_id: 'team-n1', user_id: 'user-new' }, { team_id: 'team-n2', user_id: 'user-new' }]).execute()
  const made = await db.selectFrom('organization_memberships').select(['status', 'managed_by']).where('user_id', '=', 'user-new').execute()
  t.same(made, [{ status: 'active', managed_by: 'host' }], 'one active membership, managed as the team membership that made it')
  await t.rejects(db.insertInto('users').values({ id: 'user-twin', username: 'twin', email: 'new@EXAMPLE.com' }).execute(), { code: '23505' }, 'emails unique case-insensitively')
  await t.rejects(db.insertInto('users').values({ id: 'user-nobody' }).execute(), { code: '23514' }, 'a user has a username or an email')
  await t.rejects(db.insertInto('users').values({ id: 'user-bad', email: 'not an email' }).execute(), { code: '23514' }, 'an email has one @ and no spaces')
  await db.insertInto('users').values({ id: 'user-invited', email: 'invited@example.com' }).execute()
  await db.deleteFrom('organizations').where('id', '=', 'org-new').execute()
  t.same(await db.selectFrom('organization_memberships').select('id').where('user_id', '=', 'user-new').execute(), [], 'an organization takes its memberships')
  await db.deleteFrom('users').where('id', '=', 'user-new').execute()

  await down()
  for (const table of tables.filter((x) => x !== 'audit_events')) t.same(await rowsOf(table), before[table], `${table}: down again, as it was`)
})
