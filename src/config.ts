import { parseInterval, type MirrorSchedule } from './mirror/schedule.js'
import { fromProblem } from './mirror/client.js'
import { Type, type Static } from '@sinclair/typebox'
import { getHeapStatistics } from 'node:v8'
import { envSchema } from 'env-schema'
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { StringEnum } from '../schemas/common.js'
import type { DatabaseLocation, DatabaseTimeouts } from './db/connect.js'

/** HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS when unset. */
const CONNECTION_TIMEOUTS = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 }

/** The settings of DESIGN §5, from the environment. */
export const Settings = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'Listen port.' }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'Listen address (0.0.0.0 in a container).' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://', description: 'A postgres:// URL; unset → embedded PGlite.' })),
  DATA_DIR: Type.String({ minLength: 1, default: './data', description: 'Embedded database directory; memory:// keeps it in memory.' }),
  DATABASE_SCHEMA: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_$]{0,62}$', default: 'team_access', description: 'The PostgreSQL schema of the service\'s tables (created when missing); a database made before it existed moves its tables there on the first start.' }),
  MIGRATE_ON_START: Type.Boolean({ default: true, description: 'Apply the migrations on start. false: the service refuses to start on a database with migrations to apply — run `team-access migrate` once, as a job, before starting N replicas.' }),
  SEED_FILE: Type.Optional(Type.String({ minLength: 1, description: 'A seed file applied on start.' })),
  LOG_LEVEL: StringEnum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info', description: 'pino level.' }),
  RATE_LIMIT: Type.Integer({ minimum: 0, default: 30, description: 'Requests per second per caller; 0 switches it off.' }),
  CALLER_CONCURRENCY: Type.Integer({ minimum: 0, default: 8, description: 'Requests of one caller in service at once; its others wait their turn (QUEUE_WAIT_MS), never refused for it. 0 switches the cap off.' }),
  QUEUE_WAIT_MS: Type.Integer({ minimum: 1, default: 2000, description: 'How long a request may wait for its turn at the database before 503 with Retry-After.' }),
  AUDIT_RETENTION_DAYS: Type.Integer({ minimum: 0, default: 90, description: 'Audit events older than this many days are purged in the background; 0 keeps them forever.' }),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://', description: 'The origin of absolute links (https://tfe.example.com); unset → the request\'s validated Host.' })),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://', description: 'A redis:// URL: the rate-limit budget is kept in Redis, shared by every replica; unset → in-process.' })),
  LOAD_SHED_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, default: 1000, description: 'Past this event-loop delay, API requests answer 503 with Retry-After; 0 switches it off.' }),
  LOAD_SHED_HEAP_USED_MB: Type.Optional(Type.Integer({ minimum: 0, description: 'Past this much V8 heap in use, API requests answer 503; unset → 90% of the heap limit, 0 switches it off.' })),
  LOAD_SHED_RSS_MB: Type.Integer({ minimum: 0, default: 0, description: 'Past this resident set size, API requests answer 503; 0 (the default) switches it off.' }),
  MAX_CONNECTIONS: Type.Optional(Type.Integer({ minimum: 1, description: 'Client connections held at once; past it a new connection is closed at once. Unset → three quarters of the process\'s file-descriptor limit (at most 32,768).' })),
  HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 1, default: CONNECTION_TIMEOUTS.headersTimeoutMs, description: 'How long a client may take to send a request\'s headers before its connection is closed.' }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 1, default: CONNECTION_TIMEOUTS.requestTimeoutMs, description: 'How long a client may take to send a whole request, and how long an idle connection is kept.' }),
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1, description: 'Who may say, in X-Forwarded-For, which client a request comes from: `true` (any proxy: only when nothing else can reach the service), a number of proxy hops, or addresses and CIDR ranges of the proxies, comma-separated. Unset → the connection\'s own address counts.' })),
  DB_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 1000, default: 10, description: 'PostgreSQL connections in the pool.' }),
  DB_CONNECTION_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 5000, description: 'How long a request waits for a pool connection before 503.' }),
  DB_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 5000, description: 'How long a statement (or a lock wait) may take before 503.' }),
  MIRROR_FROM: Type.Optional(Type.String({ pattern: '^https?://', description: 'Mirror an HCP Terraform organization from this address (https://app.terraform.io; http:// only to a loopback address), with MIRROR_ORGANIZATION and MIRROR_TOKEN_FILE (DESIGN §13).' })),
  MIRROR_ORGANIZATION: Type.Optional(Type.String({ minLength: 1, description: 'The organization to mirror.' })),
  MIRROR_TOKEN_FILE: Type.Optional(Type.String({ minLength: 1, description: 'A file holding the HCP Terraform token the mirror reads with (an owners team token, an owner\'s user token, or the organization token); read at each run, never logged.' })),
  MIRROR_INTERVAL: Type.String({ pattern: '^\\s*\\d+\\s*[smhd]?\\s*$', default: '1h', description: 'How long after a mirror run ends the next begins (1h, 30m; at least 1m); the first at start.' }),
  MIRROR_RATE: Type.Number({ exclusiveMinimum: 0, maximum: 1000, default: 20, description: 'Requests a second the mirror makes at most (HCP Terraform allows 30).' })
})
export type Settings = Static<typeof Settings>

