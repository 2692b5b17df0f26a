import { scheduleMirror } from './mirror/schedule.js'
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { readFileSync } from 'node:fs'
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import type { Kysely } from 'kysely'
import { defaultConnections, type Config } from './config.js'
import { connect, ping, type Connection } from './db/connect.js'
import type { Database } from './db/database.js'
import { migrate, MigrationsPending, upToDate } from './db/migrate.js'
import { applySeedFile, DEMO_SEED } from './directory/seed-file.js'
import { countChanges, formatSeedSummary } from './directory/seed-entries.js'
import { ApiError, errorHandler, JSONAPI_TYPE, loggable, notFoundHandler } from './jsonapi/errors.js'
import { registerLoadShedding } from './load-shedding.js'
import { registerMetrics, registerRedisMetric } from './metrics.js'
import { connectRateLimitRedis } from './limits/rate-limit-redis.js'
import { clientErrorHandler, createListener } from './listener.js'
import { drainListener, type DrainOptions } from './shutdown.js'
import { standardOutput } from './log-output.js'
import { projectFile } from './project-file.js'
import { DOCS_PATH, registerDocsUi, registerOpenApi } from './docs.js'
import { registerUi, UI_PATH } from './ui.js'
import teamAccess from './plugin.js'
import { buildSerializerOncePerSchema } from './validation.js'

export const API_PREFIX = '/api/v2'
export { DEMO_SEED }
const VERSION = (JSON.parse(readFileSync(projectFile('package.json'), 'utf8')) as { version: string }).version
const DEMO_TOKEN = 'acme-owners-demo-token'
const DEMO_WORKSPACE = 'ws-DemoProduction01'

