import { sql, type Kysely } from 'kysely'

// The directory through the API (DESIGN §9.3–9.5).
//
// - teams: every organization-access flag HCP Terraform's clients send, stored and answered
//   (manage-workspaces and read-workspaces exist since 0001); absent flags are false. Also the two
//   attributes the current Terraform provider writes and reads back (a value it does not get back
//   is a diff on every plan): `sso-team-id` and `allow-member-token-management` (default true).
// - tokens: a description (unique per team), when it was last used (written at most once a
//   minute), and the user who made it. The API's description-less token of a team, and of an
//   organization, is one at a time: a second create replaces it (regenerate). Lookups by subject
//   (a team's, a user's, an organization's tokens; the cascades of a removal) are indexed.
// - revoked_tokens: the digests of tokens revoked through the API, so that a seed that still
//   declares a revoked secret never brings it back (§9.1). A digest, never a secret.
// - audit_events: events about teams, memberships and tokens (§9.5) beside those about team
//   access: a resource type, the resource's id and a meta object; the workspace and team columns
//   are null where an event is not about them.
export const ORGANIZATION_ACCESS_COLUMNS = [
  'manage_policies', 'manage_policy_overrides', 'manage_vcs_settings', 'manage_providers', 'manage_modules',
  'manage_run_tasks', 'manage_projects', 'read_projects', 'manage_membership', 'manage_teams',
  'manage_organization_access', 'access_secret_teams', 'manage_agent_pools', 'delegate_policy_overrides'
] as const

const ACTIONS = ['add_team', 'update_team_permissions', 'remove_team', 'create', 'update', 'destroy', 'add_member', 'remove_member']

export async function up (db: Kysely<any>): Promise<void> {
  await sql`alter table teams ${sql.join(ORGANIZATION_ACCESS_COLUMNS.map((column) =>
    sql`add column ${sql.ref(column)} boolean not null default false`))}`.execute(db)
  await db.schema.alterTable('teams')
    .addColumn('sso_team_id', 'text')
    .addColumn('allow_member_token_management', 'boolean', (c) => c.notNull().defaultTo(true))
    .execute()

  await db.schema.alterTable('tokens')
    .addColumn('description', 'text')
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('created_by', 'text', (c) => c.references('users.id').onDelete('set null'))
    .execute()
  await db.schema.createIndex('tokens_team_description_key').on('tokens').columns(['team_id', 'description'])
    .unique().where(sql.ref('description'), 'is not', null).execute()
  await sql`create unique index tokens_one_api_team_token on tokens (team_id)
    where kind = 'team' and description is null and managed_by = 'api'`.execute(db)
  await sql`create unique index tokens_one_api_organization_token on tokens (organization_id)
    where kind = 'organization' and description is null and managed_by = 'api'`.execute(db)
  await db.schema.createIndex('tokens_team_idx').on('tokens').columns(['team_id', 'created_at']).where(sql.ref('team_id'), 'is not', null).execute()
  await db.schema.createIndex('tokens_user_idx').on('tokens').columns(['user_id', 'created_at']).where(sql.ref('user_id'), 'is not', null).execute()
  await db.schema.createIndex('tokens_organization_idx').on('tokens').columns(['organization_id', 'created_at']).where(sql.ref('organization_id'), 'is not', null).execute()

  await db.schema.createTable('revoked_tokens')
    .addColumn('digest', 'text', (c) => c.primaryKey())
    .addColumn('revoked_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .addCheckConstraint('revoked_tokens_digest_check', sql`digest ~ '^[0-9a-f]{64}$'`)
    .execute()

  await db.schema.alterTable('audit_events')
    .addColumn('resource_type', 'text', (c) => c.notNull().defaultTo('workspace'))
    .addColumn('resource_id', 'text')
    .addColumn('meta', 'jsonb')
    .execute()
  for (const column of ['workspace_id', 'team_id', 'team_name']) {
    await db.schema.alterTable('audit_events').alterColumn(column, (c) => c.dropNotNull()).execute()
  }
  await db.schema.alterTable('audit_events').dropConstraint('audit_events_action_check').execute()
  await db.schema.alterTable('audit_events')
    .addCheckConstraint('audit_events_action_check', sql`action in (${sql.join(ACTIONS.map((a) => sql.lit(a)))})`).execute()
  await db.schema.alterTable('audit_events')
    .addCheckConstraint('audit_events_resource_check', sql`
      (resource_type = 'workspace' and workspace_id is not null and team_id is not null and team_name is not null
        and action in ('add_team', 'update_team_permissions', 'remove_team')) or
      (resource_type in ('team', 'authentication-token') and resource_id is not null and meta is not null
        and action in ('create', 'update', 'destroy', 'add_member', 'remove_member'))`).execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.deleteFrom('audit_events').where('resource_type', '<>', 'workspace').execute()
  await db.schema.alterTable('audit_events').dropConstraint('audit_events_resource_check').execute()
  await db.schema.alterTable('audit_events').dropConstraint('audit_events_action_check').execute()
  await db.schema.alterTable('audit_events')
    .addCheckConstraint('audit_events_action_check', sql`action in ('add_team', 'update_team_permissions', 'remove_team')`).execute()
  for (const column of ['workspace_id', 'team_id', 'team_name']) {
    await db.schema.alterTable('audit_events').alterColumn(column, (c) => c.setNotNull()).execute()
  }
  await db.schema.alterTable('audit_events').dropColumn('resource_type').dropColumn('resource_id').dropColumn('meta').execute()
  await db.schema.dropTable('revoked_tokens').execute()
  for (const index of ['tokens_team_description_key', 'tokens_one_api_team_token', 'tokens_one_api_organization_token', 'tokens_team_idx', 'tokens_user_idx', 'tokens_organization_idx']) {
    await db.schema.dropIndex(index).execute()
  }
  await db.schema.alterTable('tokens').dropColumn('description').dropColumn('last_used_at').dropColumn('created_by').execute()
  await sql`alter table teams ${sql.join(ORGANIZATION_ACCESS_COLUMNS.map((column) => sql`drop column ${sql.ref(column)}`))}`.execute(db)
  await db.schema.alterTable('teams').dropColumn('sso_team_id').dropColumn('allow_member_token_management').execute()
}
