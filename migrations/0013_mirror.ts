import { sql, type Kysely } from 'kysely'

// The mirror (DESIGN §13): an HCP Terraform organization read through its API and kept here, read-only.
//
// - managed_by: a fourth source, `mirror`, on every directory table (0008's, projects, organization memberships).
// - audit_events: a fourth kind of accessor, `mirror` (`auth.type` Mirror, description the host read from).
// - mirrors: one row per mirrored organization — the host it is read from, when a run last succeeded
//   (whether or not it changed anything), how long it took and how many requests it made; the page's
//   "mirrored from app.terraform.io, 12 minutes ago" (§12.2).
// - the guard: a mirrored organization's rows (teams, their memberships, workspaces, projects,
//   organization memberships and an invitation's teams, team-workspace and team-project rows) and a
//   mirror-managed user are written by the mirror only — by whoever else asks (the API, the host, a
//   seed, a host's own SQL), the statement fails with SQLSTATE TAM01, which the API answers 422
//   `managed by the mirror (change it in HCP Terraform)`. The mirror's transaction says it is the
//   mirror with `set local team_access.mirror = 'on'`. A row whose organization is gone is not
//   guarded: the host removes a mirrored organization, and its rows go with it. Tokens are this
//   service's own, never guarded.

const MANAGED = ['organizations', 'users', 'teams', 'team_memberships', 'workspaces', 'tokens', 'projects', 'organization_memberships'] as const
const GUARDED = ['teams', 'team_memberships', 'workspaces', 'projects', 'organization_memberships', 'organization_membership_teams', 'team_workspaces', 'team_projects', 'users', 'organizations'] as const

export async function up (db: Kysely<any>): Promise<void> {
  await managedBy(db, ['seed', 'api', 'host', 'mirror'])
  await accessorKinds(db, ['organization', 'team', 'user', 'system', 'mirror'])

  await db.schema.createTable('mirrors')
    .addColumn('organization_id', 'text', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('succeeded_at', 'timestamptz', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('requests', 'integer', (c) => c.notNull())
    .execute()

  await sql`
    create function team_access_mirror_guard() returns trigger language plpgsql as $$
    declare
      row_old jsonb := case when tg_op = 'INSERT' then null else to_jsonb(old) end;
      row_new jsonb := case when tg_op = 'DELETE' then null else to_jsonb(new) end;
      guarded boolean;
    begin
      if current_setting('team_access.mirror', true) = 'on' then return null; end if;
      if tg_table_name = 'users' then
        guarded := row_old ->> 'managed_by' = 'mirror';
      elsif tg_table_name = 'organizations' then
        -- the host may remove a mirrored organization; nobody but the mirror changes it
        guarded := tg_op = 'UPDATE' and row_old ->> 'managed_by' = 'mirror';
      elsif tg_table_name = 'team_memberships' then
        guarded := exists (select from teams t join organizations o on o.id = t.organization_id
          where t.id in (row_old ->> 'team_id', row_new ->> 'team_id') and o.managed_by = 'mirror');
      elsif tg_table_name = 'organization_membership_teams' then
        guarded := exists (select from organization_memberships m join organizations o on o.id = m.organization_id
          where m.id in (row_old ->> 'membership_id', row_new ->> 'membership_id') and o.managed_by = 'mirror');
      else
        guarded := exists (select from organizations o
          where o.id in (row_old ->> 'organization_id', row_new ->> 'organization_id') and o.managed_by = 'mirror');
      end if;
      if guarded then
        raise exception 'managed by the mirror (change it in HCP Terraform)' using errcode = 'TAM01';
      end if;
      return null;
    end $$`.execute(db)
  await sql`alter function team_access_mirror_guard() set search_path from current`.execute(db)
  for (const table of GUARDED) {
    await sql`create trigger ${sql.id(`${table}_mirror_guard`)} after insert or update or delete on ${sql.table(table)}
      for each row execute function team_access_mirror_guard()`.execute(db)
  }
}

async function managedBy (db: Kysely<any>, sources: string[]): Promise<void> {
  for (const table of MANAGED) {
    await db.schema.alterTable(table).dropConstraint(`${table}_managed_by_check`).execute()
    await db.schema.alterTable(table)
      .addCheckConstraint(`${table}_managed_by_check`, sql`managed_by in (${sql.join(sources.map((s) => sql.lit(s)))})`).execute()
  }
}

async function accessorKinds (db: Kysely<any>, kinds: string[]): Promise<void> {
  await db.schema.alterTable('audit_events').dropConstraint('audit_events_accessor_kind_check').execute()
  await db.schema.alterTable('audit_events')
    .addCheckConstraint('audit_events_accessor_kind_check', sql`accessor_kind in (${sql.join(kinds.map((k) => sql.lit(k)))})`).execute()
  await db.schema.alterTable('audit_events').dropConstraint('audit_events_accessor_id_check').execute()
  await db.schema.alterTable('audit_events')
    .addCheckConstraint('audit_events_accessor_id_check', sql`accessor_kind in ('system', 'mirror') or accessor_id is not null`).execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  for (const table of GUARDED) await sql`drop trigger ${sql.id(`${table}_mirror_guard`)} on ${sql.table(table)}`.execute(db)
  await sql`drop function team_access_mirror_guard()`.execute(db)
  await db.schema.dropTable('mirrors').execute()
  // a mirror's events and rows have no place in a database of 0012: the events go, the rows become the host's
  await db.deleteFrom('audit_events').where('accessor_kind', '=', 'mirror').execute()
  await db.schema.alterTable('audit_events').dropConstraint('audit_events_accessor_id_check').execute()
  await db.schema.alterTable('audit_events').addCheckConstraint('audit_events_accessor_id_check', sql`accessor_kind = 'system' or accessor_id is not null`).execute()
  await accessorKinds0012(db)
  for (const table of MANAGED) await db.updateTable(table).set({ managed_by: 'host' }).where('managed_by', '=', 'mirror').execute()
  await managedBy(db, ['seed', 'api', 'host'])
}

async function accessorKinds0012 (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('audit_events').dropConstraint('audit_events_accessor_kind_check').execute()
  await db.schema.alterTable('audit_events')
    .addCheckConstraint('audit_events_accessor_kind_check', sql`accessor_kind in ('organization', 'team', 'user', 'system')`).execute()
}
