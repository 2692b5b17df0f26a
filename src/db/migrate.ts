import { Migrator, type Kysely, type MigrationResult } from 'kysely'
import { migrations } from '../../migrations/index.js'

/** Applies every pending migration; applying twice is a no-op. Throws when one fails. */
export async function migrate (db: Kysely<any>): Promise<MigrationResult[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'team_access_migrations',
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
