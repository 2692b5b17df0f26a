import { Kysely, PostgresDialect, sql, type KyselyConfig, type PostgresPool, type PostgresPoolClient } from 'kysely'
import type pg from 'pg'
import type { PGlite } from '@electric-sql/pglite'
import type { Database } from './database.js'
import { inSchema, validSchemaName, DEFAULT_SCHEMA } from './tables.js'
import { NamedStatement, statementNameOf } from './named-statements.js'

/** Where the data lives: a PostgreSQL server, or an embedded PGlite directory (`memory://` for none). */
export type DatabaseLocation = { url: string } | { dataDir: string }

export interface DatabaseTimeouts {
  /** How long to wait for a connection from the pool or the server, ms. */
  connectionTimeoutMs?: number
  /** How long one statement may run on the server, ms. */
  statementTimeoutMs?: number
  /** How many connections the pool may open. */
  poolSize?: number
}

/** How the PostgreSQL pool is used: connections open, idle, and requests waiting for one. */
export interface PoolUsage {
  max: number
  total: number
  idle: number
  waiting: number
}

export interface Connection {
  /** The plugin's tables, qualified with `schema` in every statement (src/db/tables.ts). */
  db: Kysely<Database>
  /** The PostgreSQL schema of the plugin's tables. */
  schema: string
  engine: 'postgres' | 'pglite'
  /** The PostgreSQL pool's counts right now (metrics read it); absent on PGlite, which is one connection. */
  pool?: () => PoolUsage
  /** Destroys the Kysely instance and with it the pool or the embedded database. */
  close: () => Promise<void>
}

/**
 * The one line a person needs when the PostgreSQL server is there but the database is not
 * (`3D000`): its name, the server, and the command that creates it. Undefined for any other error.
 */
export function databaseMissing (err: unknown, location: DatabaseLocation): string | undefined {
  if ((err as { code?: unknown } | null)?.code !== '3D000' || !('url' in location)) return undefined
  let url: URL
  try {
    url = new URL(location.url)
  } catch {
    return undefined
  }
  const name = decodeURIComponent(url.pathname.replace(/^\//, '')) || decodeURIComponent(url.username) || 'postgres'
  const host = url.hostname || 'localhost'
  const port = url.port || '5432'
  const user = url.username === '' ? '' : ` -U ${decodeURIComponent(url.username)}`
  return `database "${name}" does not exist on the PostgreSQL server at ${host}:${port}: create it first (createdb -h ${host} -p ${port}${user} ${name}), then start again`
}

/**
 * The one line a person needs when the PostgreSQL server refuses the connection's role (`28000`:
 * no such role, or no pg_hba.conf entry for it; `28P01`: a wrong password): the server, the user
 * and the server's reason — never the password. Undefined for any other error.
 */
export function databaseRefused (err: unknown, location: DatabaseLocation): string | undefined {
  const e = err as { code?: unknown, message?: unknown } | null
  if ((e?.code !== '28000' && e?.code !== '28P01') || !('url' in location)) return undefined
  let url: URL
  try {
    url = new URL(location.url)
  } catch {
    return undefined
  }
  const user = decodeURIComponent(url.username) || 'the default user'
  const named = url.username === '' ? user : `user "${user}"`
  return `the PostgreSQL server at ${url.hostname || 'localhost'}:${url.port || '5432'} refused ${named} (${String(e.message)}): check the user and password in DATABASE_URL`
}

export async function connect (location: DatabaseLocation, options: DatabaseTimeouts & {
  /** The PostgreSQL schema of the plugin's tables (default `team_access`). */
  schema?: string
  onPoolError?: (err: Error) => void
  /** Kysely's log hook: sees every statement sent (the round-trip budget test counts with it). */
  log?: KyselyConfig['log']
} = {}): Promise<Connection> {
  const schema = validSchemaName(options.schema ?? DEFAULT_SCHEMA)
  // each engine's modules load only when it is used: a PGlite start does not parse pg, nor the reverse
  if ('url' in location) {
    const { default: { Pool } } = await import('pg')
    const pgPool = new Pool({
      connectionString: location.url,
      max: options.poolSize ?? 10,
      // every pg timeout defaults to "wait forever"
      connectionTimeoutMillis: options.connectionTimeoutMs ?? 5000,
      statement_timeout: options.statementTimeoutMs ?? 5000,
      lock_timeout: options.statementTimeoutMs ?? 5000,
      idle_in_transaction_session_timeout: 10_000,
      idleTimeoutMillis: 30_000,
      application_name: 'team-access'
    })
    // an idle client's error (server restart, network) must not kill the process
    pgPool.on('error', (err) => options.onPoolError?.(err))
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparedStatements(pgPool, options.onPoolError, { readTimeoutMs: (options.statementTimeoutMs ?? 5000) + 1000 }) }), log: options.log })
    const max = options.poolSize ?? 10
    const pool = (): PoolUsage => ({ max, total: pgPool.totalCount, idle: pgPool.idleCount, waiting: pgPool.waitingCount })
    return { db: inSchema(db, schema), schema, engine: 'postgres', pool, close: () => db.destroy() }
  }
  const [{ openPGlite }, { preparedPGlite }, { PGliteDialect }, { lockDataDir }] = await Promise.all([
    import('./pglite.js'), import('./pglite-statements.js'), import('kysely-pglite-dialect'), import('./data-dir-lock.js')])
  // a directory is one process's at a time (./data-dir-lock.ts); memory:// is this process's alone
  const directory = location.dataDir.startsWith('memory://') ? undefined : location.dataDir.replace(/^file:\/\//, '')
  const lock = directory === undefined ? undefined : lockDataDir(directory)
  let pglite
  try {
    pglite = await openPGlite(location.dataDir, schema)
  } catch (err) {
    lock?.release()
    throw err
  }
  // each query shape parsed and planned once (./pglite-statements.ts), as the server's pool does below
  const db = new Kysely<Database>({ dialect: new PGliteDialect(preparedPGlite(pglite, MAX_PREPARED) as unknown as PGlite), log: options.log })
  const close = async () => {
    try {
      await db.destroy()
    } finally {
      lock?.release()
    }
  }
  return { db: inSchema(db, schema), schema, engine: 'pglite', close }
}

