import { sql, type Kysely } from 'kysely'

// Projects (DESIGN §11): every workspace in exactly one project of its organization, and team
// access one level up.
//
// - projects: every organization has exactly one default project ("Default Project"), made with
//   the organization by a trigger — whoever inserts the organization (seed, host, API, a test, a
//   host's own SQL) — and made here for every organization that exists. Names are unique in the
//   organization case-insensitively.
// - workspaces.project_id: not null; a workspace inserted without one is placed in its
//   organization's default project (a trigger), and every existing workspace goes there now. The
//   (project, organization) foreign key keeps a workspace in a project of its own organization and
//   refuses to delete a project that still holds one.
// - team_projects: a team's access to a project, one row per (team, project) of one organization.
//   The workspace-access columns that a workspace grant has too keep their team_workspaces names
//   (runs, variables, state_versions, sentinel_mocks, workspace_locking, run_tasks), so a
//   project row reads as a workspace grant on each of its project's workspaces (§11.2).
// - audit_events: events about projects and team-project rows (resource types `project` and
//   `team-project`, actions create/update/destroy).
//
// Ids made in SQL have the shape of the service's (prefix + 16 base58 characters), from
// gen_random_uuid(), the server's strong random source.
const FIXED = sql`('read', 'write', 'maintain', 'admin', 'custom')`

/** What an audit event may be about: 0009's kinds, and (`projects`) this migration's. */
async function resourceCheck (db: Kysely<any>, projects: boolean): Promise<void> {
  await db.schema.alterTable('audit_events').dropConstraint('audit_events_resource_check').execute()
  await db.schema.alterTable('audit_events')
    .addCheckConstraint('audit_events_resource_check', sql`
      (resource_type = 'workspace' and workspace_id is not null and team_id is not null and team_name is not null
        and action in ('add_team', 'update_team_permissions', 'remove_team')) or
      (resource_type in ('team', 'authentication-token') and resource_id is not null and meta is not null
        and action in ('create', 'update', 'destroy', 'add_member', 'remove_member'))${projects
        ? sql` or
      (resource_type in ('project', 'team-project') and resource_id is not null and meta is not null
        and action in ('create', 'update', 'destroy'))`
        : sql``}`).execute()
}

