import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { unauthorized } from '../jsonapi/errors.js'
import { bearerSecret, resolveToken, type Caller } from './caller.js'

/** Replaces the bearer-token lookup when a host authenticates its own way. */
export type Authenticate = (request: FastifyRequest) => Promise<Caller | null> | Caller | null

// Kept off the request object so that embedding the plugin adds no property to the host's requests.
const callers = new WeakMap<FastifyRequest, Caller>()

/** The caller of a request that passed `authenticationHook`. */
export function callerOf (request: FastifyRequest): Caller {
  const caller = callers.get(request)
  if (caller === undefined) throw new Error('callerOf: the request was not authenticated')
  return caller
}

/** The default: `Authorization: Bearer <token>`, looked up by digest. Never the query string. */
export const bearerAuthenticate = (db: Kysely<Database>): Authenticate => async (request) => {
  const secret = bearerSecret(request.headers.authorization)
  return secret === null ? null : await resolveToken(db, secret)
}

/** An onRequest hook: 401 for a missing, unknown or expired token, before any body is read. */
export function authenticationHook (authenticate: Authenticate) {
  return async function authenticateRequest (request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const caller = await authenticate(request)
    if (caller === null) throw unauthorized()
    callers.set(request, caller)
  }
}
