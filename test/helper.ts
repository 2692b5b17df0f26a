import { randomBytes } from 'node:crypto'
import { connect as netConnect, createServer, type Socket } from 'node:net'
import { once } from 'node:events'
import { sql } from 'kysely'
import type { Test } from 'tap'
import pg from 'pg'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import type { Config } from '../src/config.js'
import { connect, type Connection, type DatabaseLocation } from '../src/db/connect.js'
import { migrate } from '../src/db/migrate.js'
import { applySeedDocument } from '../src/directory/seed.js'
import { table } from '../src/db/tables.js'

/** Tests run on PGlite by default and on the PostgreSQL server of DATABASE_URL when it is set. */
export const ENGINE: 'postgres' | 'pglite' = process.env.DATABASE_URL ? 'postgres' : 'pglite'

/**
 * A database of this test file's own: a fresh PGlite in memory, or a new database on the server
 * (dropped when the test ends), so files that run in parallel never share rows.
 */
export async function freshLocation (t: Test): Promise<DatabaseLocation> {
  const url = process.env.DATABASE_URL
  if (!url) return { dataDir: 'memory://' }
  const name = `team_access_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`create database ${name}`)
  await admin.end()
  t.teardown(async () => {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    await c.query(`drop database if exists ${name} with (force)`)
    await c.end()
  })
  const target = new URL(url)
  target.pathname = `/${name}`
  return { url: target.toString() }
}

/** A migrated database of the test's own, closed when the test ends. */
export async function freshDatabase (t: Test): Promise<Connection> {
  const connection = await connect(await freshLocation(t))
  t.teardown(() => connection.close())
  await migrate(connection.db)
  return connection
}

export function testConfig (database: DatabaseLocation, overrides: Partial<Config> = {}): Config {
  return { port: 0, host: '127.0.0.1', database, logLevel: 'silent', rateLimit: 0, demo: false, ...overrides }
}

/** The standalone app on a fresh database, optionally seeded, closed when the test ends. */
export async function build (t: Test, options: { seed?: unknown, config?: Partial<Config> } = {}): Promise<FastifyInstance> {
  const app = await buildApp(testConfig(await freshLocation(t), options.config), { logger: false })
  // registered after freshLocation's teardown, so it runs first: close, then drop
  t.teardown(() => app.close())
  if (options.seed !== undefined) await applySeedDocument(app.db, options.seed)
  return app
}

/**
 * Every row of every table, sorted, for "nothing changed" assertions. A token's last_used_at is
 * left out: using a token is no change (a request's lookup notes it, at most once a minute).
 */
export async function snapshot (db: Connection['db']): Promise<Record<string, unknown[]>> {
  const tables = ['organizations', 'users', 'teams', 'team_memberships', 'workspaces', 'tokens', 'team_workspaces'] as const
  const out: Record<string, unknown[]> = {}
  for (const table of tables) {
    const rows = await db.selectFrom(table).selectAll().execute()
    out[table] = rows.map((r) => JSON.stringify(r, (key, value: unknown) => key === 'last_used_at' ? undefined : value)).sort()
  }
  return out
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/**
 * Holds a team-access row's lock in a transaction of its own until the returned function is
 * called: on PostgreSQL, statements that write the row wait on the lock; on PGlite, which has one
 * connection, every statement waits for it.
 */
export async function holdRow (db: Connection['db'], id: string): Promise<() => Promise<void>> {
  let release!: () => void
  const held = new Promise<void>((resolve) => { release = resolve })
  let locked!: () => void
  const isLocked = new Promise<void>((resolve) => { locked = resolve })
  const lock = db.transaction().execute(async (trx) => {
    await sql`select id from ${table.team_workspaces} where id = ${id} for update`.execute(trx)
    locked()
    await held
  })
  await isLocked
  return async () => {
    release()
    await lock
  }
}

/** A PATCH of a team-access row written to a raw socket (the test destroys it when it likes). */
export function patchOverSocket (port: number, token: string, id: string, attributes: Record<string, unknown>): Socket {
  const body = JSON.stringify({ data: { type: 'team-workspaces', attributes } })
  const socket = netConnect(port, '127.0.0.1')
  socket.on('error', () => {})
  socket.resume()
  socket.write(`PATCH /api/v2/team-workspaces/${id} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
    `Content-Type: application/vnd.api+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
  return socket
}

/** A port nobody listens on right now, on loopback (for a child process that must listen on one). */
export async function freePort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  return port
}
