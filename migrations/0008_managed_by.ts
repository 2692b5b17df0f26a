import { sql, type Kysely } from 'kysely'

// Who manages what (DESIGN §9.1): every directory row records its source — a seed, the API or the
// host — and a seed removes only the rows it manages. Rows that exist when this migration runs
// were all written by seeds (or by hand, as a host would), and count as seed-managed: the column
// is added with the default 'seed', which fills every existing row in place. From then on a row
// written without a source is the host's ('host'): a seed never removes what it did not write.
//
// seed_grants learns the team and workspace of each entry it remembers, so that a team or
// workspace the seed removes takes its remembered grants with it (an entry given again to a
// team re-created later is a new grant). Entries remembered before this migration keep nulls.
const TABLES = ['organizations', 'users', 'teams', 'team_memberships', 'workspaces', 'tokens'] as const

export async function up (db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    await db.schema.alterTable(table)
      .addColumn('managed_by', 'text', (c) => c.notNull().defaultTo('seed'))
      .execute()
    await db.schema.alterTable(table)
      .addCheckConstraint(`${table}_managed_by_check`, sql`managed_by in ('seed', 'api', 'host')`)
      .execute()
    await db.schema.alterTable(table)
      .alterColumn('managed_by', (c) => c.setDefault('host'))
      .execute()
  }
  await db.schema.alterTable('seed_grants')
    .addColumn('team_id', 'text')
    .addColumn('workspace_id', 'text')
    .execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('seed_grants').dropColumn('team_id').dropColumn('workspace_id').execute()
  for (const table of TABLES) {
    await db.schema.alterTable(table).dropColumn('managed_by').execute()
  }
}
