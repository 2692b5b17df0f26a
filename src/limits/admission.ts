import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { callerKey } from '../auth/caller.js'
import { ApiError } from '../jsonapi/errors.js'

/**
 * How much database work the API takes on at once (DESIGN §5, "one caller cannot starve the
 * others"). The rate limit counts arrivals; this bounds what runs: at most `concurrency`
 * requests in their handlers, the rest waiting in a queue that serves callers in turn (one
 * caller's backlog never sits in front of everyone else), for at most `maxWaitMs`. A request
 * whose client has gone away by its turn is dropped, not run.
 */
export interface AdmissionOptions {
  /** Requests in their handlers at once: the embedded database runs one statement at a time; PostgreSQL, the pool's size. */
  concurrency: number
  /** Requests waiting, in all; past it 503 with Retry-After. */
  queueLength: number
  /** How long a request may wait for its turn; past it 503 with Retry-After. */
  maxWaitMs: number
  /** One caller's requests in service or waiting at once; past it 429. 0: no cap. */
  perCaller: number
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Where the request stands in admission: waiting, or holding one of the slots. */
    admission: 'waiting' | 'running' | 'done' | null
  }
}

interface Waiter {
  request: FastifyRequest
  admit: () => void
  refuse: (error: ApiError) => void
  timer: NodeJS.Timeout
}

const busy = () => new ApiError(503, 'service unavailable', 'The service is busy; try again shortly.')

export default fp<AdmissionOptions>(async (app, options) => {
  let running = 0
  let waiting = 0
  /** Each caller's waiting requests, callers in the order they are served. */
  const queues = new Map<string, Waiter[]>()
  const perCaller = new Map<string, number>()

  const leave = (request: FastifyRequest) => {
    const key = callerKey(request.caller)
    const n = (perCaller.get(key) ?? 1) - 1
    if (n > 0) perCaller.set(key, n)
    else perCaller.delete(key)
  }

  /** The next waiting request, callers in turn, skipping those whose client has gone. */
  const next = (): Waiter | undefined => {
    for (const [key, queue] of queues) {
      const waiter = queue.shift()!
      queues.delete(key)
      if (queue.length > 0) queues.set(key, queue) // to the back of the line
      waiting--
      clearTimeout(waiter.timer)
      if (waiter.request.admission !== 'waiting' || waiter.request.raw.socket?.destroyed === true) {
        release(waiter.request) // aborted while waiting (already released), or gone by now
        waiter.refuse(busy()) // nobody is there to read it
        continue
      }
      return waiter
    }
    return undefined
  }

  const release = (request: FastifyRequest) => {
    const was = request.admission
    // aborted before its turn was asked for (during authentication, say): it must never take one
    if (was === null) request.admission = 'done'
    if (was !== 'running' && was !== 'waiting') return
    request.admission = 'done'
    leave(request)
    if (was === 'waiting') return // its timer or its turn takes it out of the queue
    running--
    const waiter = next()
    if (waiter !== undefined) {
      running++
      waiter.request.admission = 'running'
      waiter.admit()
    }
  }

  app.decorateRequest('admission', null)
  // after validation: a request that is refused anyway never waits
  app.addHook('preHandler', async (request, reply) => {
    // its client is gone already: running it would hold a slot no response will ever give back
    if (request.admission === 'done' || request.raw.socket?.destroyed === true) throw busy()
    const key = callerKey(request.caller)
    if (options.perCaller > 0 && (perCaller.get(key) ?? 0) >= options.perCaller) {
      void reply.header('retry-after', '1')
      throw new ApiError(429, 'too many requests', `More than ${options.perCaller} requests of one caller at once; retry when one has been answered.`)
    }
    if (running < options.concurrency && waiting === 0) {
      running++
      perCaller.set(key, (perCaller.get(key) ?? 0) + 1)
      request.admission = 'running'
      return
    }
    if (waiting >= options.queueLength) {
      void reply.header('retry-after', '1')
      throw busy()
    }
    perCaller.set(key, (perCaller.get(key) ?? 0) + 1)
    request.admission = 'waiting'
    waiting++
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        request,
        admit: resolve,
        refuse: reject,
        timer: setTimeout(() => {
          const queue = queues.get(key)!
          queue.splice(queue.indexOf(waiter), 1)
          if (queue.length === 0) queues.delete(key)
          waiting--
          release(request)
          void reply.header('retry-after', '1')
          reject(busy())
        }, options.maxWaitMs)
      }
      const queue = queues.get(key)
      if (queue === undefined) queues.set(key, [waiter])
      else queue.push(waiter)
    })
  })
  app.addHook('onResponse', async (request) => release(request))
  app.addHook('onRequestAbort', async (request) => release(request))
}, { name: 'team-access-admission', fastify: '5.x' })
