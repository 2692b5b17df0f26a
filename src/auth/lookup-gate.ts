/**
 * Which credentials may cost a lookup (DESIGN §5): a flood of made-up tokens from one address is
 * bounded, and never shuts valid credentials from the same address out.
 *
 * - A **budget per client address**: at most `perSecond` lookups a second of tokens this process
 *   knows nothing of. A lookup takes its unit *before* it runs, so no concurrency can exceed it;
 *   one that finds a valid token gives it back (valid callers never spend an address's budget).
 *   Past it: 429 without a lookup.
 * - **Tokens found valid** lately (a day; at most 10,000) are looked up whatever the budget: an
 *   attacker cannot add to this list, and one that stops being valid leaves it at its next lookup.
 * - **Tokens found unknown** in the last few seconds are answered 401 again without a lookup and
 *   without spending the budget: a client retrying one expired token, however fast, costs one
 *   lookup every few seconds and shuts nobody out.
 *
 * Digests only: never a secret. `perSecond` 0 switches all of it off (every token is looked up).
 */
export class LookupGate {
  private window = 0
  private readonly spent = new Map<string, number>()
  private readonly valid = new Recent(10_000, 24 * 60 * 60_000)
  private readonly unknown = new Recent(10_000, 5_000)

  constructor (private readonly perSecond: number) {}

  /**
   * What a request with this token digest from this address gets: a lookup — `counted` when it
   * took a unit of the budget — 401 at once (a digest found unknown seconds ago), or 429.
   */
  ask (address: string, digest: string): { lookup: true, counted: number | null } | { lookup: false, answer: 401 | 429 } {
    if (this.perSecond <= 0 || this.valid.has(digest)) return { lookup: true, counted: null }
    if (this.unknown.has(digest)) return { lookup: false, answer: 401 }
    const counted = this.take(address)
    return counted === null ? { lookup: false, answer: 429 } : { lookup: true, counted }
  }

  /** What the lookup found; a valid token gives back the unit it took. */
  found (address: string, digest: string, valid: boolean, counted: number | null): void {
    if (this.perSecond <= 0) return
    if (valid) {
      this.unknown.delete(digest)
      this.valid.add(digest)
      this.giveBack(address, counted)
    } else {
      this.valid.delete(digest)
      this.unknown.add(digest)
    }
  }

  /**
   * A unit of the address's budget for this second (the second it was taken in, to give it back
   * with), or null when it is spent. Also for a host's own authentication, which has no digest.
   */
  take (address: string): number | null {
    if (this.perSecond <= 0) return 0
    this.roll()
    const spent = this.spent.get(address) ?? 0
    if (spent >= this.perSecond) return null
    this.spent.set(address, spent + 1)
    return this.window
  }

  /** A unit taken this second for a credential that proved valid. */
  giveBack (address: string, counted: number | null): void {
    if (counted === null || counted !== this.window) return
    const spent = this.spent.get(address) ?? 0
    if (spent > 1) this.spent.set(address, spent - 1)
    else this.spent.delete(address)
  }

  /** A new second starts every count afresh (and keeps the map as small as one second's addresses). */
  private roll (): void {
    const now = Math.floor(Date.now() / 1000)
    if (now !== this.window) {
      this.window = now
      this.spent.clear()
    }
  }
}

/** A bounded set whose members last `ttlMs`; the oldest leave first when it is full. */
class Recent {
  private readonly until = new Map<string, number>()

  constructor (private readonly max: number, private readonly ttlMs: number) {}

  has (key: string): boolean {
    const until = this.until.get(key)
    if (until === undefined) return false
    if (until > Date.now()) return true
    this.until.delete(key)
    return false
  }

  add (key: string): void {
    this.until.delete(key) // re-inserted last: the map's order is the order of freshness
    if (this.until.size >= this.max) this.until.delete(this.until.keys().next().value!)
    this.until.set(key, Date.now() + this.ttlMs)
  }

  delete (key: string): void {
    this.until.delete(key)
  }
}
