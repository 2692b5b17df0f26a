import type { Caller } from './caller.js'
import { Recent } from './recent.js'

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
  private readonly entries: Recent<Caller>

  constructor (max = 10_000, ttlMs = 60_000) {
    this.entries = new Recent(max, ttlMs)
  }

  get (digest: string): Caller | undefined {
    return this.entries.get(digest)
  }

  remember (digest: string, caller: Caller, expiresAt: Date | null): void {
    this.entries.set(digest, Object.freeze({ ...caller }), expiresAt?.getTime() ?? Infinity)
  }

  forget (digest: string): void {
    this.entries.delete(digest)
  }
}
