import { Migrator, sql, type Kysely, type MigrationResult } from 'kysely'
import { migrations } from '../../migrations/index.js'
import { schemaOf, validSchemaName } from './tables.js'

const MIGRATION_TABLE = 'team_access_migrations'
const MIGRATION_LOCK_TABLE = 'team_access_migrations_lock'

/**
 * What the migrations made before the plugin had a schema of its own (up to 0009, in `public`):
 * moved into the schema, rows and all, by relocate() below. A list, not a query: `public` may hold
 * the host's tables of the same names only where it never held these.
 */
const TABLES_BEFORE_0010 = [
  'organizations', 'users', 'teams', 'team_memberships', 'workspaces', 'tokens', 'team_workspaces',
  'workspace_access_counts', 'seed_grants', 'audit_events', 'revoked_tokens', MIGRATION_TABLE, MIGRATION_LOCK_TABLE
]
const FUNCTIONS_BEFORE_0010 = [
  'team_access_count_rows', 'team_access_row_visibility', 'team_access_team_visibility', 'audit_events_append_only'
]

export interface MigrateOptions {
  /** The schema of the plugin's tables (default: the one `db` works in, `team_access` for any other Kysely). */
  schema?: string
}

/**
 * Applies every pending migration in the plugin's schema; applying twice is a no-op. Throws when
 * one fails.
 *
 * The migrations name their tables bare, and the plugin's statements never depend on
 * `search_path` (src/db/tables.ts) — but migrations do: they run on one connection whose
 * `search_path` is the schema alone, for the time they run, and the connection gets its own back
 * afterwards. The Migrator's own tables, and its lock, are in the schema too. A database made
 * before the schema existed (the plugin's tables in `public`) is moved into it first, in place.
 */
export async function migrate (db: Kysely<any>, options: MigrateOptions = {}): Promise<MigrationResult[]> {
  const schema = validSchemaName(options.schema ?? schemaOf(db))
  if (await upToDate(db, options)) return []
  return await withSearchPath(db, schema, async (connection) => {
    const migrator = new Migrator({
      db: connection,
      provider: { getMigrations: async () => migrations },
      migrationTableName: MIGRATION_TABLE,
      migrationLockTableName: MIGRATION_LOCK_TABLE,
      migrationTableSchema: schema
    })
    const { error, results = [] } = await migrator.migrateToLatest()
    if (error) {
      const failed = results.find((r) => r.status === 'Error')
      // no failed migration: the database itself did not answer; its error says why
      if (failed === undefined) throw error
      throw new Error(`migration ${failed.migrationName} failed: ${(error as Error).message ?? String(error)}`, { cause: error })
    }
    return results
  })
}

/**
 * Runs `work` on one connection whose search_path is the schema alone (created, and a database of
 * before the schema moved into it, first), as migrations need; the connection gets its own
 * search_path back afterwards, whatever happens.
 */
export async function withSearchPath<T> (db: Kysely<any>, schema: string, work: (connection: Kysely<any>) => Promise<T>): Promise<T> {
  return await db.connection().execute(async (connection) => {
    await createSchema(connection, schema)
    await relocate(connection, schema)
    const { rows: [saved] } = await sql<{ path: string }>`select current_setting('search_path') as path`.execute(connection)
    await sql`select set_config('search_path', ${quoteIdentifier(schema)}, false)`.execute(connection)
    try {
      return await work(connection)
    } finally {
      await sql`select set_config('search_path', ${saved?.path ?? 'public'}, false)`.execute(connection)
    }
  })
}

/** A start with MIGRATE_ON_START=false on a database that is not at this version's migrations. */
export class MigrationsPending extends Error {
  constructor () {
    super('the database is not at this version\'s migrations and MIGRATE_ON_START is false: run `team-access migrate` (once, as a job), then start the service')
  }
}

/**
 * A database migrated by a newer version of team-access than this one (a rollback of the code
 * without the database): this version cannot know what those migrations changed, so it neither
 * migrates nor serves it.
 */
