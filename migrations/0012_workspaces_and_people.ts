import { sql, type Kysely } from 'kysely'

// Workspaces and people through the API (DESIGN §14).
//
// - users: an optional email, unique case-insensitively. A username may be null: the user an
//   invitation makes for an email no user has (§14.2) has none until the person arrives; a user
//   always has one or the other.
// - organization_memberships: a person's membership of an organization, `active` or `invited`,
//   managed by the source that made it. Every team member holds an active one: this migration
//   makes one for every (user, organization) with a team membership, managed as that user's team
//   memberships there are (the API's or the host's before a seed's, so that a seed never ends a
//   membership it did not make alone), and a trigger makes one for every team membership inserted
//   from now on — by whoever inserts it (seed, host, API, a host's own SQL).
// - organization_membership_teams: the teams an invitation was given; they become team memberships
//   when the invitation becomes active.
// - workspaces: a description, and the attributes clients send that mean nothing to access
//   (`settings`, as sent: answered back so that a refresh shows no drift).
// - audit_events: `workspace` create/update/destroy (meta: the name, a move's projects) and
//   `organization-membership` create/destroy (meta: the email).
export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('email', 'text').execute()
  await db.schema.alterTable('users').alterColumn('username', (c) => c.dropNotNull()).execute()
  await db.schema.alterTable('users')
    .addCheckConstraint('users_email_check', sql`email is null or (char_length(email) <= 254 and email ~ '^[^@[:space:]]+@[^@[:space:]]+$')`)
    .execute()
  await db.schema.alterTable('users')
    .addCheckConstraint('users_named_check', sql`username is not null or email is not null`)
    .execute()
  await sql`create unique index users_email_key on users (lower(email))`.execute(db)

  await db.schema.createTable('organization_memberships')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .addColumn('managed_by', 'text', (c) => c.notNull().defaultTo('host'))
    .addUniqueConstraint('organization_memberships_organization_user_key', ['organization_id', 'user_id'])
    .addCheckConstraint('organization_memberships_status_check', sql`status in ('active', 'invited')`)
    .addCheckConstraint('organization_memberships_managed_by_check', sql`managed_by in ('seed', 'api', 'host')`)
    .execute()
  await db.schema.createIndex('organization_memberships_user_idx').on('organization_memberships').columns(['user_id', 'organization_id']).execute()
  await db.schema.createIndex('organization_memberships_organization_idx').on('organization_memberships').columns(['organization_id', 'created_at']).execute()

  await db.schema.createTable('organization_membership_teams')
    .addColumn('membership_id', 'text', (c) => c.notNull().references('organization_memberships.id').onDelete('cascade'))
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('organization_membership_teams_pkey', ['membership_id', 'team_id'])
    .execute()
  await db.schema.createIndex('organization_membership_teams_team_idx').on('organization_membership_teams').columns(['team_id']).execute()

  // the source of a person's membership: the API's or the host's team memberships before a seed's
  await sql`insert into organization_memberships (id, organization_id, user_id, status, managed_by, created_at)
    select team_access_new_id('ou-'), t.organization_id, m.user_id, 'active',
      (array_agg(m.managed_by order by case m.managed_by when 'api' then 0 when 'host' then 1 else 2 end))[1],
      min(u.created_at)
    from team_memberships m join teams t on t.id = m.team_id join users u on u.id = m.user_id
    group by t.organization_id, m.user_id`.execute(db)
  await sql`
    create function team_access_organization_membership() returns trigger language plpgsql as $$
    begin
      insert into organization_memberships (id, organization_id, user_id, status, managed_by)
      select distinct on (t.organization_id, a.user_id) team_access_new_id('ou-'), t.organization_id, a.user_id, 'active', a.managed_by
      from added a join teams t on t.id = a.team_id
      order by t.organization_id, a.user_id
      on conflict (organization_id, user_id) do nothing;
      return null;
    end $$`.execute(db)
  await sql`create trigger team_memberships_organization_membership after insert on team_memberships
    referencing new table as added for each statement execute function team_access_organization_membership()`.execute(db)
  await sql`alter function team_access_organization_membership() set search_path from current`.execute(db)

  await db.schema.alterTable('workspaces')
    .addColumn('description', 'text')
    .addColumn('settings', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute()

  await resourceCheck(db, true)
}

/** What an audit event may be about: 0011's kinds, and (`people`) this migration's. */
async function resourceCheck (db: Kysely<any>, people: boolean): Promise<void> {
  await db.schema.alterTable('audit_events').dropConstraint('audit_events_resource_check').execute()
  await db.schema.alterTable('audit_events')
    .addCheckConstraint('audit_events_resource_check', sql`
      (resource_type = 'workspace' and workspace_id is not null and team_id is not null and team_name is not null
        and action in ('add_team', 'update_team_permissions', 'remove_team')) or
      (resource_type in ('team', 'authentication-token') and resource_id is not null and meta is not null
        and action in ('create', 'update', 'destroy', 'add_member', 'remove_member')) or
      (resource_type in ('project', 'team-project') and resource_id is not null and meta is not null
        and action in ('create', 'update', 'destroy'))${people
        ? sql` or
      (resource_type in ('workspace', 'organization-membership') and team_id is null and resource_id is not null and meta is not null
        and action in ('create', 'update', 'destroy'))`
        : sql``}`).execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.deleteFrom('audit_events').where((eb) => eb.or([
    eb('resource_type', '=', 'organization-membership'),
    eb.and([eb('resource_type', '=', 'workspace'), eb('action', 'in', ['create', 'update', 'destroy'])])
  ])).execute()
  await resourceCheck(db, false)
  await db.schema.alterTable('workspaces').dropColumn('description').dropColumn('settings').execute()
  await sql`drop trigger team_memberships_organization_membership on team_memberships`.execute(db)
  await sql`drop function team_access_organization_membership()`.execute(db)
  await db.schema.dropTable('organization_membership_teams').execute()
  await db.schema.dropTable('organization_memberships').execute()
  // the users an invitation made (no username) go: a database of 0011 has none
  await db.deleteFrom('users').where('username', 'is', null).execute()
  await sql`drop index users_email_key`.execute(db)
  await db.schema.alterTable('users').dropConstraint('users_named_check').execute()
  await db.schema.alterTable('users').dropConstraint('users_email_check').execute()
  await db.schema.alterTable('users').alterColumn('username', (c) => c.setNotNull()).execute()
  await db.schema.alterTable('users').dropColumn('email').execute()
}
