import type { FastifyBaseLogger } from 'fastify'
import type { Redis as RedisClient } from 'ioredis'

export interface RateLimitRedis {
  /** The client @fastify/rate-limit's Redis store runs its counting script on. */
  client: RedisClient
  /** Stops reconnecting and closes the connection. */
  close: () => void
}

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
 * second is dropped and dialled again. One warning per outage (when the connection is lost, or
 * cannot be made), one info line when it is back; the shared budget resumes by itself.
 */
export async function connectRateLimitRedis (url: string, log: FastifyBaseLogger): Promise<RateLimitRedis> {
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
  const down = (err?: Error) => {
    if (closing || up === false) return
    up = false
    log.warn({ redis: where, err: err === undefined ? undefined : { message: err.message, code: (err as NodeJS.ErrnoException).code } },
      'Redis unreachable: rate limits fail open (requests are served unlimited) until it is back')
  }
  client.on('error', down)
  client.on('close', () => { if (up === true) down() })
  client.on('ready', () => {
    if (up === false) log.info({ redis: where }, 'Redis reachable again: replicas share the rate-limit budget again')
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
    close: () => {
      closing = true
      client.disconnect()
    }
  }
}
