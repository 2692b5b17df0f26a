import { sql, type Kysely } from 'kysely'

// The plugin's tables live in a schema of their own (src/db/tables.ts; a database made before
// moves there first, in migrate()). Statements name the schema; the trigger functions cannot: a
// function body's table names are looked up in the search_path of the session that fires the
// trigger — a host's connection may look in `public`, where a table of the host's may have the
// same name. Each function keeps the search_path migrations run with — the schema alone — as its
// own, once and for all (`set … from current`).
const FUNCTIONS = ['team_access_count_rows', 'team_access_row_visibility', 'team_access_team_visibility', 'audit_events_append_only']

export async function up (db: Kysely<any>): Promise<void> {
  for (const name of FUNCTIONS) {
    await sql`alter function ${sql.id(name)}() set search_path from current`.execute(db)
  }
}

// Nothing to undo: a function that looks in its own schema is right wherever the tables are.
export async function down (): Promise<void> {}
