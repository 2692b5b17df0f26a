import type { Caller } from './caller.js'

/**
 * Whom each recently seen token named: digest → caller, so that a request whose token was seen
 * in the last minute needs no lookup of its own before its statement. It never lets anyone in:
 * every statement checks that the token still names the caller and is usable
 * (src/access/grants.ts: no grants otherwise, so the answer is "nothing"), and an error answer to
 * a remembered caller asks the database again (./authentication.ts). What it saves is one round
 * trip per request; what it holds is a token's owner, never its grants.
 *
 * An entry lasts `ttlMs` and never past its token's expiry; at most `max` entries, the stalest
 * dropped first.
 */
export class TokenIdentities {
  private readonly entries = new Map<string, { caller: Caller, until: number }>()

  constructor (private readonly max = 10_000, private readonly ttlMs = 60_000) {}

  get (digest: string): Caller | undefined {
    const entry = this.entries.get(digest)
    if (entry === undefined) return undefined
    if (entry.until <= Date.now()) {
      this.entries.delete(digest)
      return undefined
    }
    return entry.caller
  }

  remember (digest: string, caller: Caller, expiresAt: Date | null): void {
    const until = Math.min(Date.now() + this.ttlMs, expiresAt?.getTime() ?? Infinity)
    this.entries.delete(digest) // re-inserted last: the map's order is the order of freshness
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!)
    this.entries.set(digest, { caller: Object.freeze({ ...caller }), until })
  }

  forget (digest: string): void {
    this.entries.delete(digest)
  }
}
