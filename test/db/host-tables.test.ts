import t, { type Test } from 'tap'
import Fastify from 'fastify'
import pg from 'pg'
import { Kysely, Migrator, PostgresDialect, sql, type Generated } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
// the package by its own name, as a host imports it
import teamAccess, { applySeed, migrate, type Database } from 'team-access'
import { migrations } from '../../migrations/index.js'
import { openPGlite } from '../../src/db/pglite.js'
import { inSchema } from '../../src/db/tables.js'
import { world, TOKENS } from '../fixtures/world.js'
import { tokenDigest } from '../../src/auth/token-digest.js'
import { permissionsOnAdd, type Permissions } from '../../src/access/permissions.js'
import { permissionColumns, pickPermissions } from '../../src/access/permission-columns.js'
import type { Access } from '../../schemas/common.js'
import { bearer, ENGINE, freshLocation } from '../helper.js'

/** A host's own tables, in `public`, with the names the plugin's tables have. */
interface HostTables {
  users: { id: Generated<number>, email: string }
  teams: { id: Generated<number>, title: string }
  organizations: { id: Generated<number>, domain: string }
  workspaces: { id: Generated<number>, path: string }
  tokens: { id: Generated<number>, value: string }
}
const HOST_TABLES = ['users', 'teams', 'organizations', 'workspaces', 'tokens'] as const

/**
 * The host's own Kysely, on a database of its own: a new PostgreSQL database, or an embedded one.
 * (An embedded database starts from the build's data directory: the plugin's schema is in it
 * already, as it would be after a first start; `public` is the host's alone.)
 */
async function hostDatabase<DB> (t: Test): Promise<Kysely<DB>> {
  const location = await freshLocation(t)
  const db = 'url' in location
    ? new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: location.url, max: 4 }) }) })
    : new Kysely<DB>({ dialect: new PGliteDialect(await openPGlite(location.dataDir)) })
  t.teardown(() => db.destroy())
  return db
}

async function createHostTables (db: Kysely<any>): Promise<void> {
  const columns = { users: 'email', teams: 'title', organizations: 'domain', workspaces: 'path', tokens: 'value' } as const
  for (const name of HOST_TABLES) {
    await db.schema.createTable(name).addColumn('id', 'serial', (c) => c.primaryKey())
      .addColumn(columns[name], 'text', (c) => c.notNull().unique()).execute()
  }
  await db.insertInto('users').values({ email: 'ann@example.com' }).execute()
  await db.insertInto('teams').values({ title: 'the host’s team' }).execute()
  await db.insertInto('organizations').values({ domain: 'example.com' }).execute()
  await db.insertInto('workspaces').values({ path: '/srv/www' }).execute()
  await db.insertInto('tokens').values({ value: 'the host’s own secret' }).execute()
}

/** Every row of the host's tables. */
async function hostRows (db: Kysely<any>): Promise<unknown> {
  return {
    users: await db.selectFrom('users').selectAll().orderBy('id').execute(),
    teams: await db.selectFrom('teams').selectAll().orderBy('id').execute(),
    organizations: await db.selectFrom('organizations').selectAll().orderBy('id').execute(),
    workspaces: await db.selectFrom('workspaces').selectAll().orderBy('id').execute(),
    tokens: await db.selectFrom('tokens').selectAll().orderBy('id').execute()
  }
}

/** Every row of the plugin's directory and access, in the schema given, sorted. */
async function pluginRows (db: Kysely<any>, schema: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {}
  for (const name of ['organizations', 'users', 'teams', 'team_memberships', 'workspaces', 'tokens', 'team_workspaces', 'workspace_access_counts', 'seed_grants', 'audit_events', 'revoked_tokens'] as const) {
    const rows = await inSchema(db, schema).selectFrom(name).selectAll().execute()
    // a workspace's project (migration 0011), its description and settings and a user's email (0012) are not among what a move keeps: they are new
    out[name] = rows.map((r) => JSON.stringify({ ...r, project_id: undefined, description: undefined, settings: undefined, email: undefined })).sort()
  }
  return out
}

const LIST = '/tfe/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-prod'

/**
 * The fixture world's rows as a service of 0009 wrote them, in `public`: the seed of today writes
 * what later migrations add (projects), so the rows of then are written as they were.
 */
