import t from 'tap'
import { sql, type Kysely } from 'kysely'
import { migrations } from '../../migrations/index.js'
import { migrate, withSearchPath } from '../../src/db/migrate.js'
import { schemaOf } from '../../src/db/tables.js'
import { applySeed } from '../../src/directory/seed.js'
import { world } from '../fixtures/world.js'
import { freshDatabase, ENGINE } from '../helper.js'

/**
 * Migration 0011 (DESIGN §11.1): a database of 0010 with rows upgrades in place — every
 * organization gets its default project, every workspace it had is placed there, nothing else
 * changes — and from then on an organization made by anyone has its default project, and a
 * workspace made without one is placed in it. Down and up again is the same database.
 */
t.test(`0010 → 0011: a default project per organization, holding every workspace (${ENGINE})`, async (t) => {
  const { db: typed } = await freshDatabase(t)
  const db = typed as unknown as Kysely<any>
  // 0012 first, when it is there: the migrations after 0011 go down before it
  const down = async () => await withSearchPath(db, schemaOf(db), async (connection) => {
    for (const name of ['0014_organization_grant_teams', '0013_mirror', '0012_workspaces_and_people', '0011_projects']) {
      const applied = await connection.selectFrom('team_access_migrations').select('name').where('name', '=', name).executeTakeFirst()
      if (applied === undefined) continue
      await migrations[name]!.down!(connection)
      await connection.deleteFrom('team_access_migrations').where('name', '=', name).execute()
    }
  })
  // the world's rows, then back to 0010: the rows a database of 0010 holds (today's seed writes projects, which 0010 has not)
  await applySeed(db, world)
  await down()
  t.notOk((await db.introspection.getTables()).some((x) => x.name === 'projects'), 'at 0010 there are no projects')
  const rowsOf = async (table: string) => (await sql<{ row: string }>`select to_jsonb(t) - 'project_id' - 'description' - 'settings' - 'email' as row from ${sql.table(table)} t`.execute(db)).rows.map((r) => JSON.stringify(r.row)).sort()
  const tables = ['organizations', 'teams', 'workspaces', 'team_workspaces', 'audit_events']
  const before = Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await rowsOf(table)] as const)))

  t.same((await migrate(db)).map((r) => [r.migrationName, r.status]), [['0011_projects', 'Success'], ['0012_workspaces_and_people', 'Success'], ['0013_mirror', 'Success'], ['0014_organization_grant_teams', 'Success']])
  for (const table of tables) t.same(await rowsOf(table), before[table], `${table}: every row kept as it was`)
  const projects = await db.selectFrom('projects').select(['id', 'organization_id', 'name', 'is_default', 'managed_by']).orderBy('organization_id').execute()
  t.same(projects.map((p) => [p.organization_id, p.name, p.is_default, p.managed_by]), [['org-acme', 'Default Project', true, 'seed'], ['org-globex', 'Default Project', true, 'seed']],
    'one default project per organization, managed as its organization')
  t.ok(projects.every((p) => /^prj-[1-9A-HJ-NP-Za-km-z]{16}$/.test(p.id)), 'ids of the service’s shape')
  const placed = await db.selectFrom('workspaces as w').innerJoin('projects as p', 'p.id', 'w.project_id').select(['w.id', 'w.organization_id', 'p.organization_id as project_organization', 'p.is_default']).execute()
  t.equal(placed.length, 3, 'every workspace placed')
  t.ok(placed.every((w) => w.is_default && w.organization_id === w.project_organization), 'in its own organization’s default project')

  await db.insertInto('organizations').values({ id: 'org-new', name: 'new' }).execute()
  await db.insertInto('workspaces').values({ id: 'ws-new', organization_id: 'org-new', name: 'w' }).execute()
  const made = await db.selectFrom('workspaces as w').innerJoin('projects as p', 'p.id', 'w.project_id').select(['p.name', 'p.is_default', 'p.managed_by']).where('w.id', '=', 'ws-new').executeTakeFirstOrThrow()
  t.same(made, { name: 'Default Project', is_default: true, managed_by: 'host' }, 'a new organization has its default project, a new workspace is placed there')
  await t.rejects(db.insertInto('projects').values({ id: 'prj-second-default', organization_id: 'org-new', name: 'another', is_default: true }).execute(), { code: '23505' }, 'one default project only')
  await t.rejects(db.insertInto('projects').values({ id: 'prj-same-name', organization_id: 'org-new', name: 'DEFAULT PROJECT' }).execute(), { code: '23505' }, 'names unique case-insensitively')
  await t.rejects(db.deleteFrom('projects').where('organization_id', '=', 'org-new').execute(), { code: '23503' }, 'a project that holds a workspace stays')
  const other = await db.insertInto('organizations').values({ id: 'org-other', name: 'other' }).returning('id').executeTakeFirstOrThrow()
  const otherProject = await db.selectFrom('projects').select('id').where('organization_id', '=', other.id).executeTakeFirstOrThrow()
  await t.rejects(db.updateTable('workspaces').set({ project_id: otherProject.id }).where('id', '=', 'ws-new').execute(), { code: '23503' }, 'never in a project of another organization')

  await db.deleteFrom('workspaces').where('id', '=', 'ws-new').execute()
  await db.deleteFrom('organizations').where('id', 'in', ['org-new', 'org-other']).execute()
  await down()
  for (const table of tables.filter((x) => x !== 'audit_events')) t.same(await rowsOf(table), before[table], `${table}: down again, as it was`)
})
