import { mirrorCommand, parseMirror, tokenCommand, type MirrorCommand } from './mirror/command.js'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { buildApp, DEMO_SEED, isLoopback } from './app.js'
import { loadConfig } from './config.js'
import { projectFile } from './project-file.js'
import { connect } from './db/connect.js'
import { migrate, upToDate } from './db/migrate.js'
import { applySeedFile } from './directory/seed-file.js'
import { formatSeedSummary } from './directory/seed.js'
import { databaseMissing, databaseRefused } from './db/connect.js'

export const USAGE = `usage: team-access serve                    run the service (settings from the environment: README, "Settings")
       team-access migrate                  apply the migrations (one job for N replicas; see MIGRATE_ON_START)
       team-access seed [--dry-run] FILE   apply a seed file (--dry-run: say what it would change, change nothing)
       team-access seed [--dry-run] --demo apply the demo data (published tokens: only where HOST is a loopback address)
       team-access mirror --from URL --organization ORG [--dry-run | --seed-out FILE] [--token-file FILE] [--rate N]
                                            read an HCP Terraform organization and apply it here as one change (--dry-run: say
                                            what would change; --seed-out: write it as a seed document, touch no database);
                                            the token from TFE_TOKEN or --token-file, never from a flag
       team-access token --organization ORG make (anew) the organization's own token here and print it once: how reviewers
                                            of a mirrored organization sign in
       team-access schemas [--write | --check]   print the OpenAPI document (--write: to schemas/openapi.json; --check: fail when that file is stale)
       team-access --help | --version
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

/** The package's version, as `team-access --version` prints it. */
function version (): string {
  return (JSON.parse(readFileSync(projectFile('package.json'), 'utf8')) as { version: string }).version
}

/** What the command line asks for, or the one-line reason it makes no sense (exit 2, with the usage). */
type Command =
  | { kind: 'help' | 'version' | 'migrate' }
  | { kind: 'schemas', mode: string | undefined }
  | { kind: 'seed', file: string, demo: boolean, dryRun: boolean }
  | MirrorCommand
  | { kind: 'token', organization: string }
  | { kind: 'usage', problem?: string }

function parse (argv: string[]): Command {
  const [command, ...rest] = argv
  const unexpected: Command = { kind: 'usage', problem: `unexpected: ${rest.join(' ')}` }
  switch (command) {
    case undefined: return { kind: 'usage' }
    case '--help': case '-h': case 'help': return rest.length === 0 ? { kind: 'help' } : unexpected
    case '--version': case '-v': return rest.length === 0 ? { kind: 'version' } : unexpected
    case 'migrate': return rest.length === 0 ? { kind: 'migrate' } : unexpected
    case 'schemas':
      return rest.length <= 1 && (rest[0] === undefined || rest[0] === '--write' || rest[0] === '--check') ? { kind: 'schemas', mode: rest[0] } : unexpected
    case 'seed': {
      const dryRun = rest.includes('--dry-run')
      const demo = rest.includes('--demo')
      const files = rest.filter((arg) => arg !== '--dry-run' && arg !== '--demo')
      if (files.some((arg) => arg.startsWith('--'))) return { kind: 'usage', problem: `unknown option: ${files.find((arg) => arg.startsWith('--'))!}` }
      if (demo ? files.length !== 0 : files.length !== 1) return { kind: 'usage', problem: demo ? 'seed --demo takes no file' : 'seed needs one FILE (or --demo)' }
      return { kind: 'seed', file: demo ? DEMO_SEED : files[0]!, demo, dryRun }
    }
    case 'mirror': return parseMirror(rest)
    case 'token': return rest.length === 2 && rest[0] === '--organization' && rest[1] !== '' ? { kind: 'token', organization: rest[1]! } : { kind: 'usage', problem: 'token needs --organization ORG' }
    default: return { kind: 'usage', problem: `unknown command: ${command}` }
  }
}

/**
 * `team-access migrate` and `team-access seed [--dry-run] FILE | --demo`: exit 0 on success, 1 with a
 * one-line reason otherwise, 2 for a command line that makes no sense (with the usage). A seed
 * prints what it created, changed and removed; with --dry-run, what it would, and changes nothing —
 * not even creating a database: a dry run needs one that is there.
 */
export async function main (argv: string[]): Promise<number> {
  const command = parse(argv)
  switch (command.kind) {
    case 'help': console.log(USAGE); return 0
    case 'version': console.log(version()); return 0
    case 'schemas': return await schemas(command.mode)
    case 'usage':
      console.error(command.problem === undefined ? USAGE : `team-access: ${command.problem}\n${USAGE}`)
      return 2
  }
  const config = loadConfig()
  // --seed-out reads HCP Terraform and writes a file: no database at all
  if (command.kind === 'mirror' && command.seedOut !== undefined) return await mirrorCommand(undefined, command)
  const seed = command.kind === 'seed' ? command : undefined
  const dryRun = seed?.dryRun === true || (command.kind === 'mirror' && command.dryRun)
  if (seed?.demo === true && !isLoopback(config.host)) {
    console.error(`team-access: the demo data's tokens are published: not for a service that listens on ${config.host} (set HOST to a loopback address, 127.0.0.1)`)
    return 1
  }
  if (dryRun && 'dataDir' in config.database && !config.database.dataDir.startsWith('memory://') && isEmptyOrMissing(config.database.dataDir)) {
    console.error(`team-access: no database in DATA_DIR (${config.database.dataDir}): a dry run plans against one that is there (start the service once, or run \`team-access migrate\`)`)
    return 1
  }
  // an embedded database not there yet is made by the open, from the build's snapshot (./db/pglite.ts)
  const newDataDir = 'dataDir' in config.database && (config.database.dataDir.startsWith('memory://') || isEmptyOrMissing(config.database.dataDir.replace(/^file:\/\//, '')))
  const connection = await connect(config.database, config.schema === undefined ? {} : { schema: config.schema })
  try {
    // a dry run changes nothing, not even the schema: it plans against a database already migrated
    if (dryRun && !(await upToDate(connection.db))) {
      console.error('team-access: the database has migrations to apply; run `team-access migrate` first, then the dry run')
      return 1
    }
    const applied = await migrate(connection.db)
    if (command.kind === 'mirror') return await mirrorCommand({ connection, schema: config.schema }, command)
    if (command.kind === 'token') return await tokenCommand(connection.db, command.organization)
    if (seed === undefined) {
      // a new database with nothing left to apply came whole from the snapshot, every migration in it
      console.log(applied.length > 0
        ? `migrations applied: ${applied.map((m) => m.migrationName).join(', ')}`
        : newDataDir
          ? `migrations: a new database in DATA_DIR (${(config.database as { dataDir: string }).dataDir}), made from the build's snapshot with every migration applied: up to date`
          : 'migrations: up to date')
    } else {
      const [headline, ...lines] = formatSeedSummary(await applySeedFile(connection.db, seed.file, { dryRun: seed.dryRun }))
      console.log([`seed ${seed.demo ? 'the demo data' : seed.file}: ${headline!}`, ...lines].join('\n'))
    }
    return 0
  } catch (err) {
    const missing = databaseMissing(err, config.database) ?? databaseRefused(err, config.database)
    if (missing === undefined) throw err
    console.error(`team-access: ${missing}`)
    return 1
  } finally {
    await connection.close()
  }
}

function isEmptyOrMissing (dir: string): boolean {
  try {
    return readdirSync(dir).length === 0
  } catch {
    return true
  }
}
