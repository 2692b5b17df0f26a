import { sql, type ExpressionBuilder, type Kysely } from 'kysely'
import type { Database, TokenTable } from '../db/database.js'
import { QueryShapes } from '../db/query-shapes.js'
import { tokenDigest } from './token-digest.js'
import { schemaOf } from '../db/tables.js'

/**
 * Who is asking (DESIGN §3). An organization token acts as an owner of its organization; a team
 * token as a member whose only team is that team (an owner when it is the owners team); a user
 * token as that user with all their team memberships.
 */
export type Caller = (
  | { kind: 'organization', organizationId: string }
  | { kind: 'team', teamId: string }
  | { kind: 'user', userId: string }
) & {
  /**
   * The digest of the bearer token the caller came with; every statement checks that this token
   * still names the caller (src/access/grants.ts). Absent when the host's `authenticate` vouched
   * for the caller.
   */
  token?: string
}

/** The one string that names a caller — the user, team or organization behind it — whichever token it used. */
export const callerKey = (caller: Caller): string =>
  caller.kind === 'organization' ? `organization:${caller.organizationId}` : caller.kind === 'team' ? `team:${caller.teamId}` : `user:${caller.userId}`

/** Longer bearer values are refused without a lookup. */
export const MAX_TOKEN_LENGTH = 512

/** A token row that may be used now: this digest, not expired. */
export const usableToken = (digest: string) => (eb: ExpressionBuilder<Database, 'tokens'>) => eb.and([
  eb('tokens.digest', '=', digest),
  eb.or([eb('tokens.expires_at', 'is', null), eb('tokens.expires_at', '>', sql<Date>`now()`)])
])

/** The caller a bearer secret stands for, or null when it is unknown or expired. One indexed query. */
export async function resolveToken (db: Kysely<Database>, secret: string): Promise<Caller | null> {
  if (secret.length === 0 || secret.length > MAX_TOKEN_LENGTH) return null
  return (await lookupToken(db, tokenDigest(secret)))?.caller ?? null
}

/**
 * A usable token's caller and when the token expires (null: never), by its digest; null when there
 * is none. One indexed statement, which also records that the token was used: `last_used_at` is
 * written only when it is older than a minute (a data-modifying CTE of the same statement, so no
 * round trip of its own), and skipped while another transaction holds the row: a lookup never waits. A lookup runs at most about once a minute per token and process (the
 * token memory, ./token-identities.ts), and the condition keeps the writes of many processes to
 * about one a minute per token: never one per request.
 */
export async function lookupToken (db: Kysely<Database>, digest: string): Promise<{ caller: Caller, expiresAt: Date | null } | null> {
  // the statement is built once (per schema: the process may serve plugins of several) and replayed
  const query = tokenShapes.compile(db, schemaOf(db), [digest], ([value]) => db
    .with('found', (qc) => qc.selectFrom('tokens')
      .select(['id', 'kind', 'organization_id', 'team_id', 'user_id', 'expires_at'])
      .where(usableToken(value!))
      .limit(1))
    // the row as it is now (not as `found` saw it), and only when no one holds it: a lookup never waits to write
    .with('touched', (qc) => qc.updateTable('tokens')
      .set({ last_used_at: sql<Date>`now()` })
      .where('tokens.id', 'in', (eb) => eb.selectFrom('tokens as stale')
        .select('stale.id')
        .where('stale.id', 'in', eb.selectFrom('found').select('found.id'))
        .where((w) => w.or([w('stale.last_used_at', 'is', null), w('stale.last_used_at', '<', sql<Date>`now() - interval '1 minute'`)]))
        .forUpdate()
        .skipLocked())
      .returning('tokens.id'))
    .selectFrom('found')
    .select(['kind', 'organization_id', 'team_id', 'user_id', 'expires_at']))
  const token = (await db.executeQuery<Pick<TokenTable, 'kind' | 'organization_id' | 'team_id' | 'user_id' | 'expires_at'>>(query)).rows[0]
  if (token === undefined) return null
  const expiresAt = token.expires_at === null ? null : new Date(token.expires_at)
  switch (token.kind) {
    case 'organization': return { caller: { kind: 'organization', organizationId: token.organization_id! }, expiresAt }
    case 'team': return { caller: { kind: 'team', teamId: token.team_id! }, expiresAt }
    case 'user': return { caller: { kind: 'user', userId: token.user_id! }, expiresAt }
  }
}

const tokenShapes = new QueryShapes()

/**
 * The bearer secret of an `Authorization: Bearer …` header (scheme case-insensitive), if any;
 * none when it is longer than any token can be.
 */
export function bearerSecret (header: string | undefined): string | null {
  if (header === undefined) return null
  const match = /^Bearer +(\S+) *$/i.exec(header)
  return match === null || match[1]!.length > MAX_TOKEN_LENGTH ? null : match[1]!
}
