import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { setFlagsFromString } from 'node:v8'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createHash } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type DatabaseConnection, type Driver } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
import { migrations } from '../../migrations/index.js'
import { projectFile } from '../project-file.js'
import { migrate } from './migrate.js'
import { extractSnapshot, writeTar } from './pglite-tar.js'
import { DEFAULT_SCHEMA } from './tables.js'
import { LOCK_FILE } from './data-dir-lock.js'

/**
 * The embedded database, started fast and small.
 *
 * A new PGlite database runs initdb: seconds of CPU and a peak of ~800 MB (PGlite 0.4 starts a
 * second WebAssembly PostgreSQL for it); then the migrations' DDL costs more. Every new database
 * ends up the same, so the build makes one (`npm run build` runs pglite-snapshot.js: initdb, then
 * the migrations) and keeps it as a tarball beside the compiled code; a new database starts from a
 * copy of it, and migrate() finds nothing left to apply (or only what is newer than the build).
 * Without the tarball, with one of another PGlite line, or with one whose migrations are not the
 * ones loaded here (an edited migration and no rebuild), PGlite runs initdb as before.
 *
 * initdb sizes shared_buffers for a server (128 MB), and PGlite touches all of its shared memory on
 * every start: resident memory grows by about that much, and by more once the buffers fill. The
 * bench dataset (40,000 rows) answers as fast with 8 MB as with 128 MB: the operating system's
 * page cache (or, in memory, the file system) sits right behind the buffers.
 */
export const PGLITE_SETTINGS: readonly string[] = [
  'shared_buffers=8MB'
]

/**
 * V8 compiles PGlite's 9 MB of WebAssembly lazily and recompiles the hot functions with its
 * optimizing compiler on background tasks, up to 128 at once. Each worker thread that takes part
 * grows a malloc arena of its own and keeps it: ~40 MB of resident memory at start on a 2-core
 * machine, for no faster start (the first calls compile on the main thread anyway). One task does
 * the same work. The setting is process-wide: WebAssembly compiled later in this process gets one
 * background compile task too.
 */
let compileTasksLimited = false
function limitWasmCompileTasks (): void {
  if (compileTasksLimited) return
  compileTasksLimited = true
  setFlagsFromString('--wasm-num-compilation-tasks=1')
}

/** Where the build puts the pre-initialised data directory, and what it records about it. */
export const SNAPSHOT_FILE = projectFile('dist/pglite/pgdata.tar.gz')
export const SNAPSHOT_INFO = projectFile('dist/pglite/pgdata.json')
/** Bumped when the snapshot's contents or format change, so an old one is rebuilt. */
export const SNAPSHOT_FORMAT = 3

export interface SnapshotInfo {
  format: number
  pglite: string
  /** The schema the snapshot's tables are in: a database of another schema starts with initdb. */
  schema: string
  /** The migrations applied in the snapshot, in order, each with a digest of its SQL. */
  migrations: MigrationDigest[]
}
export interface MigrationDigest { name: string, sql: string }

/** Opens PGlite on a directory, or in memory for `memory://`; a new database starts from the snapshot made for `schema`. */
export async function openPGlite (dataDir: string, schema: string = DEFAULT_SCHEMA): Promise<PGlite> {
  limitWasmCompileTasks()
  const startParams = [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((setting) => ['-c', setting])]
  if (dataDir.startsWith('memory://')) {
    const snapshot = await snapshotFile(schema)
    // PGlite unpacks the tarball into its in-memory file system
    const loadDataDir = snapshot === undefined ? undefined : new Blob([readFileSync(snapshot)], { type: 'application/x-gzip' })
    return await PGlite.create({ startParams, ...(loadDataDir === undefined ? {} : { loadDataDir }) })
  }
  const directory = dataDir.startsWith('file://') ? dataDir.slice('file://'.length) : dataDir
  if (isEmptyDirectory(directory)) {
    const snapshot = await snapshotFile(schema)
    if (snapshot !== undefined) await extractSnapshot(snapshot, directory)
  }
  return await PGlite.create({ dataDir, startParams })
}

/** Absent, or a directory with nothing in it (but our lock): a new database. Anything else is PGlite's to judge. */
function isEmptyDirectory (directory: string): boolean {
  try {
    return statSync(directory).isDirectory() && readdirSync(directory).every((name) => name === LOCK_FILE)
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT'
  }
}

