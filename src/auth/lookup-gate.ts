import { Recent } from './recent.js'

/**
 * Which credentials may cost a lookup (DESIGN §5): a flood of made-up tokens from one address is
 * bounded, and never shuts valid credentials from the same address out.
 *
 * - A **budget per client address**: at most `perSecond` lookups of tokens this process knows
 *   nothing of may *fail* in a second, under any concurrency: a lookup may start only while the
 *   address's failures this second plus its lookups in flight are under the budget. Past it, a
 *   lookup waits (at most a second) for one in flight to end — one that finds a valid token
 *   frees its place at once, so a burst of valid tokens used for the first time is looked up a
 *   few at a time, never refused — and once the failures alone reach the budget, the answer is
 *   429 without a lookup until the next second.
 * - **Tokens found valid** lately (a day; at most 10,000) are looked up whatever the budget: an
 *   attacker cannot add to this list, and one that stops being valid leaves it at its next lookup.
 * - **Tokens found unknown** in the last few seconds are answered 401 again without a lookup and
 *   without counting: a client retrying one expired token, however fast, costs one lookup every
 *   few seconds and shuts nobody out.
 *
 * Digests only: never a secret. `perSecond` 0 switches all of it off (every token is looked up).
 */
export class LookupGate {
  private readonly addresses = new Map<string, AddressBudget>()
  private readonly valid = new Recent<true>(10_000, 24 * 60 * 60_000)
  private readonly unknown = new Recent<true>(10_000, 5_000)

  constructor (private readonly perSecond: number, private readonly maxWaitMs = 1000) {}

  /**
   * What a request with this token digest from this address gets: a lookup (`counted`: it holds
   * a place of the address's budget, to be given back by `found`), 401 at once (a digest found
   * unknown seconds ago), or 429.
   */
  async ask (address: string, digest: string): Promise<{ lookup: true, counted: boolean } | { lookup: false, answer: 401 | 429 }> {
    if (this.perSecond <= 0 || this.valid.has(digest)) return { lookup: true, counted: false }
    if (this.unknown.has(digest)) return { lookup: false, answer: 401 }
    return await this.enter(address) ? { lookup: true, counted: true } : { lookup: false, answer: 429 }
  }

  /** What the lookup found: a failure counts against the address's second; the place is given back. */
  found (address: string, digest: string, valid: boolean, counted: boolean): void {
    if (this.perSecond <= 0) return
    if (valid) {
      this.unknown.delete(digest)
      this.valid.set(digest, true)
    } else {
      this.valid.delete(digest)
      this.unknown.set(digest, true)
    }
    if (counted) this.leave(address, !valid)
  }

  /**
   * A place in the address's budget — for a token lookup, or a host's own authentication — once
   * one is free (waiting at most `maxWaitMs`); false when the address's failures this second have
   * spent the budget, or no place came free in time.
   */
  async enter (address: string): Promise<boolean> {
    if (this.perSecond <= 0) return true
    const budget = this.budgetOf(address)
    const until = Date.now() + this.maxWaitMs
    for (;;) {
      budget.roll()
      if (budget.failures >= this.perSecond) return false
      if (budget.failures + budget.inFlight < this.perSecond) {
        budget.inFlight++
        return true
      }
      const left = until - Date.now()
      if (left <= 0) return false
      // a lookup in flight ends, or a new second begins
      await new Promise<void>((resolve) => {
        const timer = setTimeout(wake, Math.min(left, 1000 - (Date.now() % 1000)))
        function wake (): void { clearTimeout(timer); budget.waiting.delete(wake); resolve() }
        budget.waiting.add(wake)
      })
    }
  }

  /** A place given back: `failed` when the credential proved invalid (it counts for this second). */
  leave (address: string, failed: boolean): void {
    if (this.perSecond <= 0) return
    const budget = this.addresses.get(address)
    if (budget === undefined) return
    budget.roll()
    budget.inFlight--
    if (failed) budget.failures++
    for (const wake of [...budget.waiting]) wake()
    if (budget.inFlight === 0 && budget.waiting.size === 0 && budget.failures === 0) this.addresses.delete(address)
  }

  private budgetOf (address: string): AddressBudget {
    let budget = this.addresses.get(address)
    if (budget === undefined) {
      // many addresses: forget those with nothing in flight and no failure this second
      if (this.addresses.size >= 10_000) {
        for (const [key, idle] of this.addresses) {
          idle.roll()
          if (idle.inFlight === 0 && idle.waiting.size === 0 && idle.failures === 0) this.addresses.delete(key)
        }
      }
      budget = new AddressBudget()
      this.addresses.set(address, budget)
    }
    return budget
  }
}

/** One client address's lookups: failures in the current second, lookups in flight, requests waiting for a place. */
class AddressBudget {
  failures = 0
  inFlight = 0
  private second = Math.floor(Date.now() / 1000)
  readonly waiting = new Set<() => void>()

  /** A new second: the failures start afresh. */
  roll (): void {
    const now = Math.floor(Date.now() / 1000)
    if (now !== this.second) {
      this.second = now
      this.failures = 0
    }
  }
}