export class DatabaseNewer extends Error {
  constructor (readonly unknown: string[]) {
    super(`the database was migrated by a newer team-access (${unknown.join(', ')}, unknown to this version): run that version, or restore the backup taken before the upgrade (README, "Production")`)
  }
}

/**
 * Every migration applied already (a dry run asks this: it changes nothing, a migration included), as on every start but the first (and on the first, with the
 * embedded database's pre-migrated snapshot): two reads instead of the Migrator's round of a dozen
 * statements through its lock table (~150 ms and ~10 MB on PGlite). Reading needs no lock: a
 * migration another process is applying shows only once committed, and then this is a no-op.
 * Throws DatabaseNewer when the database has migrations this version does not know.
 */
export async function upToDate (db: Kysely<any>, options: MigrateOptions = {}): Promise<boolean> {
  const schema = validSchemaName(options.schema ?? schemaOf(db))
  const { rows } = await sql<{ present: boolean }>`select to_regclass(${`${quoteIdentifier(schema)}.${MIGRATION_TABLE}`}) is not null as present`.execute(db)
  if (rows[0]?.present !== true) return false
  const applied = await db.withSchema(schema).selectFrom(MIGRATION_TABLE).select('name').orderBy('name').execute()
  const known = Object.keys(migrations).sort()
  const unknown = applied.map((row) => row.name as string).filter((name) => !(name in migrations))
  if (unknown.length > 0) throw new DatabaseNewer(unknown)
  return applied.length === known.length && applied.every((row, i) => row.name === known[i])
}

/**
 * `create schema if not exists` is not safe against itself: of two replicas starting on a new
 * database, one may fail on the catalog's unique index while the other creates it. That one
 * finds the schema there, as the Migrator does for its table.
 */
async function createSchema (db: Kysely<any>, schema: string): Promise<void> {
  try {
    await sql`create schema if not exists ${sql.id(schema)}`.execute(db)
  } catch (err) {
    const { rows } = await sql<{ present: boolean }>`select exists (select 1 from pg_namespace where nspname = ${schema}) as present`.execute(db)
    if (rows[0]?.present !== true) throw err
  }
}

/**
 * A database the plugin migrated before 0010 keeps its tables in `public`: each is moved into
 * the schema (`alter table … set schema` keeps every row, index, constraint, trigger and
 * sequence), with the trigger functions and the Migrator's tables, in one transaction — and only
 * once: under an advisory lock, so that replicas starting together move it once, and only while
 * the schema has no migrations table of its own.
 */
async function relocate (db: Kysely<any>, schema: string): Promise<void> {
  if (schema === 'public') return
  const moved = (await sql<{ moved: boolean }>`select to_regclass(${`public.${MIGRATION_TABLE}`}) is not null as moved`.execute(db)).rows[0]?.moved
  if (moved !== true) return
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('team-access relocation'))`.execute(trx)
    const { rows: [state] } = await sql<{ old: boolean, new: boolean }>`select to_regclass(${`public.${MIGRATION_TABLE}`}) is not null as old,
      to_regclass(${`${quoteIdentifier(schema)}.${MIGRATION_TABLE}`}) is not null as new`.execute(trx)
    if (state?.old !== true || state.new) return
    for (const name of TABLES_BEFORE_0010) {
      const present = (await sql<{ present: boolean }>`select to_regclass(${`public.${name}`}) is not null as present`.execute(trx)).rows[0]?.present
      if (present === true) await sql`alter table public.${sql.id(name)} set schema ${sql.id(schema)}`.execute(trx)
    }
    for (const name of FUNCTIONS_BEFORE_0010) {
      const { rows } = await sql<{ present: boolean }>`select exists (select 1 from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname = 'public' and p.proname = ${name}) as present`.execute(trx)
      if (rows[0]?.present === true) await sql`alter function public.${sql.id(name)}() set schema ${sql.id(schema)}`.execute(trx)
    }
  })
}

/** An identifier as PostgreSQL reads it in text (`to_regclass`, `search_path`): quoted. */
function quoteIdentifier (name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}
