import { sql, type Kysely } from 'kysely'

// A statement run for a caller whose token is no longer usable — revoked, expired, or given to
// another subject since the caller was last looked up (src/auth/token-identities.ts) — fails
// at once with SQLSTATE 28000 (invalid_authorization_specification), which the service answers
// 401: the answer a token never valid gets, in the same single round trip.
//
// The check must run whatever the statement reads, so it is a data-modifying CTE (PostgreSQL
// runs those to completion, referenced or not): an INSERT into `token_checks` of no row at all
// when the token is usable, which calls `team_access_token_not_usable()` when it is not. The table
// stays empty; the function only raises.
export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.createTable('token_checks')
    .addColumn('checked', 'boolean', (c) => c.notNull())
    .execute()
  await sql`
    create function team_access_token_not_usable() returns boolean language plpgsql as $$
    begin
      raise exception 'the token is no longer usable' using errcode = '28000';
    end $$`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await sql`drop function team_access_token_not_usable()`.execute(db)
  await db.schema.dropTable('token_checks').execute()
}
