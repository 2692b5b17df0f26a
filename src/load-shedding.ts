import type { FastifyInstance } from 'fastify'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { getHeapStatistics } from 'node:v8'
import type { LoadShedding } from './config.js'
import { ApiError, JSONAPI_TYPE, loggable } from './jsonapi/errors.js'

const CAUSES = {
  eventLoopDelay: 'event-loop delay',
  heapUsedBytes: 'heap in use',
  rssBytes: 'resident memory'
} as const
type Cause = keyof typeof CAUSES

/** The event-loop delay histogram's resolution, ms (what @fastify/under-pressure uses too). */
const RESOLUTION_MS = 10

declare module 'fastify' {
  interface FastifyInstance {
    /** Whether the last sample was past a load-shedding threshold. */
    isUnderPressure: () => boolean
  }
}

/**
 * Load shedding: while the event-loop delay or the memory in use is past its threshold (sampled
 * every second), requests under `prefix` answer 503 with Retry-After at once — before
 * authentication, rate limiting or any database work — and `app.isUnderPressure()` says so
 * (/readyz fails until it recovers). Routes outside the prefix (/healthz, /metrics, the docs) are
 * served as usual: they are cheap, and a scraper or a liveness probe must not mistake an
 * overloaded process for a dead one.
 *
 * The sampler is ours, not @fastify/under-pressure's: that one reads the resident set size on
 * every sample, which opens a file, and throws in its timer when the process is out of file
 * descriptors — an uncaught error that ended the process (a client holding connections could do
 * it). Here the heap comes from V8 (no file), the resident set size is read only when a
 * threshold needs it, and a sample that fails keeps the last figures and is logged — at most
 * once a minute — never thrown.
 */
export async function registerLoadShedding (app: FastifyInstance, prefix: string, options: LoadShedding): Promise<void> {
  const retryAfter = options.retryAfterS ?? 5
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  histogram.enable()
  let pressure: Cause | null = null
  let rssBytes = 0
  let lastWarning = 0

  const sample = (): void => {
    try {
      const delay = Math.max(0, histogram.mean / 1e6 - RESOLUTION_MS)
      histogram.reset()
      if (options.maxRssBytes > 0) rssBytes = process.memoryUsage.rss()
      pressure = options.maxEventLoopDelayMs > 0 && (Number.isNaN(delay) || delay > options.maxEventLoopDelayMs)
        ? 'eventLoopDelay'
        : options.maxHeapUsedBytes > 0 && getHeapStatistics().used_heap_size > options.maxHeapUsedBytes
          ? 'heapUsedBytes'
          : options.maxRssBytes > 0 && rssBytes > options.maxRssBytes ? 'rssBytes' : null
    } catch (err) {
      // out of file descriptors, say: the last figures stand until a sample succeeds
      if (Date.now() - lastWarning >= 60_000) {
        lastWarning = Date.now()
        app.log.warn({ err: loggable(err as Error) }, 'load shedding: the process could not be sampled; the last sample stands')
      }
    }
  }
  const timer = setInterval(sample, options.sampleIntervalMs ?? 1000).unref()
  app.addHook('onClose', async () => {
    clearInterval(timer)
    histogram.disable()
  })
  app.decorate('isUnderPressure', () => pressure !== null)

  // a callback hook: on every request it costs a comparison, no promise
  app.addHook('onRequest', (request, reply, done) => {
    if (pressure === null || !(request.routeOptions.url ?? request.url).startsWith(prefix)) return done()
    // a reply sent from onRequest (without `done`) ends the request: no later hook and no handler run
    void reply.status(503).header('retry-after', String(retryAfter)).type(JSONAPI_TYPE)
      .send({ errors: [new ApiError(503, 'service unavailable', `The service is overloaded (${CAUSES[pressure]}); retry in ${retryAfter} s.`).toObject()] })
  })
}
