import type { FastifyBaseLogger } from 'fastify'
import type { Redis as RedisClient } from 'ioredis'

export interface RateLimitRedis {
  /** The client @fastify/rate-limit's Redis store runs its counting script on. */
  client: RedisClient
  /** Whether Redis answers now (false from the first failure until it is back). */
  reachable: () => boolean
  /** Stops reconnecting and closes the connection. */
  close: () => void
}

/** While Redis stays unreachable, the warning is said again this often, ms. */
export const REPEAT_WARNING_MS = 60_000

/** How long a rate-limit check may wait for Redis before the request goes on without it, ms. */
const COMMAND_TIMEOUT_MS = 250

/**
 * The Redis connection of the shared rate-limit budget (REDIS_URL), with ioredis — the client
 * @fastify/rate-limit documents and tests its Redis store with; it reconnects by itself, and
 * runs the store's Lua script by its digest (EVALSHA, falling back to EVAL after a Redis restart).
 *
 * Redis must never stop the service. Set up to fail fast, so that the limiter (skipOnError) lets
 * the request through at once: no offline queue (a command while disconnected fails at once),
 * no retries of a command, 250 ms for a command, and a connection that stops answering for a
 * second is dropped and dialled again. A warning when the connection is lost (or cannot be made),
 * said again every minute while it stays lost, and an info line when it is back; the shared
 * budget resumes by itself. `reachable()` is what /metrics shows (team_access_rate_limit_redis_up).
 */
export async function connectRateLimitRedis (url: string, log: FastifyBaseLogger, options: { repeatWarningMs?: number } = {}): Promise<RateLimitRedis> {
  const where = (() => { const u = new URL(url); return `${u.hostname}:${u.port || 6379}` })() // never the password
  // ioredis loads only with REDIS_URL: a service without it does not pay for it at start
  const { Redis } = await import('ioredis')
  const client: RedisClient = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    socketTimeout: 1000,
    connectTimeout: 1000,
    // dial again every 100 ms at first, then every second
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
    connectionName: 'team-access-rate-limit'
  })
  let up: boolean | undefined // unknown until the first connection succeeds or fails
  let closing = false
  let since = 0
  let repeating: NodeJS.Timeout | undefined
  const down = (err?: Error) => {
    if (closing || up === false) return
    up = false
    since = Date.now()
    log.warn({ redis: where, err: err === undefined ? undefined : { message: err.message, code: (err as NodeJS.ErrnoException).code } },
      'Redis unreachable: rate limits fail open (requests are served unlimited) until it is back')
    repeating = setInterval(() => {
      log.warn({ redis: where, downForSeconds: Math.round((Date.now() - since) / 1000) },
        'Redis still unreachable: rate limits fail open (requests are served unlimited) until it is back')
    }, options.repeatWarningMs ?? REPEAT_WARNING_MS)
    repeating.unref()
  }
  client.on('error', down)
  client.on('close', () => { if (up === true) down() })
  client.on('ready', () => {
    clearInterval(repeating)
    if (up === false) log.info({ redis: where, downForSeconds: Math.round((Date.now() - since) / 1000) }, 'Redis reachable again: replicas share the rate-limit budget again')
    up = true
  })

  // wait for the first answer (connected or not), at most a little over the connect timeout
  await new Promise<void>((resolve) => {
    const settle = () => { clearTimeout(timer); client.off('ready', settle); client.off('error', settle); resolve() }
    const timer = setTimeout(settle, 1500)
    client.once('ready', settle)
    client.once('error', settle)
  })
  if (up === true) log.info({ redis: where }, 'rate-limit budget shared through Redis')
  else down()
  return {
    client,
    reachable: () => up === true,
    close: () => {
      closing = true
      clearInterval(repeating)
      client.disconnect()
    }
  }
}
