import t from 'tap'
import { migrations } from '../../migrations/index.js'
import { sql, type Kysely } from 'kysely'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseNewer, migrate, MigrationsPending, withSearchPath } from '../../src/db/migrate.js'
import { buildApp } from '../../src/app.js'
import { connect } from '../../src/db/connect.js'
import { schemaOf } from '../../src/db/tables.js'
import { freshDatabase, freshLocation, testConfig, ENGINE } from '../helper.js'

t.test(`migrations on ${ENGINE}`, async (t) => {
  const { db } = await freshDatabase(t) // applies them once

  t.test('applying them twice is a no-op', async (t) => {
    t.same(await migrate(db), [], 'nothing left to apply')
    const tables = await db.introspection.getTables()
    t.same(tables.map((x) => x.name).sort(),
      ['audit_events', 'mirrors', 'organization_membership_teams', 'organization_memberships', 'organizations', 'projects', 'revoked_tokens', 'seed_grants', 'team_access_migrations', 'team_access_migrations_lock', 'team_memberships',
        'team_projects', 'team_workspaces', 'teams', 'tokens', 'users', 'workspace_access_counts', 'workspaces'])
  })

  await db.insertInto('organizations').values([{ id: 'org-a', name: 'a' }, { id: 'org-b', name: 'b' }]).execute()
  await db.insertInto('teams').values([
    { id: 'team-a', organization_id: 'org-a', name: 'a' },
    { id: 'team-b', organization_id: 'org-b', name: 'b' }
  ]).execute()
  await db.insertInto('workspaces').values([
    { id: 'ws-a', organization_id: 'org-a', name: 'a' },
    { id: 'ws-b', organization_id: 'org-b', name: 'b' }
  ]).execute()
  const row = {
    id: 'tws-1',
    organization_id: 'org-a',
    team_id: 'team-a',
    workspace_id: 'ws-a',
    access: 'read' as const,
    runs: 'read' as const,
    variables: 'read' as const,
    state_versions: 'read' as const,
    sentinel_mocks: 'none' as const,
    workspace_locking: false,
    run_tasks: false
  }

  const rejects = async (t: Test, what: string, write: () => Promise<unknown>, code: string) => {
    await t.rejects(write(), { code }, what)
  }
  type Test = typeof t

  t.test('CHECK constraints reject every value outside its enum', async (t) => {
    await rejects(t, 'access', () => db.insertInto('team_workspaces').values({ ...row, access: 'owner' as any }).execute(), '23514')
    await rejects(t, 'runs', () => db.insertInto('team_workspaces').values({ ...row, runs: 'destroy' as any }).execute(), '23514')
    await rejects(t, 'variables', () => db.insertInto('team_workspaces').values({ ...row, variables: 'all' as any }).execute(), '23514')
    await rejects(t, 'state_versions', () => db.insertInto('team_workspaces').values({ ...row, state_versions: 'outputs' as any }).execute(), '23514')
    await rejects(t, 'sentinel_mocks', () => db.insertInto('team_workspaces').values({ ...row, sentinel_mocks: 'write' as any }).execute(), '23514')
    await rejects(t, 'visibility', () => db.insertInto('teams').values({ id: 'team-x', organization_id: 'org-a', name: 'x', visibility: 'public' as any }).execute(), '23514')
    await rejects(t, 'token kind', () => db.insertInto('tokens').values({ id: 'at-x', kind: 'robot' as any, organization_id: 'org-a', team_id: null, user_id: null, digest: 'a'.repeat(64), expires_at: null }).execute(), '23514')
    await rejects(t, 'token subject must match its kind', () => db.insertInto('tokens').values({ id: 'at-x', kind: 'team', organization_id: 'org-a', team_id: null, user_id: null, digest: 'a'.repeat(64), expires_at: null }).execute(), '23514')
    await rejects(t, 'a digest, never a secret', () => db.insertInto('tokens').values({ id: 'at-x', kind: 'organization', organization_id: 'org-a', team_id: null, user_id: null, digest: 'my-secret', expires_at: null }).execute(), '23514')
  })

  t.test('one row per team and workspace; team and workspace of the same organization', async (t) => {
    await db.insertInto('team_workspaces').values(row).execute()
    await rejects(t, 'duplicate pair', () => db.insertInto('team_workspaces').values({ ...row, id: 'tws-2' }).execute(), '23505')
    await rejects(t, 'team of another organization', () => db.insertInto('team_workspaces').values({ ...row, id: 'tws-3', team_id: 'team-b' }).execute(), '23503')
    await rejects(t, 'workspace of another organization', () => db.insertInto('team_workspaces').values({ ...row, id: 'tws-4', workspace_id: 'ws-b' }).execute(), '23503')
    await rejects(t, 'a second owners team', async () => {
      await db.insertInto('teams').values({ id: 'team-o1', organization_id: 'org-a', name: 'o1', is_owners: true }).execute()
      await db.insertInto('teams').values({ id: 'team-o2', organization_id: 'org-a', name: 'o2', is_owners: true }).execute()
    }, '23505')
  })

  t.test('a row carries its team’s visibility, and follows it when the team changes', async (t) => {
    const visibility = async () => (await db.selectFrom('team_workspaces').select('team_visibility').where('id', '=', 'tws-1').executeTakeFirstOrThrow()).team_visibility
    t.equal(await visibility(), 'secret', 'taken from the team on insert')
    await db.updateTable('teams').set({ visibility: 'organization' }).where('id', '=', 'team-a').execute()
    t.equal(await visibility(), 'organization', 'changed with the team')
    await db.updateTable('teams').set({ visibility: 'secret' }).where('id', '=', 'team-a').execute()
    t.equal(await visibility(), 'secret')
  })

  t.test('deleting a team or workspace removes its access rows', async (t) => {
    await db.deleteFrom('teams').where('id', '=', 'team-a').execute()
    const left = await db.selectFrom('team_workspaces').select('id').execute()
    t.same(left, [])
  })

  t.test('listing by workspace has its index', async (t) => {
    const { rows } = await sql<{ indexname: string }>`select indexname from pg_indexes where tablename = 'team_workspaces'`.execute(db)
    t.ok(rows.some((r) => r.indexname === 'team_workspaces_workspace_idx'))
  })

  t.test('one missing from the table: the Migrator applies it; all there: two reads answer', async (t) => {
    // the latest migration undone and forgotten, as before an upgrade (a new database comes migrated on PGlite)
    const latest = Object.keys(migrations).sort().at(-1)!
    await withSearchPath(db, schemaOf(db), async (connection) => {
      await migrations[latest]!.down!(connection)
      await connection.deleteFrom('team_access_migrations').where('name', '=', latest).execute()
    })
    const applied = await migrate(db)
    t.same(applied.map((r) => [r.migrationName, r.status]), [[latest, 'Success']])
    t.same(await migrate(db), [], 'then nothing left to apply')
  })

  t.test('audit events: a UUID of their own, no foreign keys (they outlive what they name), append-only', async (t) => {
    const event = { organization_id: 'org-a', accessor_kind: 'user' as const, accessor_id: 'user-x', accessor_description: 'x', request_id: 'req-1', action: 'add_team' as const, workspace_id: 'ws-a', team_id: 'team-gone', team_name: 'gone', permissions: 'access=read' }
    // team-gone exists nowhere: an event needs no row of what it names
    const { id } = await db.insertInto('audit_events').values(event).returning('id').executeTakeFirstOrThrow()
    t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a random UUID from the database')
    await rejects(t, 'an unknown action', () => db.insertInto('audit_events').values({ ...event, action: 'delete_everything' as any }).execute(), '23514')
    await rejects(t, 'an unknown accessor kind', () => db.insertInto('audit_events').values({ ...event, accessor_kind: 'robot' as any }).execute(), '23514')
    await rejects(t, 'a token caller without its id', () => db.insertInto('audit_events').values({ ...event, accessor_id: null }).execute(), '23514')
    await db.insertInto('audit_events').values({ ...event, accessor_kind: 'system', accessor_id: null, accessor_description: 'seed' }).execute()
    await rejects(t, 'an event is never rewritten', () => db.updateTable('audit_events').set({ team_name: 'other' }).where('id', '=', id).execute(), '42501')
    await db.deleteFrom('audit_events').execute() // the retention purge deletes
    const { rows } = await sql<{ indexdef: string }>`select indexdef from pg_indexes where tablename = 'audit_events' order by indexname`.execute(db)
    t.same(rows.map((r) => r.indexdef.replace(/^.* USING /, '')), ['brin (occurred_at)', 'btree (organization_id, occurred_at, id)'],
      'one B-tree, in the order of an organization’s trail (the primary key), and a BRIN index for the purge')
  })
})