export interface Config {
  port: number
  host: string
  database: DatabaseLocation
  /** The PostgreSQL schema of the service's tables (DATABASE_SCHEMA); absent → `team_access`. */
  schema?: string
  /** Apply the migrations on start (MIGRATE_ON_START); false: refuse to start when any are pending. Absent → true. */
  migrateOnStart?: boolean
  seedFile?: string
  logLevel: Settings['LOG_LEVEL']
  rateLimit: number
  /** One caller's requests in service at once (CALLER_CONCURRENCY), the rest waiting their turn; 0: no cap. */
  callerConcurrency?: number
  /** How long a request may wait for its turn (QUEUE_WAIT_MS). */
  queueWaitMs?: number
  /** The origin of absolute links (PUBLIC_URL). */
  publicUrl?: string
  /** REDIS_URL: where replicas share the rate-limit budget; absent → each process counts alone. */
  redisUrl?: string
  /** Load shedding (src/load-shedding.ts); absent → off. */
  loadShedding?: LoadShedding
  /** Days audit events are kept (AUDIT_RETENTION_DAYS); 0 or absent keeps them. */
  auditRetentionDays?: number
  /** How often the audit purge runs after the first, ms (not a setting: hourly; tests make it short). */
  auditPurgeEveryMs?: number
  /** Put the demo data into an empty embedded database (the standalone default). */
  demo: boolean
  /** Client connections: how many at once, and how long a silent or slow one is kept (the listening server only). */
  connections?: Connections
  /** Fastify's `trustProxy` (TRUST_PROXY): whose X-Forwarded-For names the client; absent → the peer address. */
  trustProxy?: TrustProxy
  /** Pool size and timeouts on PostgreSQL (DB_POOL_SIZE, DB_CONNECTION_TIMEOUT_MS, DB_STATEMENT_TIMEOUT_MS). */
  databaseTimeouts?: DatabaseTimeouts
  /** MIRROR_*: an HCP Terraform organization mirrored on a schedule (DESIGN §13.1); absent → none. */
  mirror?: MirrorSchedule
}

/** Limits on client connections (DESIGN §5): no client can hold the process's file descriptors. */
export interface Connections {
  /** Connections held at once; a new one past it is closed at once. */
  max: number
  /** A request's headers must arrive within this, ms. */
  headersTimeoutMs: number
  /** A whole request must arrive within this, and an idle connection is closed after it, ms. */
  requestTimeoutMs: number
}

/**
 * The default connection cap: three quarters of the soft file-descriptor limit (the rest is the
 * database's, the log's and the files the process opens), at most 32,768; 768 where the limit
 * cannot be read (it is 1,024 on most systems).
 */
export function defaultMaxConnections (limitsFile = '/proc/self/limits'): number {
  let soft = 1024
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync(limitsFile, 'utf8'))
    if (line !== null) soft = line[1] === 'unlimited' ? Infinity : Number(line[1])
  } catch {}
  return Math.max(16, Math.min(32_768, Math.floor(soft * 0.75)))
}

/** Fastify's `trustProxy`: any proxy, the proxies' addresses, or which hops to trust. */
export type TrustProxy = boolean | string[] | ((address: string, hop: number) => boolean)

/** The connection limits when no setting names them (tests and hosts that build the app themselves). */
export const defaultConnections = (): Connections => ({ max: defaultMaxConnections(), ...CONNECTION_TIMEOUTS })

/** TRUST_PROXY as Fastify's `trustProxy`: true, a hop count, or the proxies' addresses. */
export function parseTrustProxy (value: string): TrustProxy {
  if (value === 'true') return true
  if (value === 'false') return false
  if (/^\d+$/.test(value)) {
    const hops = Number(value)
    return (_address, hop) => hop < hops
  }
  const addresses = value.split(',').map((a) => a.trim()).filter((a) => a !== '')
  if (addresses.length === 0 || !addresses.every((a) => isIP(a.split('/')[0]!) !== 0 || ['loopback', 'linklocal', 'uniquelocal'].includes(a))) {
    throw new ConfigError('invalid setting: TRUST_PROXY must be true, false, a number of hops, or comma-separated addresses or CIDR ranges')
  }
  return addresses
}

/** Thresholds past which API requests answer 503 with Retry-After; 0 switches one off. */
export interface LoadShedding {
  maxEventLoopDelayMs: number
  maxHeapUsedBytes: number
  maxRssBytes: number
  /** How often the process is sampled, ms (default 1000). */
  sampleIntervalMs?: number
  /** Retry-After of a shed request, seconds (default 5). */
  retryAfterS?: number
}

const MB = 1024 * 1024