export interface BuildOptions {
  /** Fastify's logger option; by default pino at the configured level with the Authorization header redacted. */
  logger?: FastifyServerOptions['logger']
  /**
   * Where the default logger writes; the log canary test reads it. Standard output when absent,
   * through ./log-output.ts: a line that cannot be written is dropped, never retried forever.
   */
  logStream?: { write: (line: string) => void }
  /**
   * Lines a person reads (pino-pretty), one per request, instead of JSON lines (two per request).
   * By default: when the default logger writes to standard output and that is a terminal.
   */
  prettyLogs?: boolean
  /** How a closing server drains its listener (DESIGN §5, Shutdown). */
  drain?: DrainOptions
  /**
   * The database of `config.database`, already being opened (src/server.ts starts opening the
   * embedded one while the rest of the service loads); buildApp connects itself when absent.
   */
  connection?: Promise<Connection>
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
 * the config names. Migrates on build (unless MIGRATE_ON_START is false) and applies SEED_FILE, or the demo seed to an empty embedded database.
 */
export async function buildApp (config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const pretty = options.logger === undefined &&
    (options.prettyLogs ?? (options.logStream === undefined && process.stdout.isTTY === true))
  const destination = options.logStream ?? standardOutput()
  const connections = config.connections ?? defaultConnections()
  const app = Fastify({
    logger: options.logger ?? {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
      serializers: { req: requestForLog },
      stream: pretty ? await prettyStream(destination) : destination
    },
    ...(pretty ? { logController: new OneLinePerRequest() } : {}),
    // a server that is closing still answers what reaches it — with our documents, not
    // Fastify's own 503 — until it has drained (preClose below)
    return503OnClosing: false,
    // bodies are JSON documents of a few hundred bytes; the plugin sets its own tighter limit
    bodyLimit: 1024 * 1024,
    // no client can hold every file descriptor, nor a connection forever (./listener.ts)
    serverFactory: (handler: (req: IncomingMessage, res: ServerResponse) => void) => createListener(connections, handler),
    // what Node's parser refuses is answered with an error document too
    clientErrorHandler,
    // behind a load balancer, the client's own address (X-Forwarded-For) counts, when trusted
    ...(config.trustProxy === undefined ? {} : { trustProxy: config.trustProxy }),
    // ids longer than this are answered by the router itself: in our error format, too
    routerOptions: { maxParamLength: 512 },
    // a caller's X-Request-Id (when it is a sane token) ties our log lines to theirs
    genReqId: (request) => {
      const given = request.headers['x-request-id']
      return typeof given === 'string' && /^[\w.:-]{1,64}$/.test(given) ? given : randomUUID()
    },
    frameworkErrors: (error, request, reply) => errorHandler(error, request, reply),
    // a response schema shared by many routes (the error document is on every one) is compiled once
    schemaController: { compilersFactory: { buildSerializer: buildSerializerOncePerSchema() } }
  })
  app.setErrorHandler(errorHandler)
  app.setNotFoundHandler(notFoundHandler)
  // a callback hook, not an async one: no promise on every request
  app.addHook('onRequest', (request, reply, done) => { void reply.header('x-request-id', request.id); done() })
  // an error of the listening socket (accept failing when descriptors run out) is logged, not
  // thrown: with no listener it would end the process. Before it listens, listen() itself rejects
  // with it (a port in use: one line from the entry, no stack here)
  app.server.on('error', (err) => { if (app.server.listening) app.log.warn({ err: loggable(err) }, 'listening socket error') })

  const connection = await (options.connection ?? connect(config.database, { ...config.databaseTimeouts, ...(config.schema === undefined ? {} : { schema: config.schema }), onPoolError: (err) => app.log.warn({ err: loggable(err) }, 'database pool error') }))
  app.addHook('onClose', async () => await connection.close())
  app.decorate('db', connection.db)
  // metrics first: routes registered before them are not timed; shed requests are counted
  const registry = await registerMetrics(app, connection)
  await registerLoadShedding(app, API_PREFIX, config.loadShedding ?? { maxEventLoopDelayMs: 0, maxHeapUsedBytes: 0, maxRssBytes: 0 })
  try {
    if (config.migrateOnStart ?? true) await migrate(connection.db)
    else if (!(await upToDate(connection.db))) throw new MigrationsPending()
    await seedOnStart(app, connection.db, config)
  } catch (err) {
    await app.close()
    throw err
  }

  let closing = false
  const notReady = (): ApiError | null => closing
    ? new ApiError(503, 'service unavailable', 'The service is shutting down.')
    : app.isUnderPressure()
      ? new ApiError(503, 'service unavailable', 'The service is overloaded.')
      : null
  app.get('/healthz', async () => ({ status: 'ok' }))
  // a person who opens the service's address lands on its documentation
  app.get('/', { schema: { hide: true } }, async (_request, reply) => await reply.redirect(DOCS_PATH, 302))
  app.get('/readyz', async (_request, reply) => {
    // not ready is an answer, not a failure: the document without an error log line per probe
    const unready = (error: ApiError) => reply.status(error.statusCode).type(JSONAPI_TYPE).send({ errors: [error.toObject()] })
    const before = notReady()
    if (before !== null) return await unready(before)
    await ping(connection.db) // a database error becomes the 503 document
    const after = notReady() // the signal may have come while the database answered
    if (after !== null) return await unready(after)
    return await reply.send({ status: 'ok' })
  })
  // terrasnek and other clients discover the API root here
  app.get('/.well-known/terraform.json', async (_request, reply) => {
    const v2 = `${API_PREFIX}/`
    return await reply.type('application/json').send({ 'tfe.v2': v2, 'tfe.v2.1': v2, 'tfe.v2.2': v2, 'modules.v1': '/api/registry/v1/modules/' })
  })

  const redis = config.redisUrl !== undefined && config.rateLimit > 0 ? await connectRateLimitRedis(config.redisUrl, app.log) : undefined
  if (redis !== undefined) {
    app.addHook('onClose', async () => redis.close())
    registerRedisMetric(registry, redis.reachable)
  }

  await registerOpenApi(app, VERSION)
  const concurrency = connection.engine === 'pglite' ? 2 : config.databaseTimeouts?.poolSize ?? 10
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
      concurrency,
      queueLength: Math.max(200, 4 * concurrency),
      maxWaitMs: config.queueWaitMs ?? 2000,
      perCaller: config.callerConcurrency ?? 0
    },
    ...(redis === undefined ? {} : { rateLimitRedis: redis.client })
  })
  await registerDocsUi(app)
  await registerUi(app, { path: UI_PATH, apiBase: API_PREFIX })
  // MIRROR_*: an HCP Terraform organization read on a schedule, the first run once the app is ready (DESIGN §13.1)
  if (config.mirror !== undefined) scheduleMirror(app, connection, config.mirror, registry, config.schema)
  // Shutdown (DESIGN §5): from here /readyz answers 503; the listener takes and answers what is
  // queued for it until connections stop arriving, then closes; Fastify then waits for the
  // requests in flight, and only then do the onClose hooks close the database.
  app.addHook('preClose', async () => {
    closing = true
    if (!app.server.listening) return
    const { ms, connections, queued } = await drainListener(app.server, options.drain)
    app.log.info({ ms, connections, queuedAtSignal: queued }, 'listener closed; finishing the requests in flight')
  })
  app.addHook('onListen', async () => {
    if (app.demoSeeded) logDemo(app)
  })
  return app
}

