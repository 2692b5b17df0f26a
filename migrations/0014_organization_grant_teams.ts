import { sql, type Kysely } from 'kysely'

// The teams of an organization that hold an organization-wide grant on its workspaces (DESIGN §3,
// §11.3: owners, manage-workspaces, read-workspaces, manage-projects, read-projects) — a handful
// among thousands — by organization: a workspace's effective access (DESIGN §10.2) finds them
// here rather than reading every team of the organization. The flags are those of
// ORGANIZATION_GRANTS (src/access/effective-access.ts) as teams store them; this migration names
// them itself (it imports nothing from src/), and test/db/organization-grant-teams.test.ts checks
// that the two agree.
const FLAGS = ['is_owners', 'manage_workspaces', 'read_workspaces', 'manage_projects', 'read_projects'] as const

export async function up (db: Kysely<any>): Promise<void> {
  await sql`create index teams_organization_grants_idx on teams (organization_id)
    where ${sql.join(FLAGS.map((flag) => sql.ref(flag)), sql` or `)}`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('teams_organization_grants_idx').execute()
}
