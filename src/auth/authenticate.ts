import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { ApiError, notFound, unauthorized } from '../jsonapi/errors.js'
import { bearerSecret, tokenIsUsable, type Caller, type Principal } from './caller.js'
import { tokenDigest } from './token-digest.js'

/** Replaces the bearer-token lookup when a host authenticates its own way. */
export type Authenticate = (request: FastifyRequest) => Promise<Caller | null> | Caller | null

// Kept off the request object so that embedding the plugin adds no property to the host's requests.
const principals = new WeakMap<FastifyRequest, Principal>()
// requests whose token a statement has already shown to be valid (it found the caller's grants)
const proven = new WeakSet<FastifyRequest>()

/** A statement found grants for this request's caller: its token is valid, no need to ask again. */
export function tokenProven (request: FastifyRequest): void {
  proven.add(request)
}

// a host's authenticate runs once per request, though both the rate limiter and the hook ask
const hostCallers = new WeakMap<FastifyRequest, Promise<Caller | null>>()

/** The host's caller for a request, asked once. */
export function hostCaller (authenticate: Authenticate, request: FastifyRequest): Promise<Caller | null> {
  let caller = hostCallers.get(request)
  if (caller === undefined) {
    caller = Promise.resolve(authenticate(request))
    hostCallers.set(request, caller)
  }
  return caller
}

/** Whoever the request acts for, once `authenticationHook` has let it through. */
export function principalOf (request: FastifyRequest): Principal {
  const principal = principals.get(request)
  if (principal === undefined) throw new Error('principalOf: the request was not authenticated')
  return principal
}

/**
 * An onRequest hook, before any body is read. With a host's `authenticate`: its caller, or 401.
 * By default: `Authorization: Bearer <token>` (never the query string), 401 when it is missing
 * or malformed; the token itself is resolved by the statement that serves the request.
 */
export function authenticationHook (authenticate: Authenticate | undefined) {
  return async function authenticateRequest (request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    let principal: Principal | null
    if (authenticate !== undefined) {
      principal = await hostCaller(authenticate, request)
    } else {
      const secret = bearerSecret(request.headers.authorization)
      principal = secret === null ? null : { kind: 'bearer', digest: tokenDigest(secret) }
    }
    if (principal === null) throw unauthorized()
    principals.set(request, principal)
  }
}

/**
 * What to answer when an operation found nothing it may show or change: 404 — unless the bearer
 * token was never valid, which is 401. Asked only on this path, so success costs no lookup.
 */
export async function denial (db: Kysely<Database>, request: FastifyRequest): Promise<ApiError> {
  const principal = principals.get(request)
  if (principal?.kind === 'bearer' && !proven.has(request) && !(await tokenIsUsable(db, principal.digest))) return unauthorized()
  return notFound()
}

/**
 * A client error (bad body, media type, parameters) for a request whose bearer token is unknown
 * or expired is 401, as if the token had been looked up first.
 */
export async function unauthorizedFirst (db: Kysely<Database>, request: FastifyRequest, status: number): Promise<boolean> {
  const principal = principals.get(request)
  // 401 and 404 are answers already decided with the token in view
  if (status < 400 || status >= 500 || status === 401 || status === 404) return false
  return principal?.kind === 'bearer' && !proven.has(request) && !(await tokenIsUsable(db, principal.digest))
}