/** For a person at a terminal: one line per request, when it is answered, instead of two. */
class OneLinePerRequest extends LogController {
  override incomingRequest (): void {}
  override requestCompleted (error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    const line = `${request.method} ${requestForLog(request).url} ${reply.statusCode} ${reply.elapsedTime.toFixed(1)} ms`
    if (error) reply.log.error({ err: error }, line)
    else reply.log.info(line)
  }
}

/**
 * pino's JSON lines as lines a person reads: time, level, request id, message; errors with their
 * stack below. pino-pretty loads only then: a service that logs JSON does not pay for it at start.
 */
async function prettyStream (destination: { write: (line: string) => void }): Promise<{ write: (line: string) => void }> {
  const { prettyFactory } = await import('pino-pretty')
  const prettify = prettyFactory({
    colorize: destination === standardOutput() && process.stdout.hasColors?.() === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,reqId',
    messageFormat: '{if reqId}{reqId} {end}{msg}'
  })
  return { write: (line) => { destination.write(prettify(line)) } }
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
    // the summary names rows (never a secret): every removal a start made is in its log, by name
    const { created, changed, removed, ...counts } = summary
    app.log.info({ seed: config.seedFile, ...counts, created: countChanges(created), changed: countChanges(changed), removed },
      `seed file: ${formatSeedSummary(summary).join('\n')}`)
    // a declared secret that was revoked stays revoked: the operator should take it out of the file
    for (const warning of summary.warnings) app.log.warn({ seed: config.seedFile }, `seed file: ${warning}`)
    return
  }
  // DESIGN §6: the published demo tokens only ever on a laptop — embedded, empty, no seed of
  // the operator's, listening on loopback; a container (HOST=0.0.0.0) never gets them
  const any = await db.selectFrom('organizations').select('id').limit(1).executeTakeFirst()
  if (any !== undefined) return
  if (!config.demo || !('dataDir' in config.database) || !isLoopback(config.host)) {
    // every request would be 401 with nothing to say why: say it once, here
    app.log.info('empty database: no organization, so no token to ask with — apply a seed (`npm run seed -- FILE` in a clone, `npx team-access seed FILE` where it is installed, or SEED_FILE), or the demo data on a laptop (`npm run seed -- --demo`)')
    return
  }
  const { created, changed, removed, ...counts } = await applySeedFile(db, DEMO_SEED)
  app.demoSeeded = true
  app.log.info({ seed: DEMO_SEED, ...counts }, 'empty embedded database: demo data applied')
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
