import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { ApiError, toErrorObjects, unauthorized } from '../jsonapi/errors.js'
import { bearerSecret, callerKey, lookupToken, type Caller } from './caller.js'
import { tokenDigest } from './token-digest.js'
import { LookupGate } from './lookup-gate.js'
import { TokenIdentities } from './token-identities.js'

/** Replaces the bearer-token lookup when a host authenticates its own way; null answers 401. */
export type Authenticate = (request: FastifyRequest) => Promise<Caller | null> | Caller | null

declare module 'fastify' {
  interface FastifyRequest {
    /** Who asks (DESIGN §3), set by authentication before anything else runs. */
    caller: Caller
    /** The caller came from the tokens seen lately, not from a lookup by this request (see ./token-identities.ts). */
    callerRemembered: boolean
  }
  interface FastifyInstance {
    /**
     * Forgets tokens this process remembers (by digest): called after the API revokes them, so that
     * their next request here is looked up — and refused — at once. Not what makes a revocation
     * count: every statement checks the token again, on every process (DESIGN §9.2).
     */
    forgetTokens: (digests: readonly string[]) => void
  }
}

export interface AuthenticationOptions {
  db: Kysely<Database>
  authenticate?: Authenticate
  /**
   * Lookups of unknown tokens allowed per second per client address (the rate limit); past it,
   * 429 without a lookup, so a flood of made-up tokens costs bounded database work — and valid
   * tokens from the same address are still served (./lookup-gate.ts). 0: no bound.
   */
  failuresPerSecond?: number
}

/**
 * The first step of every API request: the credential becomes `request.caller`, or the answer is
 * 401 — before rate limiting, content types, validation or any route. By default the credential
 * is `Authorization: Bearer <token>` (never the query string). A token seen in the last minute
 * names its caller without a lookup (./token-identities.ts); one not seen is looked up. Either
 * way the token is checked again by the statement that serves the request, so a token revoked or
 * expired, or a membership removed, counts from the very next request:
 * - the statement of a caller whose token no longer names it finds no grants: "nothing";
 * - any refusal (4xx) to a remembered caller looks the token up before it is sent, and becomes
 *   401 when the token is no longer usable — as if the lookup had come first;
 * - a 429 or 5xx to a remembered caller forgets its token: the next request looks it up.
 */
export default fp<AuthenticationOptions>(async (app, { db, authenticate, failuresPerSecond = 0 }) => {
  app.decorateRequest('caller', null as never)
  app.decorateRequest('callerRemembered', false)
  const identities = new TokenIdentities()
  app.decorate('forgetTokens', (digests: readonly string[]) => { for (const digest of digests) identities.forget(digest) })
  const gate = new LookupGate(failuresPerSecond)
  const tooMany = () => new ApiError(429, 'too many requests', `More than ${failuresPerSecond} requests per second without a valid token; retry in 1 s.`)

  const fromToken = async (request: FastifyRequest, digest: string | null): Promise<Caller | null> => {
    if (digest === null) return null
    const asked = await gate.ask(request.ip, digest)
    if (!asked.lookup) {
      if (asked.answer === 429) throw tooMany()
      return null
    }
    let found
    try {
      found = await lookupToken(db, digest)
    } catch (error) {
      if (asked.counted) gate.leave(request.ip, false) // the database failed, not the token
      throw error
    }
    gate.found(request.ip, digest, found !== null, asked.counted)
    if (found === null) return null
    const caller = { ...found.caller, token: digest }
    identities.remember(digest, caller, found.expiresAt)
    return caller
  }
  // a host's caller is the host's word: it carries no token of ours to check; each try costs a
  // unit of the address's budget, given back when the host vouches for the caller
  const fromHost = async (request: FastifyRequest): Promise<Caller | null> => {
    if (!(await gate.enter(request.ip))) throw tooMany()
    let caller: Caller | null
    try {
      caller = withoutToken(await authenticate!(request))
    } catch (error) {
      gate.leave(request.ip, false) // the host failed, not the credential
      throw error
    }
    gate.leave(request.ip, caller === null)
    return caller
  }
  /** Whether a remembered caller's token still names it; forgets it when not. */
  const stillNamed = async (request: FastifyRequest): Promise<boolean> => {
    const digest = request.caller.token!
    const found = await lookupToken(db, digest)
    const same = found !== null && callerKey(found.caller) === callerKey(request.caller)
    if (!same) {
      identities.forget(digest)
      gate.found(request.ip, digest, found !== null, false)
    }
    return same
  }

  const accept = (request: FastifyRequest, reply: FastifyReply, caller: Caller): void => {
    request.caller = caller
    // an answer for one caller is never for a cache to hand to another
    void reply.header('cache-control', 'no-store')
  }
  // a callback hook: a token seen lately costs no promise; any other is looked up
  app.addHook('onRequest', (request, reply, done) => {
    let asked: Promise<Caller | null>
    if (authenticate === undefined) {
      const secret = bearerSecret(request.headers.authorization)
      const digest = secret === null ? null : tokenDigest(secret)
      const remembered = digest === null ? undefined : identities.get(digest)
      if (remembered !== undefined) {
        request.callerRemembered = true
        accept(request, reply, remembered)
        return done()
      }
      asked = fromToken(request, digest)
    } else {
      asked = fromHost(request)
    }
    asked.then((caller) => {
      if (caller === null) return done(unauthorized())
      accept(request, reply, caller)
      done()
    }, done)
  })

  // A refusal to a remembered caller is 401 when its token no longer names it (one lookup, on
  // this path only) — the very 401 a token never seen gets: the headers a caller's answers carry
  // are taken off. A 429 or 5xx is not a judgement of the request: it is sent as it is, and the
  // token is looked up afresh by the caller's next request.
  const answer = app.errorHandler
  app.setErrorHandler(async function (error, request, reply) {
    let sent: Error = error as Error
    if (request.callerRemembered) {
      const status = toErrorObjects(sent).status
      if (status === 429 || status >= 500) {
        identities.forget(request.caller.token!)
      } else if (status >= 400 && status !== 401 && !(await stillNamed(request))) {
        for (const header of CALLER_HEADERS) reply.removeHeader(header)
        sent = unauthorized()
      }
    }
    answer.call(this, sent, request, reply)
    // the reply is sent by the handler: returning it tells Fastify so (an async handler must)
    return reply
  })
}, { name: 'team-access-authentication', fastify: '5.x' })

/** Headers only an authenticated caller's answers carry (no-store, the rate limit's). */
const CALLER_HEADERS = ['cache-control', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']

/** A caller without a token digest (see Caller.token). */
function withoutToken (caller: Caller | null): Caller | null {
  if (caller === null || caller.token === undefined) return caller
  const { token: _, ...rest } = caller
  return rest as Caller
}