async function worldAt0009 (db: Kysely<any>): Promise<void> {
  const flag = (team: { 'organization-access'?: Record<string, boolean> }, name: string) => team['organization-access']?.[name] ?? false
  const insert = async (table: string, rows: unknown[]) => { if (rows.length > 0) await db.insertInto(`public.${table}`).values(rows as any).execute() }
  await insert('users', world.users.map((u) => ({ id: u.id, username: u.username, managed_by: 'seed' })))
  await insert('tokens', world.users.flatMap((u) => (u.tokens as string[]).map((secret, i) => ({ id: `at-${u.id}-${i}`, kind: 'user', user_id: u.id, digest: tokenDigest(secret), managed_by: 'seed' }))))
  for (const org of world.organizations) {
    await db.insertInto('public.organizations').values({ id: org.id, name: org.name, managed_by: 'seed' }).execute()
    await insert('tokens', ('tokens' in org ? org.tokens as string[] : []).map((secret, i) => ({ id: `at-${org.id}-${i}`, kind: 'organization', organization_id: org.id, digest: tokenDigest(secret), managed_by: 'seed' })))
    for (const team of org.teams as Array<typeof org.teams[number] & { owners?: boolean, visibility?: string, members: string[], tokens?: string[], 'organization-access'?: Record<string, boolean> }>) {
      await db.insertInto('public.teams').values({
        id: team.id,
        organization_id: org.id,
        name: team.name,
        visibility: team.visibility ?? 'secret',
        is_owners: team.owners ?? false,
        manage_workspaces: flag(team, 'manage-workspaces'),
        read_workspaces: flag(team, 'read-workspaces'),
        managed_by: 'seed'
      }).execute()
      for (const username of team.members) {
        await db.insertInto('public.team_memberships').values({ team_id: team.id, user_id: world.users.find((u) => u.username === username)!.id, managed_by: 'seed' }).execute()
      }
      for (const [i, secret] of (team.tokens ?? []).entries()) {
        await db.insertInto('public.tokens').values({ id: `at-${team.id}-${i}`, kind: 'team', team_id: team.id, digest: tokenDigest(secret), managed_by: 'seed' }).execute()
      }
    }
    await insert('workspaces', org.workspaces.map((ws) => ({ id: ws.id, organization_id: org.id, name: ws.name, managed_by: 'seed' })))
    for (const grant of org['team-access'] as Array<{ id: string, team: string, workspace: string, access: Access } & Partial<Permissions>>) {
      const team = org.teams.find((x) => x.name === grant.team)!
      const ws = org.workspaces.find((x) => x.name === grant.workspace)!
      const permissions = permissionColumns(permissionsOnAdd(grant.access, pickPermissions(grant)))
      await db.insertInto('public.team_workspaces').values({ id: grant.id, organization_id: org.id, team_id: team.id, workspace_id: ws.id, access: grant.access, ...permissions }).execute()
      await db.insertInto('public.audit_events').values({
        organization_id: org.id,
        accessor_kind: 'system',
        accessor_description: 'seed',
        request_id: 'seed-at-0009',
        action: 'add_team',
        workspace_id: ws.id,
        team_id: team.id,
        team_name: team.name,
        permissions: `access=${grant.access}`
      }).execute()
    }
  }
}

t.test(`a host with users, teams, organizations, workspaces and tokens of its own in public, on ${ENGINE}`, async (t) => {
  // the host's type: its own tables, and the plugin's type beside them, as a host may write it
  const db = await hostDatabase<Database & HostTables>(t)
  await createHostTables(db)
  const before = await hostRows(db)
  const { rows: [path] } = await sql<{ path: string }>`select current_setting('search_path') as path`.execute(db)

  const host = Fastify()
  t.teardown(() => host.close())
  host.get('/users', async () => await db.selectFrom('users').select('email').execute())
  // the host's own Kysely, as it is: no cast
  await host.register(teamAccess, { prefix: '/tfe/api/v2', database: db })
  await host.ready()
  await applySeed(db, world)

  t.test('the API works beside them', async (t) => {
    const list = await host.inject({ url: LIST, headers: bearer(TOKENS.owner) })
    t.equal(list.statusCode, 200)
    t.equal(list.json().data.length, 3)
    const added = await host.inject({
      method: 'POST',
      url: '/tfe/api/v2/team-workspaces',
      headers: { ...bearer(TOKENS.owner), 'content-type': 'application/vnd.api+json' },
      payload: { data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { team: { data: { type: 'teams', id: 'team-blue' } }, workspace: { data: { type: 'workspaces', id: 'ws-prod' } } } } }
    })
    t.equal(added.statusCode, 200, 'an add: its triggers find the plugin’s teams, not the host’s')
    const team = await host.inject({
      method: 'POST',
      url: '/tfe/api/v2/organizations/acme/teams',
      headers: { ...bearer(TOKENS.owner), 'content-type': 'application/vnd.api+json' },
      payload: { data: { type: 'teams', attributes: { name: 'new-team' } } }
    })
    t.equal(team.statusCode, 201)
    const removed = await host.inject({ method: 'DELETE', url: `/tfe/api/v2/teams/${team.json().data.id as string}`, headers: bearer(TOKENS.owner) })
    t.equal(removed.statusCode, 204)
    t.equal((await host.inject({ url: LIST, headers: bearer('the host’s own secret') })).statusCode, 401, 'the host’s tokens table is not the plugin’s')
  })

  t.test('the host’s tables are untouched, and its connection’s search_path', async (t) => {
    t.same(await hostRows(db), before)
    t.same((await host.inject('/users')).json(), [{ email: 'ann@example.com' }])
    const { rows: [after] } = await sql<{ path: string }>`select current_setting('search_path') as path`.execute(db)
    t.equal(after!.path, path!.path)
    const { rows } = await sql<{ table_schema: string, table_name: string }>`select table_schema, table_name from information_schema.tables
      where table_schema in ('public', 'team_access') order by table_schema, table_name`.execute(db)
    t.same(rows.filter((r) => r.table_schema === 'public').map((r) => r.table_name), [...HOST_TABLES].sort(), 'public holds the host’s tables only')
    t.ok(rows.some((r) => r.table_schema === 'team_access' && r.table_name === 'team_access_migrations'), 'the migrations and their lock are in the plugin’s schema')
    const plugin = await pluginRows(db, 'team_access')
    t.equal(plugin.users!.length, world.users.length, 'the plugin’s users, in its schema')
  })
})

