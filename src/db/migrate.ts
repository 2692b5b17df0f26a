import { Migrator, sql, type Kysely, type MigrationResult } from 'kysely'
import { migrations } from '../../migrations/index.js'

const MIGRATION_TABLE = 'team_access_migrations'

/** Applies every pending migration; applying twice is a no-op. Throws when one fails. */
export async function migrate (db: Kysely<any>): Promise<MigrationResult[]> {
  if (await upToDate(db)) return []
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: 'team_access_migrations_lock'
  })
  const { error, results = [] } = await migrator.migrateToLatest()
  if (error) {
    const failed = results.find((r) => r.status === 'Error')
    // no failed migration: the database itself did not answer; its error says why
    if (failed === undefined) throw error
    throw new Error(`migration ${failed.migrationName} failed: ${(error as Error).message ?? String(error)}`, { cause: error })
  }
  return results
}

/**
 * Every migration applied already (a dry run asks this: it changes nothing, a migration included), as on every start but the first (and on the first, with the
 * embedded database's pre-migrated snapshot): two reads instead of the Migrator's round of a dozen
 * statements through its lock table (~150 ms and ~10 MB on PGlite). Reading needs no lock: a
 * migration another process is applying shows only once committed, and then this is a no-op.
 */
export async function upToDate (db: Kysely<any>): Promise<boolean> {
  const { rows } = await sql<{ present: boolean }>`select to_regclass(${MIGRATION_TABLE}) is not null as present`.execute(db)
  if (rows[0]?.present !== true) return false
  const applied = await db.selectFrom(MIGRATION_TABLE).select('name').orderBy('name').execute()
  const known = Object.keys(migrations).sort()
  return applied.length === known.length && applied.every((row, i) => row.name === known[i])
}
