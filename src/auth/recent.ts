/**
 * A bounded map whose entries last a while: each until its own moment (by default `ttlMs` from
 * when it is set); when full, the stalest entry leaves first. The memories of the authentication
 * step are built on it (./token-identities.ts, ./lookup-gate.ts): bounded, so that no stream of
 * new tokens can grow them.
 */
export class Recent<V> {
  private readonly entries = new Map<string, { value: V, until: number }>()

  constructor (private readonly max: number, private readonly ttlMs: number) {}

  get (key: string): V | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (entry.until > Date.now()) return entry.value
    this.entries.delete(key)
    return undefined
  }

  has (key: string): boolean {
    return this.get(key) !== undefined
  }

  /** Remembers `value` until `until` (ms since the epoch), at most `ttlMs` from now. */
  set (key: string, value: V, until = Infinity): void {
    this.entries.delete(key) // re-inserted last: the map's order is the order of freshness
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!)
    this.entries.set(key, { value, until: Math.min(Date.now() + this.ttlMs, until) })
  }

  delete (key: string): void {
    this.entries.delete(key)
  }
}
