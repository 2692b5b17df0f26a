import { sql, type Kysely } from 'kysely'

// A seed's team-access entries are grants to make once, not a state to restore on every start
// (a seed never undoes the API): each entry applied is remembered by its fingerprint — its
// team, workspace and permissions — and never applied again. Editing an entry gives it a new
// fingerprint, so the edit is applied, once.
export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.createTable('seed_grants')
    .addColumn('fingerprint', 'text', (c) => c.primaryKey())
    .addColumn('applied_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('seed_grants').execute()
}
