import t from 'tap'
import { sql, type Kysely } from 'kysely'
import { migrations } from '../../migrations/index.js'
import { ORGANIZATION_ACCESS_COLUMNS } from '../../migrations/0009_directory_api.js'
import { migrate, withSearchPath } from '../../src/db/migrate.js'
import { schemaOf } from '../../src/db/tables.js'
import { applySeed } from '../../src/directory/seed.js'
import { freshDatabase, ENGINE } from '../helper.js'

/**
 * Migration 0008 (DESIGN §9.1): a database of 0007 with rows upgrades in place — every row kept,
 * every row seed-managed (they were all written by seeds) — and rows written afterwards without
 * a source are the host's.
 */
const DIRECTORY = ['organizations', 'users', 'teams', 'team_memberships', 'workspaces', 'tokens'] as const

t.test(`0007 → 0008 keeps every row, each seed-managed (${ENGINE})`, async (t) => {
  const { db: typed } = await freshDatabase(t)
  const db = typed as unknown as Kysely<any>
  // back to 0007, as a database made before this release (a new embedded one starts at the latest)
  await withSearchPath(db, schemaOf(db), async (connection) => {
    for (const name of Object.keys(migrations).filter((name) => name >= '0008').sort().reverse()) {
      await migrations[name]!.down!(connection)
      await connection.deleteFrom('team_access_migrations').where('name', '=', name).execute()
    }
  })
  const columns = async (table: string) => (await db.introspection.getTables()).find((x) => x.name === table)!.columns.map((c) => c.name)
  t.notOk((await columns('teams')).includes('managed_by'), 'at 0007 there is no source')

  // rows as the seeds of 0007 wrote them: no source
  await db.insertInto('organizations').values({ id: 'org-old', name: 'old' }).execute()
  await db.insertInto('users').values({ id: 'user-old', username: 'old' }).execute()
  await db.insertInto('teams').values({ id: 'team-old', organization_id: 'org-old', name: 'owners', is_owners: true }).execute()
  await db.insertInto('team_memberships').values({ team_id: 'team-old', user_id: 'user-old' }).execute()
  await db.insertInto('workspaces').values({ id: 'ws-old', organization_id: 'org-old', name: 'w' }).execute()
  await db.insertInto('tokens').values([
    { id: 'at-old-1', kind: 'user', user_id: 'user-old', digest: 'a'.repeat(64) },
    { id: 'at-old-2', kind: 'team', team_id: 'team-old', digest: 'b'.repeat(64) },
    { id: 'at-old-3', kind: 'organization', organization_id: 'org-old', digest: 'c'.repeat(64) }
  ]).execute()
  await db.insertInto('team_workspaces').values({ id: 'tws-old', organization_id: 'org-old', team_id: 'team-old', workspace_id: 'ws-old', access: 'admin', runs: 'apply', variables: 'write', state_versions: 'write', sentinel_mocks: 'read', workspace_locking: true, run_tasks: true }).execute()
  await db.insertInto('seed_grants').values({ fingerprint: 'f'.repeat(64) }).execute()
  // every column but those 0008 adds (and 0009, 0011, 0012)
  const added = (table: string) => (table === 'seed_grants' ? ['team_id', 'workspace_id'] : table === 'tokens' ? ['managed_by', 'description', 'last_used_at', 'created_by'] : table === 'teams' ? ['managed_by', 'sso_team_id', 'allow_member_token_management', ...ORGANIZATION_ACCESS_COLUMNS] : table === 'workspaces' ? ['managed_by', 'project_id', 'description', 'settings'] : table === 'users' ? ['managed_by', 'email'] : ['managed_by'])
  const rowsOf = async (table: string) => (await sql<{ row: string }>`select to_jsonb(t) - ${sql.val(added(table))}::text[] as row from ${sql.table(table)} t`.execute(db))
    .rows.map((r) => JSON.stringify(r.row)).sort()
  const before = Object.fromEntries(await Promise.all([...DIRECTORY, 'seed_grants', 'team_workspaces'].map(async (table) => [table, await rowsOf(table)] as const)))
  t.ok(DIRECTORY.every((table) => before[table]!.length > 0), 'a row in every directory table')

  const applied = await migrate(db)
  t.same(applied.map((r) => [r.migrationName, r.status]), Object.keys(migrations).filter((name) => name >= '0008').sort().map((name) => [name, 'Success']))
  for (const table of [...DIRECTORY, 'seed_grants', 'team_workspaces']) {
    t.same(await rowsOf(table), before[table], `${table}: every row kept as it was`)
  }
  for (const table of DIRECTORY) {
    const sources = await db.selectFrom(table).select('managed_by').distinct().execute()
    t.same(sources, [{ managed_by: 'seed' }], `${table}: every existing row seed-managed`)
  }
  t.same(await db.selectFrom('seed_grants').select(['team_id', 'workspace_id']).execute(), [{ team_id: null, workspace_id: null }],
    'a grant remembered before 0008 keeps no team or workspace')

  t.test('a row written without a source is the host’s; no other source is accepted', async (t) => {
    await db.insertInto('users').values({ id: 'user-new', username: 'new' }).execute()
    t.equal((await db.selectFrom('users').select('managed_by').where('id', '=', 'user-new').executeTakeFirstOrThrow()).managed_by, 'host')
    for (const table of DIRECTORY) {
      const { rows } = await sql<{ def: string }>`select pg_get_constraintdef(oid) as def from pg_constraint where conname = ${`${table}_managed_by_check`}`.execute(db)
      t.match(rows[0]?.def, /managed_by.*'seed'.*'api'.*'host'/, `${table}: a check constraint`)
    }
    await t.rejects(db.insertInto('users').values({ id: 'user-bad', username: 'bad', managed_by: 'robot' }).execute(), { code: '23514' })
  })

  t.test('the upgraded rows are the seed’s: a seed that no longer declares them removes them', async (t) => {
    const summary = await applySeed(typed, { organizations: [{ id: 'org-old', name: 'old' }] })
    t.same(summary.removed.users, ['old'], 'the old seed user (the host’s new one stays)')
    t.same(summary.removed.teams, ['old/owners'])
    t.same(summary.removed.workspaces, ['old/w'])
    t.same(summary.removed.tokens.sort(), ['organization old', 'team old/owners', 'user old'])
    t.same(await db.selectFrom('users').select('id').execute(), [{ id: 'user-new' }])
  })
})
