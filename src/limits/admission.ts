import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { callerKey } from '../auth/caller.js'
import { ApiError, ClientGone } from '../jsonapi/errors.js'

/**
 * How much database work the API takes on at once (DESIGN §5, "one caller cannot starve the
 * others"). The rate limit counts arrivals; this bounds what runs: at most `concurrency`
 * requests in their handlers (at most `perCaller` of one caller's), the rest waiting in a queue
 * that serves callers in turn (one caller's backlog never sits in front of everyone else), for at
 * most `maxWaitMs`. Nothing here refuses a request a limit allows: a burst waits its turn; only a
 * wait past `maxWaitMs`, or a full queue, is refused (503 with Retry-After) — and a full queue
 * makes room for a caller with few waiting by refusing the newest of the caller with the most, so
 * that no caller's backlog can shut the others out. A request whose client has gone away by its
 * turn is dropped, not run.
 */
export interface AdmissionOptions {
  /** Requests in their handlers at once: the embedded database runs one statement at a time; PostgreSQL, the pool's size. */
  concurrency: number
  /** Requests waiting, in all; past it 503 with Retry-After (the caller with the most waiting gives way first). */
  queueLength: number
  /** How long a request may wait for its turn; past it 503 with Retry-After. */
  maxWaitMs: number
  /** One caller's requests in their handlers at once; the caller's others wait their turn. 0: no cap. */
  perCaller: number
}

/** What admission holds at a moment: every figure is 0 when no request is in the API. */
export interface AdmissionState {
  /** Requests holding a turn (in their handlers). */
  running: number
  /** Requests waiting for one. */
  waiting: number
  /** Callers with a request running or waiting. */
  callers: number
}

/**
 * One request's place in admission. It moves waiting → running → ended, or waiting → ended, or
 * straight to running; `end` is the only way out, and does its accounting once, whatever calls
 * it and however often: the answer being sent, the wait limit, the client leaving.
 */
interface Ticket {
  readonly key: string
  /** A request of a route that serves one of a caller's requests at a time (`config.onePerCaller`). */
  readonly alone: boolean
  stage: 'waiting' | 'running' | 'ended'
  /** While waiting: the promise the request's preHandler awaits, and the wait limit. */
  admit?: () => void
  refuse?: (error: ApiError) => void
  timer?: NodeJS.Timeout
}

/** The ticket of a request whose client left before it asked for a turn: it never gets one. */
const GONE: Ticket = Object.freeze({ key: '', alone: false, stage: 'ended' }) as Ticket

declare module 'fastify' {
  interface FastifyRequest {
    /** Where the request stands in admission (null: it has not asked for a turn). */
    admission: Ticket | null
  }
  interface FastifyInstance {
    /** What admission holds now (for metrics and tests). */
    admissionState: () => AdmissionState
  }
  interface FastifyContextConfig {
    /**
     * A route whose answers are heavy (the audit trail's pages of up to 1,000 events): one
     * caller's requests of it run one at a time — the rest wait their turn — so that one caller
     * paging fast cannot take the process's time from everyone else.
     */
    onePerCaller?: boolean
  }
}

const busy = () => new ApiError(503, 'service unavailable', 'The service is busy; try again shortly.')

/**
 * The accounting: turns, the queues callers wait in, each caller's count. No Fastify here; the
 * plugin below decides when a request asks, and makes sure every ticket it hands out is ended.
 */
export class Admission {
  private running = 0
  private waiting = 0
  /** Each caller's waiting tickets, callers in the order they are served. */
  private readonly queues = new Map<string, Ticket[]>()
  /** Each caller's tickets running or waiting (a caller leaves the map with its last). */
  private readonly holding = new Map<string, number>()
  /** Each caller's tickets running. */
  private readonly runningOf = new Map<string, number>()
  /** Callers with a request of a one-per-caller route running. */
  private readonly alone = new Set<string>()

  constructor (private readonly options: AdmissionOptions) {}

  state (): AdmissionState {
    return { running: this.running, waiting: this.waiting, callers: this.holding.size }
  }

  /**
   * A turn for `key`: a ticket already running, or one waiting with `wait` to await. Throws 503
   * when the queue is full and this caller has as many waiting as any; that holds nothing.
   */
  ask (key: string, alone = false): { ticket: Ticket, wait?: Promise<void> } {
    const { concurrency, queueLength, maxWaitMs } = this.options
    if (this.running < concurrency && this.waiting === 0 && this.mayRun(key, alone)) {
      this.join(key)
      const ticket: Ticket = { key, alone, stage: 'running' }
      this.run(ticket)
      return { ticket }
    }
    if (this.waiting >= queueLength) this.makeRoomFor(key)
    this.join(key)
    const ticket: Ticket = { key, alone, stage: 'waiting' }
    const wait = new Promise<void>((resolve, reject) => {
      ticket.admit = resolve
      ticket.refuse = reject
      ticket.timer = setTimeout(() => this.end(ticket, busy()), maxWaitMs)
    })
    this.waiting++
    const queue = this.queues.get(key)
    if (queue === undefined) this.queues.set(key, [ticket])
    else queue.push(ticket)
    // a turn may be free while only a caller's one-at-a-time requests wait: this one may run now
    this.admitNext()
    return { ticket, wait }
  }

  /**
   * The ticket's request is over, or will never run: its turn or its place in the queue goes
   * back (a waiting one's promise is refused with `reason`, by default ClientGone — made only then:
   * an error's stack costs more than the rest of a request's accounting). Once per ticket; later
   * calls do nothing.
   */
  end (ticket: Ticket, reason?: ApiError): void {
    const was = ticket.stage
    if (was === 'ended') return
    ticket.stage = 'ended'
    count(this.holding, ticket.key, -1)
    if (was === 'waiting') {
      this.dequeue(ticket)
      ticket.refuse!(reason ?? new ClientGone())
      return
    }
    this.running--
    count(this.runningOf, ticket.key, -1)
    if (ticket.alone) this.alone.delete(ticket.key)
    this.admitNext()
  }