t.test(`a schema of the host's choosing, on ${ENGINE}`, async (t) => {
  const db = await hostDatabase<HostTables>(t)
  await createHostTables(db)
  const host = Fastify()
  t.teardown(() => host.close())
  await host.register(teamAccess, { prefix: '/tfe/api/v2', database: db, schema: 'access_control' })
  await host.ready()
  await applySeed(db, world, { schema: 'access_control' })
  t.equal((await host.inject({ url: LIST, headers: bearer(TOKENS.owner) })).statusCode, 200)
  const plugin = await pluginRows(db, 'access_control')
  t.equal(plugin.team_workspaces!.length, world.organizations.flatMap((o) => o['team-access']).length)
  if (ENGINE === 'postgres') { // (a new embedded database comes with the default schema made)
    const { rows } = await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = 'team_access'`.execute(db)
    t.same(rows, [], 'nothing in the default schema')
  }
})

t.test(`a database made before the schema (the plugin's tables in public) upgrades in place, on ${ENGINE}`, async (t) => {
  const db = await hostDatabase<any>(t)
  // the build's embedded database comes migrated: as before, from nothing
  await sql`drop schema if exists team_access cascade`.execute(db)
  // what main made until now: migrations 0001–0009 in public, their table and lock in public
  const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '0010'))
  const { error } = await new Migrator({
    db,
    provider: { getMigrations: async () => before },
    migrationTableName: 'team_access_migrations',
    migrationLockTableName: 'team_access_migrations_lock'
  }).migrateToLatest()
  t.error(error)
  await worldAt0009(db)
  const old = await pluginRows(db, 'public')
  t.ok(old.team_workspaces!.length > 0 && old.audit_events!.length > 0)

  const applied = await migrate(db)
  t.same(applied.map((m) => m.migrationName), ['0010_own_schema', '0011_projects', '0012_workspaces_and_people', '0013_mirror', '0014_organization_grant_teams'], 'the new migrations, after the move')
  t.same(await pluginRows(db, 'team_access'), old, 'every row, moved')
  const { rows } = await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = 'public'`.execute(db)
  t.same(rows, [], 'nothing of the plugin’s is left in public')
  const { rows: functions } = await sql<{ schema: string, config: string[] | null }>`select n.nspname as schema, p.proconfig as config
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace where p.proname like 'team_access_%' or p.proname = 'audit_events_append_only'`.execute(db)
  t.same(functions.map((f) => [f.schema, f.config]), functions.map(() => ['team_access', ['search_path="team_access"']]), 'the trigger functions, moved, with their schema as search_path')
  t.same(await migrate(db), [], 'a second start: nothing to move, nothing to apply')

  const host = Fastify()
  t.teardown(() => host.close())
  await host.register(teamAccess, { prefix: '/tfe/api/v2', database: db })
  const list = await host.inject({ url: LIST, headers: bearer(TOKENS.owner) })
  t.equal(list.statusCode, 200)
  t.equal(list.json().data.length, 3, 'the rows answer as before')
  const removed = await host.inject({ method: 'DELETE', url: `/tfe/api/v2/team-workspaces/${list.json().data[0].id as string}`, headers: bearer(TOKENS.owner) })
  t.equal(removed.statusCode, 204, 'and the moved triggers count what changes')
})