/**
 * Every statement as a named prepared statement, so the server parses and plans each query shape
 * once per connection instead of on every request: the authorization CTEs cost far more to plan
 * than to run. Names are the digest of the SQL text; past MAX_PREPARED shapes (seed files with
 * lists of every length), statements run unnamed as before.
 *
 * The plugin's own pool (a `{ url }` location) always works this way. A host that hands the
 * plugin its own Kysely wraps its `pg` pool with it to get the same for the plugin's statements
 * (and its own): `new PostgresDialect({ pool: preparedStatements(pool) })`. A prepared statement
 * outlives DDL on its connection: a `select *` of a table whose columns change fails there until
 * the connection is replaced, so list the columns in statements that run across such a change.
 */
const MAX_PREPARED = 500
const statementNames = new Map<string, string>()

function statementName (text: string): string | undefined {
  let name = statementNames.get(text)
  if (name === undefined && statementNames.size < MAX_PREPARED) {
    name = statementNameOf(text)
    statementNames.set(text, name)
  }
  return name
}

export function preparedStatements (pool: pg.Pool, onError?: (err: Error) => void, options: {
  /**
   * A statement not answered within this time (a server that stops answering altogether: no
   * statement_timeout can fire then) fails with `Query read timeout`, and its connection is closed
   * and leaves the pool. Unset: no limit, as pg's own default.
   */
  readTimeoutMs?: number
} = {}): PostgresPool {
  const listening = new WeakSet<pg.PoolClient>()
  return {
    connect: async () => {
      const client = await pool.connect()
      // the pool listens to idle clients only: a connection lost while a request holds its client
      // would otherwise be an unhandled 'error' event, and end the process
      if (!listening.has(client)) {
        listening.add(client)
        client.on('error', (err) => onError?.(err))
      }
      return {
        query: ((text: unknown, values?: unknown[]) => {
          // a statement the plugin named already (./named-statements.ts) keeps its name
          if (text instanceof NamedStatement) return send({ name: text.name, text: text.text, values })
          if (typeof text !== 'string') return client.query(text as any) // a cursor
          const name = statementName(text)
          return send(name === undefined ? { text, values } : { name, text, values })
        }) as PostgresPoolClient['query'],
        release: () => client.release()
      }
      /** A statement on this connection: failed with `Query read timeout` when the server does not answer in time. */
      function send (config: pg.QueryConfig): Promise<pg.QueryResult> {
        const { readTimeoutMs } = options
        if (readTimeoutMs === undefined) return client.query(config)
        // the read timeout is ours, not pg's query_timeout: pg's timer holds the statement, and
        // through it every result, on the heap until a full collection (measured: a streamed
        // access review's whole output promoted to the old generation). This timer holds the
        // connection and a holder that the answer empties, never the answer.
        return new Promise((resolve, reject) => {
          const pending: { reject?: (err: Error) => void } = { reject }
          const timer = setTimeout(() => {
            const err = new Error('Query read timeout')
            pending.reject?.(err)
            pending.reject = undefined
            // the connection is closed, so that the pool drops it on release (pg-native has no socket of its own: ended)
            const stream = (client as { connection?: { stream?: { destroy: (err: Error) => void } } }).connection?.stream
            if (stream !== undefined) stream.destroy(err)
            else client.end().catch(() => {})
          }, readTimeoutMs)
          client.query(config, (err, result) => {
            clearTimeout(timer)
            const fail = pending.reject
            pending.reject = undefined
            if (fail === undefined) return // timed out: already refused
            if (err === undefined || err === null) resolve(result as any)
            else fail(err)
          })
        })
      }
    },
    end: () => pool.end()
  }
}

/** One cheap round trip: is the database there? */
export async function ping (db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db)
}