/** A setting that is wrong: the message says which and why, for a person to read. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

export function loadConfig (env: NodeJS.ProcessEnv = process.env): Config {
  // an empty variable (common in compose files) means unset
  const given = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''))
  let settings: Settings
  try {
    settings = envSchema<Settings>({ schema: { ...Settings }, data: given, env: false, dotenv: false })
  } catch (err) {
    throw new ConfigError(`invalid setting: ${(err as Error).message.replace(/(^|, )env\//g, '$1')}`)
  }
  if (settings.PUBLIC_URL !== undefined && !URL.canParse(settings.PUBLIC_URL)) {
    throw new ConfigError('invalid setting: PUBLIC_URL is not a valid URL (https://tfe.example.com)')
  }
  if (settings.DATABASE_URL !== undefined) {
    try {
      new URL(settings.DATABASE_URL) // eslint-disable-line no-new
    } catch {
      throw new ConfigError('invalid setting: DATABASE_URL is not a valid URL (postgres://user@host:port/database)')
    }
  }
  if (settings.REDIS_URL !== undefined) {
    try {
      new URL(settings.REDIS_URL) // eslint-disable-line no-new
    } catch {
      throw new ConfigError('invalid setting: REDIS_URL is not a valid URL (redis://host:port)')
    }
  }
  const mirror = mirrorSchedule(settings)
  return {
    port: settings.PORT,
    host: settings.HOST,
    database: settings.DATABASE_URL !== undefined ? { url: settings.DATABASE_URL } : { dataDir: settings.DATA_DIR },
    schema: settings.DATABASE_SCHEMA,
    migrateOnStart: settings.MIGRATE_ON_START,
    ...(settings.SEED_FILE === undefined ? {} : { seedFile: settings.SEED_FILE }),
    logLevel: settings.LOG_LEVEL,
    rateLimit: settings.RATE_LIMIT,
    callerConcurrency: settings.CALLER_CONCURRENCY,
    queueWaitMs: settings.QUEUE_WAIT_MS,
    auditRetentionDays: settings.AUDIT_RETENTION_DAYS,
    ...(settings.PUBLIC_URL === undefined ? {} : { publicUrl: new URL(settings.PUBLIC_URL).origin }),
    ...(settings.REDIS_URL === undefined ? {} : { redisUrl: settings.REDIS_URL }),
    loadShedding: {
      maxEventLoopDelayMs: settings.LOAD_SHED_EVENT_LOOP_DELAY_MS,
      // unset: 90% of the heap V8 may grow to, so that shedding starts before the allocator fails
      maxHeapUsedBytes: settings.LOAD_SHED_HEAP_USED_MB === undefined
        ? Math.floor(getHeapStatistics().heap_size_limit * 0.9)
        : settings.LOAD_SHED_HEAP_USED_MB * MB,
      maxRssBytes: settings.LOAD_SHED_RSS_MB * MB
    },
    demo: true,
    connections: {
      max: settings.MAX_CONNECTIONS ?? defaultMaxConnections(),
      headersTimeoutMs: settings.HEADERS_TIMEOUT_MS,
      requestTimeoutMs: settings.REQUEST_TIMEOUT_MS
    },
    ...(settings.TRUST_PROXY === undefined ? {} : { trustProxy: parseTrustProxy(settings.TRUST_PROXY) }),
    databaseTimeouts: {
      poolSize: settings.DB_POOL_SIZE,
      connectionTimeoutMs: settings.DB_CONNECTION_TIMEOUT_MS,
      statementTimeoutMs: settings.DB_STATEMENT_TIMEOUT_MS
    },
    ...(mirror === undefined ? {} : { mirror })
  }
}

/** MIRROR_FROM, MIRROR_ORGANIZATION and MIRROR_TOKEN_FILE go together: all three, or none. */
function mirrorSchedule (settings: Settings): MirrorSchedule | undefined {
  const named = { MIRROR_FROM: settings.MIRROR_FROM, MIRROR_ORGANIZATION: settings.MIRROR_ORGANIZATION, MIRROR_TOKEN_FILE: settings.MIRROR_TOKEN_FILE }
  const missing = Object.entries(named).filter(([, value]) => value === undefined).map(([name]) => name)
  if (missing.length === 3) return undefined
  if (missing.length > 0) throw new ConfigError(`invalid setting: the mirror needs MIRROR_FROM, MIRROR_ORGANIZATION and MIRROR_TOKEN_FILE together (missing: ${missing.join(', ')})`)
  const problem = fromProblem(settings.MIRROR_FROM!)
  if (problem !== undefined) throw new ConfigError(`invalid setting: MIRROR_FROM ${problem}`)
  const intervalMs = parseInterval(settings.MIRROR_INTERVAL)
  if (intervalMs === undefined) throw new ConfigError('invalid setting: MIRROR_INTERVAL must be a duration of at least a minute (1h, 30m, 90s, 1d)')
  return { from: settings.MIRROR_FROM!, organization: settings.MIRROR_ORGANIZATION!, tokenFile: settings.MIRROR_TOKEN_FILE!, intervalMs, rate: settings.MIRROR_RATE }
}
