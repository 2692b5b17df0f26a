import { sql, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { callerGrants, tokenStillNamesCaller } from '../access/grants.js'
import type { Caller } from '../auth/caller.js'
import { isGoneWhileWaiting } from '../db/write-races.js'
import { newTokenSecret } from '../auth/token-secret.js'
import { table } from '../db/tables.js'
import { apiSource } from '../directory/source.js'
import {
  createToken, regenerateToken, revokeTokens, subjectMatches, subjectOf, subjectOfToken, subjectToken,
  type CreateResult as DirectoryCreateResult, type TokenView
} from '../directory/tokens.js'

/**
 * Authentication tokens through the API (DESIGN §9.5): the reads, each a statement that starts with
 * the caller's `grants` CTE (src/access/grants.ts) and the `subject` the caller manages; the writes
 * are the directory's (src/directory/tokens.ts), asked by the caller. The secret of a new token
 * exists only in the answer to its create: only its digest is stored.
 */

/** Whose tokens: a team (by id), an organization (by name), a user (by id). */
export type Subject =
  | { kind: 'team', teamId: string }
  | { kind: 'organization', organization: string }
  | { kind: 'user', userId: string }

export type { TokenView }

export interface Page { number: number, size: number }

export type CreateResult = ({ created: TokenView, secret: string } | { created: undefined, taken: boolean }) & {
  /** The digests of the tokens a regenerate revoked (none for any other create). */
  revoked?: string[]
}

const TOKEN_COLUMNS = sql`tk.id, tk.created_at, tk.last_used_at, tk.expires_at, tk.description, tk.created_by, tk.team_id`

export class TokensRepository {
  constructor (private readonly db: Kysely<Database>) {}

  /**
   * A new description-less API token of a team or an organization; the one before it (if any) is
   * revoked in the same transaction (regenerate). Undefined: the caller may not.
   */
  async regenerate (caller: Caller, subject: Subject & { kind: 'team' | 'organization' }, expiresAt: Date | null, requestId: string): Promise<CreateResult> {
    const secret = newTokenSecret()
    const result = await regenerateToken(this.db, apiSource(caller, requestId), subject, secret, expiresAt)
    return { ...answer(result, secret), revoked: result.revokedDigests }
  }

  /**
   * One more token of a team (with a description) or of the calling user. `taken`: the team
   * already has a token of that description.
   */
  async create (caller: Caller, subject: Subject & { kind: 'team' | 'user' }, description: string | null, expiresAt: Date | null, requestId: string): Promise<CreateResult> {
    const source = apiSource(caller, requestId)
    const secret = newTokenSecret()
    return await createToken(this.db, source, subjectOf(source, subject), { secret, description, expiresAt })
      .then((result) => answer(result, secret))
      .catch((err: unknown) => {
        // the team (or user) was deleted while the insert waited for it: not there (404), never a 500
        if (isGoneWhileWaiting(err)) return { created: undefined, taken: false }
        throw err
      })
  }

  /** The description-less API token of a team or an organization, if the caller manages it. */
  async findSubjectToken (caller: Caller, subject: Subject & { kind: 'team' | 'organization' }): Promise<TokenView | undefined> {
    const result = await sql<TokenView>`with grants as (${callerGrants(this.db, caller)}), subject as (${subjectOf(apiSource(caller, ''), subject)})
      select ${TOKEN_COLUMNS} from ${table.tokens} tk join subject s on ${subjectMatches()}
      where ${subjectToken}
      order by tk.created_at desc limit 1`.execute(this.db)
    return result.rows[0]
  }

  /** Revokes the description-less API token of a team or an organization; the digests revoked (none: none the caller may revoke). */
  async revokeSubjectToken (caller: Caller, subject: Subject & { kind: 'team' | 'organization' }, requestId: string): Promise<string[]> {
    const source = apiSource(caller, requestId)
    return await revokeTokens(this.db, source, subjectOf(source, subject), subjectToken)
  }

  /** A page of a team's or a user's tokens, oldest first; undefined when the caller may not see them. */
  async list (caller: Caller, subject: Subject & { kind: 'team' | 'user' }, page: Page): Promise<{ rows: TokenView[], total: number } | undefined> {
    const result = await sql<Omit<TokenView, 'id'> & { id: string | null, total: string | number }>`with grants as (${callerGrants(this.db, caller)}), subject as (${subjectOf(apiSource(caller, ''), subject)})
      select p.*, (select count(*) from ${table.tokens} tk where ${subjectMatches()}) as total
      from subject s left join lateral (select ${TOKEN_COLUMNS} from ${table.tokens} tk where ${subjectMatches()}
        order by tk.created_at, tk.id limit ${page.size} offset ${(page.number - 1) * page.size}) p on true`.execute(this.db)
    if (result.rows.length === 0) return undefined
    const rows = result.rows.filter((r): r is typeof r & { id: string } => r.id !== null)
    return { rows, total: Number(result.rows[0]!.total) }
  }

  /** One token by id, if the caller manages its subject. */
  async findById (caller: Caller, id: string): Promise<TokenView | undefined> {
    const result = await sql<TokenView>`with grants as (${callerGrants(this.db, caller)}), subject as (${subjectOfToken(apiSource(caller, ''), id)})
      select ${TOKEN_COLUMNS} from ${table.tokens} tk join subject s on tk.id = s.token_id`.execute(this.db)
    return result.rows[0]
  }

  /** Revokes one token by id — a seed's included (DESIGN §9.1) — if the caller manages its subject; the digest revoked (none: it may not). */
  async revokeById (caller: Caller, id: string, requestId: string): Promise<string[]> {
    const source = apiSource(caller, requestId)
    return await revokeTokens(this.db, source, subjectOfToken(source, id), sql<boolean>`tk.id = s.token_id`)
  }

  /** The user behind a user token (GET /account/details); undefined for any other caller. */
  async account (caller: Caller): Promise<{ id: string, username: string } | undefined> {
    if (caller.kind !== 'user') return undefined
    const result = await sql<{ id: string, username: string }>`select u.id, u.username from ${table.users} u
      where u.id = ${caller.userId}::text and ${tokenStillNamesCaller(caller)}`.execute(this.db)
    return result.rows[0]
  }
}

/** The directory's answer as the routes take it: the secret with the token it made. */
const answer = (result: DirectoryCreateResult, secret: string): CreateResult =>
  result.created === undefined ? { created: undefined, taken: result.taken } : { created: result.created, secret }