export async function up (db: Kysely<any>): Promise<void> {
  // base58 (no 0, O, I, l) as src/db/ids.ts, each character equally likely: bytes of 232 and over are skipped
  await sql`
    create function team_access_new_id(prefix text) returns text language sql volatile as $$
      select prefix || string_agg(c, '' order by i) from (
        select i, substr('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', get_byte(b, i) % 58 + 1, 1) as c, row_number() over (order by i) as n
        from (select decode(md5(gen_random_uuid()::text) || md5(gen_random_uuid()::text), 'hex') as b) r, generate_series(0, 31) i
        where get_byte(b, i) < 232) x
      where n <= 16
    $$`.execute(db)

  await db.schema.createTable('projects')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('is_default', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .addColumn('managed_by', 'text', (c) => c.notNull().defaultTo('host'))
    .addUniqueConstraint('projects_id_organization_key', ['id', 'organization_id'])
    .addCheckConstraint('projects_managed_by_check', sql`managed_by in ('seed', 'api', 'host')`)
    .addCheckConstraint('projects_name_check', sql`name ~ '^[A-Za-z0-9_-]([A-Za-z0-9 _-]{1,38})[A-Za-z0-9_-]$'`)
    .addCheckConstraint('projects_description_check', sql`char_length(description) <= 256`)
    .execute()
  await sql`create unique index projects_organization_name_key on projects (organization_id, lower(name))`.execute(db)
  await sql`create unique index projects_one_default on projects (organization_id) where is_default`.execute(db)

  await sql`
    create function team_access_default_project() returns trigger language plpgsql as $$
    begin
      insert into projects (id, organization_id, name, is_default, managed_by)
      values (team_access_new_id('prj-'), new.id, 'Default Project', true, new.managed_by);
      return null;
    end $$`.execute(db)
  await sql`create trigger organizations_default_project after insert on organizations
    for each row execute function team_access_default_project()`.execute(db)
  await sql`insert into projects (id, organization_id, name, is_default, managed_by)
    select team_access_new_id('prj-'), o.id, 'Default Project', true, o.managed_by from organizations o`.execute(db)

  await db.schema.alterTable('workspaces').addColumn('project_id', 'text').execute()
  await sql`update workspaces w set project_id = p.id from projects p where p.organization_id = w.organization_id and p.is_default`.execute(db)
  await db.schema.alterTable('workspaces').alterColumn('project_id', (c) => c.setNotNull()).execute()
  await db.schema.alterTable('workspaces')
    .addForeignKeyConstraint('workspaces_project_fkey', ['project_id', 'organization_id'], 'projects', ['id', 'organization_id'])
    .execute()
  await db.schema.createIndex('workspaces_project_idx').on('workspaces').columns(['project_id', 'name']).execute()
  await sql`
    create function team_access_place_workspace() returns trigger language plpgsql as $$
    begin
      if new.project_id is null then
        new.project_id := (select id from projects where organization_id = new.organization_id and is_default);
      end if;
      return new;
    end $$`.execute(db)
  await sql`create trigger workspaces_default_project before insert or update of project_id on workspaces
    for each row execute function team_access_place_workspace()`.execute(db)

  await db.schema.createTable('team_projects')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('access', 'text', (c) => c.notNull())
    .addColumn('project_settings', 'text', (c) => c.notNull())
    .addColumn('project_teams', 'text', (c) => c.notNull())
    .addColumn('project_variable_sets', 'text', (c) => c.notNull())
    .addColumn('runs', 'text', (c) => c.notNull())
    .addColumn('sentinel_mocks', 'text', (c) => c.notNull())
    .addColumn('state_versions', 'text', (c) => c.notNull())
    .addColumn('variables', 'text', (c) => c.notNull())
    .addColumn('workspace_create', 'boolean', (c) => c.notNull())
    .addColumn('workspace_locking', 'boolean', (c) => c.notNull())
    .addColumn('workspace_delete', 'boolean', (c) => c.notNull())
    .addColumn('workspace_move', 'boolean', (c) => c.notNull())
    .addColumn('run_tasks', 'boolean', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .addUniqueConstraint('team_projects_team_project_key', ['team_id', 'project_id'])
    .addForeignKeyConstraint('team_projects_team_fkey', ['team_id', 'organization_id'], 'teams', ['id', 'organization_id'], (c) => c.onDelete('cascade'))
    .addForeignKeyConstraint('team_projects_project_fkey', ['project_id', 'organization_id'], 'projects', ['id', 'organization_id'], (c) => c.onDelete('cascade'))
    .addCheckConstraint('team_projects_access_check', sql`access in ${FIXED}`)
    .addCheckConstraint('team_projects_project_settings_check', sql`project_settings in ('read', 'update', 'delete')`)
    .addCheckConstraint('team_projects_project_teams_check', sql`project_teams in ('none', 'read', 'manage')`)
    .addCheckConstraint('team_projects_project_variable_sets_check', sql`project_variable_sets in ('none', 'read', 'write')`)
    .addCheckConstraint('team_projects_runs_check', sql`runs in ('read', 'plan', 'apply')`)
    .addCheckConstraint('team_projects_sentinel_mocks_check', sql`sentinel_mocks in ('none', 'read')`)
    .addCheckConstraint('team_projects_state_versions_check', sql`state_versions in ('none', 'read-outputs', 'read', 'write')`)
    .addCheckConstraint('team_projects_variables_check', sql`variables in ('none', 'read', 'write')`)
    .execute()
  // listing by project in the API's order; a team's rows (what it grants) by team
  await db.schema.createIndex('team_projects_project_idx').on('team_projects').columns(['project_id', 'created_at', 'id']).execute()

  await resourceCheck(db, true)

  for (const name of ['team_access_new_id(text)', 'team_access_default_project()', 'team_access_place_workspace()']) {
    await sql`alter function ${sql.raw(name)} set search_path from current`.execute(db)
  }
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.deleteFrom('audit_events').where('resource_type', 'in', ['project', 'team-project']).execute()
  await resourceCheck(db, false)
  await db.schema.dropTable('team_projects').execute()
  await sql`drop trigger workspaces_default_project on workspaces`.execute(db)
  await sql`drop function team_access_place_workspace()`.execute(db)
  await db.schema.alterTable('workspaces').dropColumn('project_id').execute()
  await sql`drop trigger organizations_default_project on organizations`.execute(db)
  await sql`drop function team_access_default_project()`.execute(db)
  await db.schema.dropTable('projects').execute()
  await sql`drop function team_access_new_id(text)`.execute(db)
}
