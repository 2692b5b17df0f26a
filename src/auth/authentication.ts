import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { ApiError, unauthorized } from '../jsonapi/errors.js'
import { bearerSecret, resolveToken, type Caller } from './caller.js'

/** Replaces the bearer-token lookup when a host authenticates its own way; null answers 401. */
export type Authenticate = (request: FastifyRequest) => Promise<Caller | null> | Caller | null

declare module 'fastify' {
  interface FastifyRequest {
    /** Who asks (DESIGN §3), set by authentication before anything else runs. */
    caller: Caller
  }
}

export interface AuthenticationOptions {
  db: Kysely<Database>
  authenticate?: Authenticate
  /**
   * Requests without a valid credential allowed per second per client address (the rate limit);
   * past it, 429 without a lookup, so a flood of made-up tokens costs no database work.
   */
  failuresPerSecond?: number
}

/**
 * The first step of every API request: the credential becomes `request.caller`, or the answer is
 * 401 — before rate limiting, content types, validation or any route. By default the credential
 * is `Authorization: Bearer <token>` (never the query string), looked up on every request: a
 * token revoked or a membership removed counts from the very next request.
 */
export default fp<AuthenticationOptions>(async (app, { db, authenticate, failuresPerSecond = 0 }) => {
  app.decorateRequest('caller', null as never)
  const callerOf = authenticate ?? (async (request: FastifyRequest) => {
    const secret = bearerSecret(request.headers.authorization)
    return secret === null ? null : await resolveToken(db, secret)
  })
  const failures = new FailureBudget(failuresPerSecond)
  app.addHook('onRequest', async (request, reply) => {
    if (failures.exhausted(request.ip)) {
      void reply.header('retry-after', '1')
      throw new ApiError(429, 'too many requests', `More than ${failuresPerSecond} requests per second without a valid token; retry in 1 s.`)
    }
    const caller = await callerOf(request)
    if (caller === null) {
      failures.count(request.ip)
      throw unauthorized()
    }
    request.caller = caller
    // an answer for one caller is never for a cache to hand to another
    void reply.header('cache-control', 'no-store')
  })
}, { name: 'team-access-authentication', fastify: '5.x' })

/** Failed authentications per client address in the current second; 0 allows any number. */
class FailureBudget {
  private window = 0
  private readonly counts = new Map<string, number>()

  constructor (private readonly perSecond: number) {}

  exhausted (address: string): boolean {
    this.roll()
    return this.perSecond > 0 && (this.counts.get(address) ?? 0) >= this.perSecond
  }

  count (address: string): void {
    if (this.perSecond > 0) this.counts.set(address, (this.counts.get(address) ?? 0) + 1)
  }

  /** A new second starts every count afresh (and keeps the map as small as one second's addresses). */
  private roll (): void {
    const now = Math.floor(Date.now() / 1000)
    if (now !== this.window) {
      this.window = now
      this.counts.clear()
    }
  }
}
