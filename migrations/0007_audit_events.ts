import { sql, type Kysely } from 'kysely'

// The audit trail (DESIGN §8): one row per change of access, written by the statement that makes
// the change, so that no change exists without its event nor an event without its change.
//
// An event is a record of the past: it keeps the names it needs (the accessor's, the team's) and
// has no foreign key to the rows it is about, so it outlives a team, a workspace or an
// organization deleted later; only the retention purge (AUDIT_RETENTION_DAYS) removes events.
export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.createTable('audit_events')
    // gen_random_uuid() is in PostgreSQL's core since 13, and in PGlite
    .addColumn('id', 'uuid', (c) => c.notNull().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    // the moment the statement ran (not its transaction's start): a seed's events keep their order
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    // who: the kind of token (or 'system' for a seed), the user, team or organization behind it, its name
    .addColumn('accessor_kind', 'text', (c) => c.notNull())
    .addColumn('accessor_id', 'text')
    .addColumn('accessor_description', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('team_name', 'text', (c) => c.notNull())
    // `access=… runs=… …` after the change; null for a removal
    .addColumn('permissions', 'text')
    .addCheckConstraint('audit_events_accessor_kind_check', sql`accessor_kind in ('organization', 'team', 'user', 'system')`)
    .addCheckConstraint('audit_events_accessor_id_check', sql`accessor_kind = 'system' or accessor_id is not null`)
    .addCheckConstraint('audit_events_action_check', sql`action in ('add_team', 'update_team_permissions', 'remove_team')`)
    // Every write of access inserts an event, so an event costs as few index entries as it can:
    // one B-tree, in the order the trail is read (an organization's events, oldest first, from
    // `since` on), which also makes the row unique; nothing looks an event up by id alone.
    .addPrimaryKeyConstraint('audit_events_pkey', ['organization_id', 'occurred_at', 'id'])
    .execute()
  // the retention purge, across organizations: events arrive in time order, so a BRIN index
  // (a summary per block range, nearly free to keep) finds the old ones without reading the rest
  await db.schema.createIndex('audit_events_occurred_at_brin').on('audit_events').using('brin').column('occurred_at').execute()

  // append-only: what happened is never rewritten (the purge deletes; nothing updates)
  await sql`
    create function audit_events_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'audit events are append-only' using errcode = 'insufficient_privilege';
    end $$`.execute(db)
  await sql`
    create trigger audit_events_no_update before update on audit_events
    for each row execute function audit_events_append_only()`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_events').execute()
  await sql`drop function audit_events_append_only()`.execute(db)
}
