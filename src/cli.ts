import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { buildApp } from './app.js'
import { loadConfig } from './config.js'
import { projectFile } from './project-file.js'
import { connect } from './db/connect.js'
import { migrate, upToDate } from './db/migrate.js'
import { applySeedFile } from './db/seed-file.js'
import { formatSeedSummary } from './db/seed.js'

export const USAGE = `usage: team-access serve                    run the service (settings from the environment: README, "Settings")
       team-access migrate                  apply the migrations (one job for N replicas; see MIGRATE_ON_START)
       team-access seed [--dry-run] FILE   apply a seed file (--dry-run: say what it would change, change nothing)
       team-access schemas [--write | --check]   print the OpenAPI document (--write: to schemas/openapi.json; --check: fail when that file is stale)
The database is DATABASE_URL's, or the embedded one in DATA_DIR (stop a service using it first).`
export const OPENAPI_FILE = projectFile('schemas/openapi.json')

/** The OpenAPI document as the standalone app serves it, formatted for the repository. */
export async function openApiText (): Promise<string> {
  const app = await buildApp({ port: 0, host: '127.0.0.1', database: { dataDir: 'memory://' }, logLevel: 'silent', rateLimit: 0, demo: false }, { logger: false })
  try {
    await app.ready()
    return `${JSON.stringify(app.swagger(), null, 2)}\n`
  } finally {
    await app.close()
  }
}

/**
 * `team-access schemas` prints the OpenAPI document; `--write` puts it in schemas/openapi.json (the
 * repository's copy, `npm run schemas`), `--check` fails when that copy is stale.
 */
async function schemas (mode: string | undefined): Promise<number> {
  const text = await openApiText()
  if (mode === undefined) {
    process.stdout.write(text)
    return 0
  }
  const committed = existsSync(OPENAPI_FILE) ? readFileSync(OPENAPI_FILE, 'utf8') : ''
  if (mode === '--check') {
    if (committed === text) return 0
    console.error('schemas/openapi.json is stale: run `npm run schemas` and commit it')
    return 1
  }
  if (committed !== text) writeFileSync(OPENAPI_FILE, text)
  console.log(committed === text ? 'schemas/openapi.json: up to date' : 'schemas/openapi.json: written')
  return 0
}

/**
 * `team-access migrate` and `team-access seed [--dry-run] FILE`: exit 0 on success, 1 with a one-line
 * reason otherwise. A seed prints what it created, changed and removed; with --dry-run, what it
 * would, and changes nothing.
 */
export async function main (argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === 'schemas' && rest.length <= 1 && (rest[0] === undefined || rest[0] === '--write' || rest[0] === '--check')) return await schemas(rest[0])
  const dryRun = command === 'seed' && rest[0] === '--dry-run'
  const file = dryRun ? rest[1] : rest[0]
  const extra = rest.length > (dryRun ? 2 : 1)
  if (!(command === 'migrate' && rest.length === 0) && !(command === 'seed' && file !== undefined && !extra)) {
    console.error(USAGE)
    return 2
  }
  const config = loadConfig()
  const connection = await connect(config.database, config.schema === undefined ? {} : { schema: config.schema })
  try {
    // a dry run changes nothing, not even the schema: it plans against a database already migrated
    if (dryRun && !(await upToDate(connection.db))) {
      console.error('team-access: the database has migrations to apply; run `team-access migrate` first, then the dry run')
      return 1
    }
    const applied = await migrate(connection.db)
    if (command === 'migrate') {
      console.log(applied.length === 0 ? 'migrations: up to date' : `migrations applied: ${applied.map((m) => m.migrationName).join(', ')}`)
    } else {
      const [headline, ...lines] = formatSeedSummary(await applySeedFile(connection.db, file!, { dryRun }))
      console.log([`seed ${file!}: ${headline!}`, ...lines].join('\n'))
    }
    return 0
  } finally {
    await connection.close()
  }
}
