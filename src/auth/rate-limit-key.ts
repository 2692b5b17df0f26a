import type { FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { bearerSecret, resolveToken, type Caller } from './caller.js'
import { tokenDigest } from './token-digest.js'
import { hostCaller, type Authenticate } from './authenticate.js'

const TTL_MS = 60_000
const MAX_ENTRIES = 10_000

/**
 * The rate-limit bucket of a request (DESIGN §5): the user, team or organization behind its
 * token, so that one caller's tokens share a budget; the client's address when it has no valid
 * token. Token → subject is remembered for a minute: it only chooses a bucket, it never lets
 * anyone in (every operation still resolves the token in its own statement).
 */
export function rateLimitKey (db: Kysely<Database>, authenticate: Authenticate | undefined) {
  const subjects = new Map<string, { key: string | null, until: number }>()
  const keyOf = (caller: Caller | null): string | null => caller === null
    ? null
    : caller.kind === 'organization' ? `organization:${caller.organizationId}` : caller.kind === 'team' ? `team:${caller.teamId}` : `user:${caller.userId}`

  return async function key (request: FastifyRequest): Promise<string> {
    if (authenticate !== undefined) return keyOf(await hostCaller(authenticate, request)) ?? `ip:${request.ip}`
    const secret = bearerSecret(request.headers.authorization)
    if (secret === null) return `ip:${request.ip}`
    const digest = tokenDigest(secret)
    const now = Date.now()
    let known = subjects.get(digest)
    if (known === undefined || known.until < now) {
      known = { key: keyOf(await resolveToken(db, secret)), until: now + TTL_MS }
      subjects.delete(digest) // re-inserted last: the map's order is the order of freshness
      if (subjects.size >= MAX_ENTRIES) subjects.delete(subjects.keys().next().value!) // the stalest
      subjects.set(digest, known)
    }
    return known.key ?? `ip:${request.ip}`
  }
}
