/**
 * The pace of the mirror's requests (DESIGN §13.2): they start at most `rate` a second, spaced
 * evenly (one every 1/rate s: never a burst), at most `inFlight` are open at once, and a 429's hold
 * keeps every request from starting until it ends. Also how many started, and the rate lately.
 * The client (./client.ts) takes a turn before each request and releases it after.
 */
export class Pace {
  /** Requests started, every retry counted. */
  started = 0
  private readonly interval: number
  private nextStart = 0
  private heldUntil = 0
  private open = 0
  /** Those waiting for a place among the open ones, first come first served: a release hands its place to the first. */
  private readonly waiting: Array<() => void> = []
  /** Start times of the last RATE_WINDOW ms. */
  private readonly recent: number[] = []
  private firstStart: number | undefined

  constructor (rate: number, private readonly inFlight: number, private readonly signal?: AbortSignal) {
    if (!(rate > 0 && Number.isFinite(rate))) throw new RangeError('the rate is requests a second, more than 0')
    if (!(Number.isInteger(inFlight) && inFlight >= 1)) throw new RangeError('in flight: a whole number, at least 1')
    this.interval = 1000 / rate
  }

  /** Waits for a place among those open, then for this request's start: spaced at the rate, after any hold. */
  async turn (): Promise<void> {
    if (this.open < this.inFlight) this.open++
    else await new Promise<void>((resolve) => this.waiting.push(resolve))
    try {
      for (;;) {
        const now = performance.now()
        const start = Math.max(now, this.nextStart, this.heldUntil)
        if (start <= now) break
        await this.sleep(start - now)
      }
    } catch (err) {
      this.release()
      throw err
    }
    const now = performance.now()
    this.nextStart = now + this.interval
    this.started++
    this.firstStart ??= now
    this.recent.push(now)
  }

  /** A request ended: its place goes to the first who waits for one. */
  release (): void {
    const next = this.waiting.shift()
    if (next === undefined) this.open--
    else next()
  }

  /** A 429: nobody starts before `ms` from now. */
  hold (ms: number): void {
    this.heldUntil = Math.max(this.heldUntil, performance.now() + ms)
  }

  /** Requests a second over the last 5 seconds (or since the first, when that is sooner). */
  rate (): number {
    const now = performance.now()
    while (this.recent.length > 0 && this.recent[0]! < now - RATE_WINDOW) this.recent.shift()
    if (this.firstStart === undefined) return 0
    return this.recent.length / (Math.max(1000, Math.min(RATE_WINDOW, now - this.firstStart)) / 1000)
  }

  /** A pause that a stopped run ends at once. */
  async sleep (ms: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const stopped = () => { clearTimeout(timer); reject(new StoppedError()) }
      if (this.signal?.aborted === true) { reject(new StoppedError()); return }
      const timer = setTimeout(() => { this.signal?.removeEventListener('abort', stopped); resolve() }, ms)
      this.signal?.addEventListener('abort', stopped, { once: true })
    })
  }
}

const RATE_WINDOW = 5000

/** A pause ended because the run was stopped. */
export class StoppedError extends Error {
  override name = 'StoppedError'
  constructor () { super('the mirror run was stopped') }
}