t.test(`MIGRATE_ON_START=false and a database of a newer version on ${ENGINE}`, async (t) => {
  // on disk, so that the job and the replicas open the same embedded database (one at a time), in
  // a schema of its own: the embedded database's pre-migrated snapshot is the default schema's
  let location = await freshLocation(t)
  if (ENGINE === 'pglite') {
    const dataDir = mkdtempSync(join(tmpdir(), 'team-access-migrate-'))
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
    location = { dataDir }
  }
  const schema = 'ops_job'
  const config = testConfig(location, { migrateOnStart: false, schema })
  const job = async <T> (work: (db: Kysely<any>) => Promise<T>): Promise<T> => {
    const { db, close } = await connect(location, { schema })
    try { return await work(db) } finally { await close() }
  }
  const pending = { message: new MigrationsPending().message }
  await t.rejects(buildApp(config, { logger: false }), pending, 'a replica refuses a database the job has not migrated yet')

  t.ok((await job(migrate)).length > 0, 'the job migrates')
  const replica = await buildApp(config, { logger: false })
  t.equal((await replica.inject('/readyz')).statusCode, 200, 'then the replica starts, migrating nothing')
  await replica.close()

  // what a rollback of the code alone finds: a migration of the newer version in the table
  await job(async (db) => await db.withSchema(schema).insertInto('team_access_migrations').values({ name: '9999_from_the_future', timestamp: new Date().toISOString() }).execute())
  const newer = { name: 'Error', message: new DatabaseNewer(['9999_from_the_future']).message }
  t.match(newer.message, /migrated by a newer team-access \(9999_from_the_future, unknown to this version\)/)
  await t.rejects(job(migrate), newer, 'the job refuses to migrate it')
  await t.rejects(buildApp(config, { logger: false }), newer, 'a replica with MIGRATE_ON_START=false refuses to serve it')
  await t.rejects(buildApp({ ...config, migrateOnStart: true }, { logger: false }), newer, 'so does one that migrates on start')
})
