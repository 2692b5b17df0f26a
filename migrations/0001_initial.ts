import { sql, type Kysely } from 'kysely'

// The model of DESIGN §2. Migrations import nothing from src/: they must keep
// describing the schema as it was when they were written.

const created = (col: any) => col.notNull().defaultTo(sql`clock_timestamp()`)

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.createTable('organizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', created)
    .execute()

  await db.schema.createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('username', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', created)
    .execute()

  await db.schema.createTable('teams')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('visibility', 'text', (c) => c.notNull().defaultTo('secret'))
    .addColumn('is_owners', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('manage_workspaces', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('read_workspaces', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', created)
    .addUniqueConstraint('teams_organization_name_key', ['organization_id', 'name'])
    // the target of team_workspaces' same-organization foreign key
    .addUniqueConstraint('teams_id_organization_key', ['id', 'organization_id'])
    .addCheckConstraint('teams_visibility_check', sql`visibility in ('secret', 'organization')`)
    .execute()
  // one owners team per organization
  await db.schema.createIndex('teams_one_owners_team').on('teams').column('organization_id')
    .unique().where(sql.ref('is_owners'), '=', true).execute()

  await db.schema.createTable('team_memberships')
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('team_memberships_pkey', ['team_id', 'user_id'])
    .execute()
  await db.schema.createIndex('team_memberships_user_idx').on('team_memberships').columns(['user_id', 'team_id']).execute()

  await db.schema.createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', created)
    .addUniqueConstraint('workspaces_organization_name_key', ['organization_id', 'name'])
    .addUniqueConstraint('workspaces_id_organization_key', ['id', 'organization_id'])
    .execute()

  await db.schema.createTable('tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'text', (c) => c.references('organizations.id').onDelete('cascade'))
    .addColumn('team_id', 'text', (c) => c.references('teams.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    // hex SHA-256 of the bearer secret; the secret itself is never stored
    .addColumn('digest', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', created)
    .addCheckConstraint('tokens_digest_check', sql`digest ~ '^[0-9a-f]{64}$'`)
    .addCheckConstraint('tokens_subject_check', sql`
      (kind = 'organization' and organization_id is not null and team_id is null and user_id is null) or
      (kind = 'team' and team_id is not null and organization_id is null and user_id is null) or
      (kind = 'user' and user_id is not null and organization_id is null and team_id is null)`)
    .execute()

  await db.schema.createTable('team_workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('access', 'text', (c) => c.notNull())
    .addColumn('runs', 'text', (c) => c.notNull())
    .addColumn('variables', 'text', (c) => c.notNull())
    .addColumn('state_versions', 'text', (c) => c.notNull())
    .addColumn('sentinel_mocks', 'text', (c) => c.notNull())
    .addColumn('workspace_locking', 'boolean', (c) => c.notNull())
    .addColumn('run_tasks', 'boolean', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', created)
    .addUniqueConstraint('team_workspaces_team_workspace_key', ['team_id', 'workspace_id'])
    // team and workspace belong to the row's organization: one organization per row
    .addForeignKeyConstraint('team_workspaces_team_fkey', ['team_id', 'organization_id'],
      'teams', ['id', 'organization_id'], (c) => c.onDelete('cascade'))
    .addForeignKeyConstraint('team_workspaces_workspace_fkey', ['workspace_id', 'organization_id'],
      'workspaces', ['id', 'organization_id'], (c) => c.onDelete('cascade'))
    .addCheckConstraint('team_workspaces_access_check', sql`access in ('read', 'plan', 'write', 'admin', 'custom')`)
    .addCheckConstraint('team_workspaces_runs_check', sql`runs in ('read', 'plan', 'apply')`)
    .addCheckConstraint('team_workspaces_variables_check', sql`variables in ('none', 'read', 'write')`)
    .addCheckConstraint('team_workspaces_state_versions_check', sql`state_versions in ('none', 'read-outputs', 'read', 'write')`)
    .addCheckConstraint('team_workspaces_sentinel_mocks_check', sql`sentinel_mocks in ('none', 'read')`)
    .execute()
  // listing by workspace, in the order the API returns rows
  await db.schema.createIndex('team_workspaces_workspace_idx').on('team_workspaces')
    .columns(['workspace_id', 'created_at', 'id']).execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  for (const table of ['team_workspaces', 'tokens', 'workspaces', 'team_memberships', 'teams', 'users', 'organizations']) {
    await db.schema.dropTable(table).execute()
  }
}
