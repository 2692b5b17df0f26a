import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import underPressure from '@fastify/under-pressure'
import type { LoadShedding } from './config.js'
import { ApiError, JSONAPI_TYPE } from './jsonapi/errors.js'

const CAUSES: Record<string, string> = {
  eventLoopDelay: 'event-loop delay',
  heapUsedBytes: 'heap in use',
  rssBytes: 'resident memory'
}

/**
 * Load shedding with @fastify/under-pressure: while the event-loop delay or the memory in use is
 * past its threshold (sampled every second), requests under `prefix` answer 503 with
 * Retry-After at once — before authentication, rate limiting or any database work — and
 * `app.isUnderPressure()` says so (/readyz fails until it recovers). Routes outside the prefix
 * (/healthz, /metrics, the docs) are served as usual: they are cheap, and a scraper or a
 * liveness probe must not mistake an overloaded process for a dead one.
 */
export async function registerLoadShedding (app: FastifyInstance, prefix: string, options: LoadShedding): Promise<void> {
  const retryAfter = options.retryAfterS ?? 5
  const shed = (request: FastifyRequest, reply: FastifyReply, type: string) => {
    if (!(request.routeOptions.url ?? request.url).startsWith(prefix)) return undefined // served as usual
    void reply.status(503).header('retry-after', String(retryAfter)).type(JSONAPI_TYPE)
    // a value returned is sent as the answer, and no later hook runs
    return { errors: [new ApiError(503, 'service unavailable', `The service is overloaded (${CAUSES[type] ?? type}); retry in ${retryAfter} s.`).toObject()] }
  }
  await app.register(underPressure, {
    maxEventLoopDelay: options.maxEventLoopDelayMs,
    maxHeapUsedBytes: options.maxHeapUsedBytes,
    maxRssBytes: options.maxRssBytes,
    sampleInterval: options.sampleIntervalMs ?? 1000,
    retryAfter,
    pressureHandler: shed as unknown as NonNullable<underPressure.FastifyUnderPressureOptions['pressureHandler']>
  })
}
