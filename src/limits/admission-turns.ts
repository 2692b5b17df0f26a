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
 *
 * A streamed answer (DESIGN §12.1's CSV and unpaged document) is still the request's work after
 * its handler returned: its ticket is **parked** when the handler hands the stream over — it keeps
 * its place under the caller's cap, but no turn at the database — and each read of the stream
 * takes a turn again (**resuming**, waiting in the caller's queue like any request, ahead of the
 * caller's new ones) and parks it after (`inTurn`). It ends when the answer ends: its last byte
 * written or its client gone.
 */
export interface Ticket {
  readonly key: string
  /** A request of a route that serves one of a caller's requests at a time (`config.onePerCaller`). */
  readonly alone: boolean
  stage: 'waiting' | 'running' | 'parked' | 'resuming' | 'ended'
  /** The answer is over (sent, or its client gone): a running ticket ends when its read gives the turn back. */
  answered?: boolean
  /** The admission it belongs to (a stream's reads ask it for turns). */
  readonly of?: Admission
  /** While waiting or resuming: the promise the request awaits; while waiting, the wait limit. */
  admit?: () => void
  refuse?: (error: ApiError) => void
  timer?: NodeJS.Timeout
}

/** The ticket of a request whose client left before it asked for a turn: it never gets one. */
export const GONE: Ticket = Object.freeze({ key: '', alone: false, stage: 'ended' }) as Ticket

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
  /** Each caller's tickets admitted and not ended (running, or a stream's between its reads): what its cap counts. */
  private readonly admittedOf = new Map<string, number>()
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
      const ticket: Ticket = { key, alone, stage: 'running', of: this }
      this.run(ticket)
      return { ticket }
    }
    if (this.waiting >= queueLength) this.makeRoomFor(key)
    this.join(key)
    const ticket: Ticket = { key, alone, stage: 'waiting', of: this }
    const wait = this.enqueue(ticket)
    ticket.timer = setTimeout(() => this.end(ticket, busy()), maxWaitMs)
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
    if (was === 'waiting' || was === 'resuming') {
      this.dequeue(ticket)
      ticket.refuse!(reason ?? new ClientGone())
      if (was === 'waiting') return
    }
    if (was === 'running') this.running--
    count(this.admittedOf, ticket.key, -1)
    if (ticket.alone) this.alone.delete(ticket.key)
    this.admitNext()
  }

  /**
   * A running ticket gives its turn back but stays admitted (a stream between two reads); one
   * whose answer is over ends instead. Anything else: nothing to do.
   */
  park (ticket: Ticket): void {
    if (ticket.stage !== 'running') return
    if (ticket.answered === true) return this.end(ticket)
    ticket.stage = 'parked'
    this.running--
    this.admitNext()
  }

  /**
   * A parked ticket's next turn: at once when one is free and nobody waits, else in its caller's
   * queue, ahead of the caller's new requests (it is under the cap already) and with no wait
   * limit (its answer has begun: a 503 can no longer be said). Refused (ClientGone) when the
   * ticket has ended meanwhile.
   */
  resume (ticket: Ticket): Promise<void> | undefined {
    if (ticket.stage === 'running') return undefined
    if (ticket.stage !== 'parked') return Promise.reject(new ClientGone())
    if (this.running < this.options.concurrency && this.waiting === 0) {
      this.takeTurn(ticket)
      return undefined
    }
    ticket.stage = 'resuming'
    // after the caller's other streams' reads, before its new requests
    const firstNew = this.queues.get(ticket.key)?.findIndex((waiting) => waiting.stage !== 'resuming') ?? -1
    const wait = this.enqueue(ticket, firstNew === -1 ? undefined : firstNew)
    this.admitNext()
    return wait
  }

  /** Puts a ticket in its caller's queue (at `index`; by default last), with the promise its request awaits. */
  private enqueue (ticket: Ticket, index?: number): Promise<void> {
    const wait = new Promise<void>((resolve, reject) => {
      ticket.admit = resolve
      ticket.refuse = reject
    })
    this.waiting++
    const queue = this.queues.get(ticket.key)
    if (queue === undefined) this.queues.set(ticket.key, [ticket])
    else queue.splice(index ?? queue.length, 0, ticket)
    return wait
  }

  /** Whether a request of `key` may take a free turn: under the caller's cap, and not a second one-at-a-time request. */
  private mayRun (key: string, alone: boolean): boolean {
    const { perCaller } = this.options
    return (perCaller <= 0 || (this.admittedOf.get(key) ?? 0) < perCaller) && !(alone && this.alone.has(key))
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
    const newest = longest?.[longest.length - 1]
    // a stream's read waiting for its turn is never what gives way: its answer has begun
    if (newest === undefined || newest.stage !== 'waiting' || longest!.length <= own + 1) throw busy()
    this.end(newest, busy())
  }

  /** A new request is admitted: a turn, and its place under its caller's cap. */
  private run (ticket: Ticket): void {
    this.takeTurn(ticket)
    count(this.admittedOf, ticket.key, 1)
    if (ticket.alone) this.alone.add(ticket.key)
  }

  private takeTurn (ticket: Ticket): void {
    this.running++
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
        const first = queue[0]!
        if (first.stage === 'resuming' || this.mayRun(first.key, first.alone)) {
          ticket = first
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
      if (ticket.stage === 'resuming') this.takeTurn(ticket) // admitted already: a turn only
      else this.run(ticket)
      ticket.admit!()
    }
  }
}

/** Adds `by` to `key`'s count; a count of 0 leaves the map. */
function count (counts: Map<string, number>, key: string, by: number): void {
  const n = (counts.get(key) ?? 0) + by
  if (n > 0) counts.set(key, n)
  else counts.delete(key)
}