  /** Whether a request of `key` may take a free turn: under the caller's cap, and not a second one-at-a-time request. */
  private mayRun (key: string, alone: boolean): boolean {
    const { perCaller } = this.options
    return (perCaller <= 0 || (this.runningOf.get(key) ?? 0) < perCaller) && !(alone && this.alone.has(key))
  }

  /**
   * The queue is full: the caller with the most waiting gives its newest place to `key` — when it
   * has more waiting than `key` would; otherwise it is `key`'s request that is refused (503).
   */
  private makeRoomFor (key: string): void {
    let longest: Ticket[] | undefined
    for (const queue of this.queues.values()) {
      if (longest === undefined || queue.length > longest.length) longest = queue
    }
    const own = this.queues.get(key)?.length ?? 0
    if (longest === undefined || longest.length <= own + 1) throw busy()
    this.end(longest[longest.length - 1]!, busy())
  }

  private run (ticket: Ticket): void {
    this.running++
    count(this.runningOf, ticket.key, 1)
    if (ticket.alone) this.alone.add(ticket.key)
    ticket.stage = 'running'
  }

  private join (key: string): void {
    count(this.holding, key, 1)
  }

  private dequeue (ticket: Ticket): void {
    clearTimeout(ticket.timer)
    this.waiting--
    const queue = this.queues.get(ticket.key)!
    queue.splice(queue.indexOf(ticket), 1)
    if (queue.length === 0) this.queues.delete(ticket.key)
  }

  /**
   * While a turn is free: the first waiting ticket of the next caller that may run one (not one
   * at its cap, nor one whose one-at-a-time request is running while its next is another) runs,
   * and that caller goes to the back of the line.
   */
  private admitNext (): void {
    while (this.running < this.options.concurrency) {
      let ticket: Ticket | undefined
      for (const queue of this.queues.values()) {
        if (this.mayRun(queue[0]!.key, queue[0]!.alone)) {
          ticket = queue[0]!
          break
        }
      }
      if (ticket === undefined) return
      this.dequeue(ticket)
      const rest = this.queues.get(ticket.key)
      if (rest !== undefined) { // to the back of the line
        this.queues.delete(ticket.key)
        this.queues.set(ticket.key, rest)
      }
      this.run(ticket)
      ticket.admit!()
    }
  }
}

/**
 * Admission as Fastify hooks. A request asks for its turn after validation (a request refused
 * anyway never waits); its turn goes back when its answer is ready (`onSend`: the handler's work
 * is over, whatever the answer), and a waiting request's place when its client leaves or its
 * wait runs out. The client leaving while its request runs gives nothing back early: the work
 * still holds its database connection (a statement waiting on a lock included) until it ends,
 * and the answer that ends it — sent to nobody — gives the turn back.
 */
export default fp<AdmissionOptions>(async (app, options) => {
  const admission = new Admission(options)
  /** Requests whose client was seen leaving before the answer: each is said once. */
  const gone = new WeakSet<FastifyRequest>()
  const clientGone = (request: FastifyRequest) => {
    if (gone.has(request)) return
    gone.add(request)
    request.log.info('client closed the connection before the answer')
  }
  app.decorate('admissionState', () => admission.state())
  app.decorateRequest('admission', null)

  // a callback hook: a request that gets its turn at once (nothing waits) costs no promise
  app.addHook('preHandler', (request, reply, done) => {
    // its client is gone already: running it would do work no one will read
    if (request.admission !== null || clientLeft(request)) return done(new ClientGone())
    let asked
    try {
      asked = admission.ask(callerKey(request.caller), request.routeOptions.config.onePerCaller === true)
    } catch (error) {
      void reply.header('retry-after', '1')
      return done(error as ApiError)
    }
    const { ticket, wait } = asked
    request.admission = ticket
    // a client that leaves while its request waits takes its place in the queue with it; one
    // that leaves before its answer is said once, at info: nothing went wrong here
    reply.raw.once('close', () => {
      if (reply.raw.writableFinished) return
      clientGone(request)
      if (ticket.stage === 'waiting') admission.end(ticket)
    })
    if (wait === undefined) return done()
    wait.then(() => {
      // admitted: its client may have left at the very moment its turn came
      done(clientLeft(request) ? new ClientGone() : undefined)
    }, (error: ApiError) => {
      if (!(error instanceof ClientGone)) void reply.header('retry-after', '1')
      done(error)
    })
  })
  // every answer passes here, whatever ended the handler (a request that never reaches a handler
  // holds no turn); a callback hook, so that it costs no promise per request
  app.addHook('onSend', (request, _reply, payload, done) => {
    if (request.admission !== null) admission.end(request.admission)
    done(null, payload)
  })
  app.addHook('onRequestAbort', async (request) => {
    clientGone(request)
    if (request.admission === null) request.admission = GONE // it must never take a turn
    else if (request.admission.stage === 'waiting') admission.end(request.admission)
  })
}, { name: 'team-access-admission', fastify: '5.x' })

/** Adds `by` to `key`'s count; a count of 0 leaves the map. */
function count (counts: Map<string, number>, key: string, by: number): void {
  const n = (counts.get(key) ?? 0) + by
  if (n > 0) counts.set(key, n)
  else counts.delete(key)
}

/** Its connection is gone (a request's own stream may be done with once its body is read: not a sign). */
const clientLeft = (request: FastifyRequest): boolean => request.raw.socket?.destroyed === true
