import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Server } from 'node:net'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { Kysely } from 'kysely'
import type { Config } from './config.js'
import { connect, ping } from './db/connect.js'
import type { Database } from './db/database.js'
import { migrate } from './db/migrate.js'
import { applySeedFile } from './db/seed-file.js'
import { errorHandler, loggable, notFoundHandler } from './jsonapi/errors.js'
import { projectFile } from './project-file.js'
import { registerDocsUi, registerOpenApi } from './docs.js'
import teamAccess from './plugin.js'

export const API_PREFIX = '/api/v2'
export const DEMO_SEED = projectFile('seeds/demo.json')
const VERSION = (JSON.parse(readFileSync(projectFile('package.json'), 'utf8')) as { version: string }).version
/** How long a closing server keeps reading requests already sent on open connections. */
const DRAIN_MS = 500
const DEMO_TOKEN = 'acme-owners-demo-token'
const DEMO_WORKSPACE = 'ws-DemoProduction01'

export interface BuildOptions {
  /** Fastify's logger option; by default pino at the configured level with the Authorization header redacted. */
  logger?: FastifyServerOptions['logger']
  /** Where the default logger writes (standard output when absent); the log canary test reads it. */
  logStream?: { write: (line: string) => void }
}

/** Query parameters whose values never reach a log line, should a client put a secret there. */
const SECRET_PARAMETER = /token|secret|password|key|auth/i

/** The request as logged: method, path, and the query with secret-looking values masked. */
function requestForLog (request: { method: string, url: string, hostname?: string, ip?: string, id?: string }) {
  const [path, query] = request.url.split('?', 2)
  const url = query === undefined
    ? path
    : `${path}?${query.split('&').map((pair) => {
      const [key = '', value] = pair.split('=', 2)
      let name = key
      try { name = decodeURIComponent(key) } catch {}
      return value !== undefined && SECRET_PARAMETER.test(name) ? `${key}=[redacted]` : pair
    }).join('&')}`
  return { method: request.method, url, host: request.hostname, remoteAddress: request.ip }
}

/**
 * The standalone service: health and discovery routes, the plugin at /api/v2, on the database
 * the config names. Migrates on build and applies SEED_FILE, or the demo seed to an empty embedded database.
 */
export async function buildApp (config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
      serializers: { req: requestForLog },
      ...(options.logStream === undefined ? {} : { stream: options.logStream })
    },
    // bodies are JSON documents of a few hundred bytes; the plugin sets its own tighter limit
    bodyLimit: 1024 * 1024,
    // a slow or silent client must not hold a connection forever
    connectionTimeout: 30_000,
    requestTimeout: 30_000,
    // ids longer than this are answered by the router itself: in our error format, too
    routerOptions: { maxParamLength: 512 },
    // a caller's X-Request-Id (when it is a sane token) ties our log lines to theirs
    genReqId: (request) => {
      const given = request.headers['x-request-id']
      return typeof given === 'string' && /^[\w.:-]{1,64}$/.test(given) ? given : randomUUID()
    },
    frameworkErrors: (error, request, reply) => errorHandler(error, request, reply)
  })
  app.setErrorHandler(errorHandler)
  app.setNotFoundHandler(notFoundHandler)
  app.addHook('onRequest', async (request, reply) => { void reply.header('x-request-id', request.id) })

  const connection = await connect(config.database, { ...config.databaseTimeouts, onPoolError: (err) => app.log.warn({ err: loggable(err) }, 'database pool error') })
  app.addHook('onClose', async () => await connection.close())
  app.decorate('db', connection.db)
  try {
    await migrate(connection.db)
    await seedOnStart(app, connection.db, config)
  } catch (err) {
    await app.close()
    throw err
  }

  app.get('/healthz', async () => ({ status: 'ok' }))
  app.get('/readyz', async (_request, reply) => {
    await ping(connection.db) // a database error becomes the 503 document
    return await reply.send({ status: 'ok' })
  })
  // terrasnek and other clients discover the API root here
  app.get('/.well-known/terraform.json', async (_request, reply) => {
    const v2 = `${API_PREFIX}/`
    return await reply.type('application/json').send({ 'tfe.v2': v2, 'tfe.v2.1': v2, 'tfe.v2.2': v2, 'modules.v1': '/api/registry/v1/modules/' })
  })

  await registerOpenApi(app, VERSION)
  await app.register(teamAccess, {
    prefix: API_PREFIX,
    database: connection.db,
    migrate: false,
    rateLimit: config.rateLimit,
    publicUrl: config.publicUrl,
    auditRetentionDays: config.auditRetentionDays,
    auditPurgeEveryMs: config.auditPurgeEveryMs,
    admission: {
      // PGlite runs one statement at a time: a second request's JSON work overlaps the first's query
      concurrency: connection.engine === 'pglite' ? 2 : config.databaseTimeouts?.poolSize ?? 10,
      maxWaitMs: config.queueWaitMs ?? 2000,
      perCaller: config.callerConcurrency ?? 0
    }
  })
  await registerDocsUi(app)
  app.addHook('preClose', async () => {
    // Node's close() also drops connections it sees as idle, and a connection whose request is
    // still unread in its socket (the event loop busy with other requests) looks idle: stop
    // accepting first, give what was already sent a moment to be read, then let Fastify close.
    if (!app.server.listening) return
    Server.prototype.close.call(app.server)
    await new Promise((resolve) => setTimeout(resolve, DRAIN_MS))
  })
  app.addHook('onListen', async () => {
    if (app.demoSeeded) logDemo(app)
  })
  return app
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The standalone app's database handle (for its tests and tools; the API does not use it). */
    db: Kysely<Database>
    /** The standalone app put the demo data into an empty embedded database on this start. */
    demoSeeded: boolean
  }
}

async function seedOnStart (app: FastifyInstance, db: Kysely<Database>, config: Config): Promise<void> {
  app.decorate('demoSeeded', false)
  if (config.seedFile !== undefined) {
    const summary = await applySeedFile(db, config.seedFile)
    app.log.info({ seed: config.seedFile, ...summary }, 'seed file applied')
    return
  }
  // DESIGN §6: the published demo tokens only ever on a laptop — embedded, empty, no seed of
  // the operator's, listening on loopback; a container (HOST=0.0.0.0) never gets them
  if (!config.demo || !('dataDir' in config.database) || !isLoopback(config.host)) return
  const any = await db.selectFrom('organizations').select('id').limit(1).executeTakeFirst()
  if (any !== undefined) return
  const summary = await applySeedFile(db, DEMO_SEED)
  app.demoSeeded = true
  app.log.info({ seed: DEMO_SEED, ...summary }, 'empty embedded database: demo data applied')
}

/** A listen address only this machine can reach. */
export const isLoopback = (host: string): boolean =>
  host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)

function logDemo (app: FastifyInstance): void {
  const address = app.addresses()[0]
  if (address === undefined || typeof address === 'string') return
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}${API_PREFIX}/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=${DEMO_WORKSPACE}`
  app.log.info(`demo: list the team access of workspace ${DEMO_WORKSPACE} as the owners team:\n  curl -H 'Authorization: Bearer ${DEMO_TOKEN}' '${url}'`)
}