/** The installed PGlite's version, e.g. `0.4.6`. */
export function pgliteVersion (): string {
  const require = createRequire(import.meta.url)
  let dir = dirname(require.resolve('@electric-sql/pglite'))
  for (;;) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest)) {
      const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string, version: string }
      if (name === '@electric-sql/pglite') return version
    }
    const parent = dirname(dir)
    if (parent === dir) throw new Error('cannot find the version of @electric-sql/pglite')
    dir = parent
  }
}

/** Data directories are compatible within a PGlite line (0.4.x): same PostgreSQL major version. */
export function sameLine (a: string, b: string): boolean {
  const line = (version: string) => version.split('.').slice(0, 2).join('.')
  return line(a) === line(b)
}

/** The snapshot (a gzipped tarball) when there is one made by this PGlite line from the migrations loaded here. */
async function snapshotFile (schema: string): Promise<string | undefined> {
  let info: SnapshotInfo
  try {
    info = JSON.parse(readFileSync(SNAPSHOT_INFO, 'utf8')) as SnapshotInfo
  } catch {
    return undefined // not built: initdb
  }
  if (info.format !== SNAPSHOT_FORMAT || info.schema !== schema || !sameLine(info.pglite, pgliteVersion()) || !Array.isArray(info.migrations) || !existsSync(SNAPSHOT_FILE)) return undefined
  // what the snapshot applied must be where this code's migrations begin, statement for statement
  const current = await migrationDigests()
  if (info.migrations.some((applied, i) => applied.name !== current[i]?.name || applied.sql !== current[i]?.sql)) {
    warnStale()
    return undefined
  }
  return SNAPSHOT_FILE
}

let warned = false
function warnStale (): void {
  if (warned) return
  warned = true
  process.emitWarning(`${SNAPSHOT_FILE} was built from other migrations than these: new embedded databases run initdb (slow) until \`npm run build\` makes it again`)
}

let digests: Promise<MigrationDigest[]> | undefined

/**
 * Each migration's up() run against a database that only writes down the statements it is sent
 * (and answers no rows): a digest of that SQL, the same from src/ and from dist/.
 */
export async function migrationDigests (): Promise<MigrationDigest[]> {
  digests ??= (async () => {
    let statements: string[] = []
    const connection: DatabaseConnection = {
      executeQuery: async (query) => {
        statements.push(JSON.stringify([query.sql, query.parameters]))
        return { rows: [] }
      },
      streamQuery: async function * () {}
    }
    const driver: Driver = {
      init: async () => {},
      acquireConnection: async () => connection,
      beginTransaction: async () => {},
      commitTransaction: async () => {},
      rollbackTransaction: async () => {},
      releaseConnection: async () => {},
      destroy: async () => {}
    }
    const recorder = new Kysely<any>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => driver,
        createIntrospector: (db) => new PostgresIntrospector(db),
        createQueryCompiler: () => new PostgresQueryCompiler()
      }
    })
    const out: MigrationDigest[] = []
    for (const name of Object.keys(migrations).sort()) {
      statements = []
      await migrations[name]!.up(recorder)
      out.push({ name, sql: createHash('sha256').update(statements.join('\n')).digest('hex') })
    }
    return out
  })()
  return await digests
}

/**
 * Runs initdb once in a scratch directory, applies the migrations, shuts PostgreSQL down cleanly
 * (so a copy starts without recovery) and returns the directory as a gzipped tarball.
 */
export async function makeSnapshot (): Promise<Buffer> {
  const scratch = await mkdtemp(join(tmpdir(), 'team-access-initdb-'))
  try {
    // 1 MB WAL segments instead of 16: the copy is 28 MB instead of 44 (in memory, per database)
    const pglite = await PGlite.create({ dataDir: scratch, initDbStartParams: ['--wal-segsize=1'] })
    const db = new Kysely<any>({ dialect: new PGliteDialect(pglite) })
    try {
      await migrate(db, { schema: DEFAULT_SCHEMA })
    } finally {
      await db.destroy() // closes PGlite
    }
    return gzipSync(writeTar(scratch), { level: 9 })
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}
