#!/usr/bin/env node
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { buildApp } from './app.js'
import { loadConfig } from './config.js'
import { projectFile } from './project-file.js'
import { connect } from './db/connect.js'
import { migrate, upToDate } from './db/migrate.js'
import { applySeedFile } from './db/seed-file.js'
import { formatSeedSummary } from './db/seed.js'

const USAGE = 'usage: team-access migrate | team-access seed [--dry-run] FILE | team-access schemas [--check]   (database from DATABASE_URL or DATA_DIR)'
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

/** `npm run schemas` writes schemas/openapi.json; with --check it fails when the committed file is stale. */
async function schemas (check: boolean): Promise<number> {
  const text = await openApiText()
  const committed = existsSync(OPENAPI_FILE) ? readFileSync(OPENAPI_FILE, 'utf8') : ''
  if (check) {
    if (committed === text) return 0
    console.error('schemas/openapi.json is stale: run `npm run schemas` and commit it')
    return 1
  }
  if (committed !== text) writeFileSync(OPENAPI_FILE, text)
  console.log(committed === text ? 'schemas/openapi.json: up to date' : 'schemas/openapi.json: written')
  return 0
}

/**
 * `npm run migrate` and `npm run seed -- [--dry-run] FILE`: exit 0 on success, 1 with a one-line
 * reason otherwise. A seed prints what it created, changed and removed; with --dry-run, what it
 * would, and changes nothing.
 */
export async function main (argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === 'schemas') return await schemas(rest[0] === '--check')
  const dryRun = command === 'seed' && rest[0] === '--dry-run'
  const file = dryRun ? rest[1] : rest[0]
  const extra = rest.length > (dryRun ? 2 : 1)
  if (command !== 'migrate' && !(command === 'seed' && file !== undefined && !extra)) {
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

if (process.argv[1] !== undefined && /cli\.[jt]s$/.test(process.argv[1])) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code }, (err: unknown) => {
    console.error(`team-access: ${(err as Error).message}`)
    process.exitCode = 1
  })
}
