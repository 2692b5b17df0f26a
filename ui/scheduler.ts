// The page's requests, kept within the caller's rate limit (DESIGN §12.2). The service states its
// limit on every answer (@fastify/rate-limit: `x-ratelimit-limit`, `x-ratelimit-remaining`, and
// `x-ratelimit-reset`, the seconds left in the window), and a 429 says when to come back
// (`retry-after`, seconds). The service counts a request when it reaches it: some time after the
// page sent it and before its answer came back, and on a loaded machine either gap can be long. So
// the scheduler counts each request from when it is sent until a window after its answer came, and
// starts one only while fewer than the limit less one are counted (the one left over is the
// person's other tools'): whatever the delays, no window of the service's holds more than that. At
// most MAX_IN_FLIGHT at once, and none while the service asked for a pause. A 429 is waited out and the request sent again: never an error. A 503 with
// `retry-after` (an overloaded service) is retried the same way, a few times.

/** At most this many requests in flight: a browser's connections to one HTTP/1.1 origin. */
const MAX_IN_FLIGHT = 6
/** The window counted a little longer than the service's: timers and clocks are not exact. */
const MARGIN_MS = 50
/** A 503 with retry-after is sent again at most this many times. */
const RETRIES_503 = 3

/** A request dropped before it was sent: the page moved on (a sign-out, another organization). */
export class Cancelled extends Error {
  constructor () { super('cancelled') }
}

export class Scheduler {
  /** Requests per window the service states: undefined until an answer says, null when it states none (no rate limit). */
  private limit: number | null | undefined = undefined
  /** The service's window, ms: the longest `x-ratelimit-reset` seen, at least a second. */
  private windowMs = 1000
  /** When each answer of the last window came (performance.now()), oldest first; requests in flight count too. */
  private readonly answered: number[] = []
  private inFlight = 0
  /** No request starts before this (a 429's or 503's retry-after, or a budget the service says is spent). */
  private pausedUntil = 0
  /** In turn: first come, first served — except that a request sent `later` lets the others pass. */
  private readonly waiting: Array<{ resolve: () => void, reject: (err: Error) => void, later: boolean }> = []
  private timer: ReturnType<typeof setTimeout> | undefined
  private closed = false
  /** Answers 429 so far (waited out and sent again). */
  throttled = 0

  /** `onPause` is told when the page waits for the service, and until when (performance.now()). */
  constructor (private readonly onPause: (until: number) => void = () => {}) {}

  /**
   * Sends `request` in its turn, and again after each 429 once its retry-after has passed. A
   * request sent `later` (the rest of a list's pages) goes after every other waiting one: what the
   * page needs to know before it asks for more (who is asking, the first page of a list) goes first.
   */
  async send (request: () => Promise<Response>, later = false): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      await this.turn(later)
      let response: Response
      try {
        response = await request()
        this.note(response)
      } finally {
        this.answered.push(performance.now())
        this.inFlight--
        this.pump()
      }
      const again = response.status === 429 || (response.status === 503 && response.headers.has('retry-after') && attempt < RETRIES_503)
      if (!again) return response
      if (response.status === 429) this.throttled++
      void response.body?.cancel().catch(() => undefined)
      this.pause(performance.now() + retryAfterMs(response))
    }
  }

  /** Drops every request still waiting for its turn (each rejects with Cancelled); sends no more. */
  close (): void {
    this.closed = true
    clearTimeout(this.timer)
    for (const waiter of this.waiting.splice(0)) waiter.reject(new Cancelled())
  }

  private async turn (later: boolean): Promise<void> {
    if (this.closed) throw new Cancelled()
    await new Promise<void>((resolve, reject) => {
      const waiter = { resolve, reject, later }
      const before = later ? -1 : this.waiting.findIndex((w) => w.later)
      if (before === -1) this.waiting.push(waiter)
      else this.waiting.splice(before, 0, waiter)
      this.pump()
    })
  }

  /** What an answer says of the limit: its size and window; a spent budget pauses until the window resets. */
  private note (response: Response): void {
    const limit = response.headers.get('x-ratelimit-limit')
    if (limit === null) {
      // an answer of the API without the headers: the service counts no requests (RATE_LIMIT=0)
      if (this.limit === undefined && response.ok) this.limit = null
      return
    }
    this.limit = Math.max(1, Number(limit) || 1)
    const reset = Number(response.headers.get('x-ratelimit-reset'))
    if (reset > 0) this.windowMs = Math.max(this.windowMs, reset * 1000)
    // the budget spent by someone else with the same token (this page leaves one over)
    if (response.status !== 429 && response.headers.get('x-ratelimit-remaining') === '0') this.pause(performance.now() + Math.max(reset, 1) * 1000)
  }

  private pause (until: number): void {
    if (until <= this.pausedUntil) return
    this.pausedUntil = until
    this.onPause(until)
    this.pump()
  }

  /** Starts the waiting requests whose turn it is; when the next must wait, a timer comes back for it. */
  private pump (): void {
    clearTimeout(this.timer)
    this.timer = undefined
    while (this.waiting.length > 0 && !this.closed) {
      const wait = this.delay()
      if (wait === Infinity) return // an answer must come first: send() pumps again then
      if (wait > 0) {
        this.timer = setTimeout(() => this.pump(), Math.ceil(wait))
        return
      }
      this.inFlight++
      this.waiting.shift()!.resolve()
    }
  }

  /** Milliseconds until another request may start: 0 now, Infinity until an answer comes. */
  private delay (): number {
    const now = performance.now()
    if (now < this.pausedUntil) return this.pausedUntil - now
    // until an answer states the limit, one request at a time
    if (this.inFlight >= (this.limit === undefined ? 1 : MAX_IN_FLIGHT)) return Infinity
    if (this.limit === null || this.limit === undefined) return 0
    const window = this.windowMs + MARGIN_MS
    while (this.answered.length > 0 && this.answered[0]! <= now - window) this.answered.shift()
    const budget = Math.max(1, this.limit - 1)
    const counted = this.inFlight + this.answered.length
    if (counted < budget) return 0
    // a turn frees when enough answers have left the window; if too few came yet, when one comes
    const leaving = counted - budget
    return leaving < this.answered.length ? this.answered[leaving]! + window - now : Infinity
  }
}

/** A 429's or 503's wait: `retry-after` in seconds (or an HTTP date), else the window's reset, else a second. */
function retryAfterMs (response: Response): number {
  const header = response.headers.get('retry-after') ?? response.headers.get('x-ratelimit-reset') ?? '1'
  const seconds = Number(header)
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now()
  return Math.min(60_000, Math.max(ms, 0)) + 20
}
