import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from '../db/database.js'
import { newId } from '../db/ids.js'
import { callerGrants, tokenStillNamesCaller } from '../access/grants.js'
import { managesTeam, ownsThroughTeam } from '../access/predicates.js'
import { accessorOf, recordDirectoryEvents, tokenEvents, type DirectoryChange } from '../audit/audit-record.js'
import type { Caller } from '../auth/caller.js'
import { isGoneWhileWaiting } from '../db/write-races.js'
import { tokenDigest } from '../auth/token-digest.js'
import { newTokenSecret } from '../auth/token-secret.js'
import { table } from '../db/tables.js'

/**
 * Authentication tokens through the API (DESIGN §9.5). Every statement starts with the caller's
 * `grants` CTE (src/access/grants.ts) and a `subject` CTE: the team, organization or user whose
 * tokens the caller may manage (the rules: src/access/predicates.ts) — none when it may not, so a
 * statement that finds no subject changes nothing and the answer is 404. A write records its audit
 * events (src/audit/audit-record.ts) in the same statement: one per organization the subject
 * belongs to (a user's token: every organization the user is a member of). A revocation keeps the
 * token's digest in `revoked_tokens`, in the same statement, so that no seed brings it back.
 * The secret of a new token exists only in the answer to its create: only its digest is stored.
 */

/** Whose tokens: a team (by id), an organization (by name), a user (by id). */
export type Subject =
  | { kind: 'team', teamId: string }
  | { kind: 'organization', organization: string }
  | { kind: 'user', userId: string }

/** A token's metadata as the resource answers it. */
export interface TokenView {
  id: string
  created_at: Date | string
  last_used_at: Date | string | null
  expires_at: Date | string | null
  description: string | null
  created_by: string | null
  /** The team of a team token (its resource names it: the provider imports a token by id through it). */
  team_id: string | null
}

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
    return await this.db.transaction().execute(async (trx) => {
      // the subject's row is locked as the caller may manage it: concurrent regenerates of one subject take turns
      const found = await sql<SubjectRow & { cap: Date | null }>`with grants as (${callerGrants(trx, caller)})
        select s.*, ${callerExpiry(caller)} as cap from (${this.subjectOf(caller, subject)} for update) s`.execute(trx)
      const locked = found.rows[0]
      if (locked === undefined) return { created: undefined, taken: false }
      // the caller was found to manage the subject, which stays locked: what follows acts on that row as
      // it is, not on the caller's grants again — the token revoked may be the one the caller came with
      const revoked = await this.revokeWhere(trx, caller, subjectValues(locked), sql`tk.description is null and tk.managed_by = 'api'`, requestId)
      // the cap read before the revocation: the token revoked may be the caller's own
      const created = await this.insert(trx, caller, subjectValues(locked), null, expiresAt, requestId, sql`${locked.cap}::timestamptz`)
      // every step finds its row, or nothing is written at all
      if (created.created === undefined) throw new NothingToDo()
      return { ...created, revoked }
    }).catch((err: unknown) => {
      if (err instanceof NothingToDo) return { created: undefined, taken: false }
      throw err
    })
  }

  /**
   * One more token of a team (with a description) or of the calling user. `taken`: the team
   * already has a token of that description.
   */
  async create (caller: Caller, subject: Subject & { kind: 'team' | 'user' }, description: string | null, expiresAt: Date | null, requestId: string): Promise<CreateResult> {
    return await this.insert(this.db, caller, this.subjectOf(caller, subject), description, expiresAt, requestId)
      .catch((err: unknown) => {
        // the team (or user) was deleted while the insert waited for it: not there (404), never a 500
        if (isGoneWhileWaiting(err)) return { created: undefined, taken: false }
        throw err
      })
  }

  /** The description-less API token of a team or an organization, if the caller manages it. */
  async findSubjectToken (caller: Caller, subject: Subject & { kind: 'team' | 'organization' }): Promise<TokenView | undefined> {
    const result = await sql<TokenView>`with grants as (${callerGrants(this.db, caller)}), subject as (${this.subjectOf(caller, subject)})
      select ${TOKEN_COLUMNS} from ${table.tokens} tk join subject s on ${subjectMatches()}
      where tk.description is null and tk.managed_by = 'api'
      order by tk.created_at desc limit 1`.execute(this.db)
    return result.rows[0]
  }

  /** Revokes the description-less API token of a team or an organization; the digests revoked (none: none the caller may revoke). */
  async revokeSubjectToken (caller: Caller, subject: Subject & { kind: 'team' | 'organization' }, requestId: string): Promise<string[]> {
    return await this.revokeWhere(this.db, caller, this.subjectOf(caller, subject), sql`tk.description is null and tk.managed_by = 'api'`, requestId)
  }

  /** A page of a team's or a user's tokens, oldest first; undefined when the caller may not see them. */
  async list (caller: Caller, subject: Subject & { kind: 'team' | 'user' }, page: Page): Promise<{ rows: TokenView[], total: number } | undefined> {
    const result = await sql<Omit<TokenView, 'id'> & { id: string | null, total: string | number }>`with grants as (${callerGrants(this.db, caller)}), subject as (${this.subjectOf(caller, subject)})
      select p.*, (select count(*) from ${table.tokens} tk where ${subjectMatches()}) as total
      from subject s left join lateral (select ${TOKEN_COLUMNS} from ${table.tokens} tk where ${subjectMatches()}
        order by tk.created_at, tk.id limit ${page.size} offset ${(page.number - 1) * page.size}) p on true`.execute(this.db)
    if (result.rows.length === 0) return undefined
    const rows = result.rows.filter((r): r is typeof r & { id: string } => r.id !== null)
    return { rows, total: Number(result.rows[0]!.total) }
  }

  /** One token by id, if the caller manages its subject. */
  async findById (caller: Caller, id: string): Promise<TokenView | undefined> {
    const result = await sql<TokenView>`with grants as (${callerGrants(this.db, caller)}), subject as (${this.subjectOfToken(caller, id)})
      select ${TOKEN_COLUMNS} from ${table.tokens} tk join subject s on tk.id = s.token_id`.execute(this.db)
    return result.rows[0]
  }

  /** Revokes one token by id — a seed's included (DESIGN §9.1) — if the caller manages its subject; the digest revoked (none: it may not). */
  async revokeById (caller: Caller, id: string, requestId: string): Promise<string[]> {
    return await this.revokeWhere(this.db, caller, this.subjectOfToken(caller, id), sql`tk.id = s.token_id`, requestId)
  }

  /** The user behind a user token (GET /account/details); undefined for any other caller. */
  async account (caller: Caller): Promise<{ id: string, username: string } | undefined> {
    if (caller.kind !== 'user') return undefined
    const result = await sql<{ id: string, username: string }>`select u.id, u.username from ${table.users} u
      where u.id = ${caller.userId}::text and ${tokenStillNamesCaller(caller)}`.execute(this.db)
    return result.rows[0]
  }

  /**
   * The subject the caller manages, as a row: kind, and organization_id, team_id, user_id as its
   * tokens carry them, token_id (null here). No row when the caller may not manage it — a
   * user's tokens are that user's alone, whatever its grants.
   */
  private subjectOf (caller: Caller, subject: Subject): RawBuilder<unknown> {
    switch (subject.kind) {
      case 'team':
        return sql`select 'team'::text as kind, null::text as organization_id, t.id as team_id, null::text as user_id, null::text as token_id
          from ${table.teams} t where t.id = ${subject.teamId}::text and ${managesTeam('t')}`
      case 'organization':
        return sql`select 'organization'::text as kind, o.id as organization_id, null::text as team_id, null::text as user_id, null::text as token_id
          from ${table.organizations} o where o.name = ${subject.organization}::text and ${ownsThroughTeam('o.id')}`
      case 'user':
        return sql`select 'user'::text as kind, null::text as organization_id, null::text as team_id, u.id as user_id, null::text as token_id
          from ${table.users} u where u.id = ${subject.userId}::text and ${userIsCaller(caller, 'u.id')}`
    }
  }

  /** The subject of the token `id`, as subjectOf's row plus token_id, if the caller manages it. */
  private subjectOfToken (caller: Caller, id: string): RawBuilder<unknown> {
    return sql`select tk.kind, tk.organization_id, tk.team_id, tk.user_id, tk.id as token_id
      from ${table.tokens} tk left join ${table.teams} t on t.id = tk.team_id
      where tk.id = ${id}::text and (
        (tk.kind = 'team' and ${managesTeam('t')})
        or (tk.kind = 'organization' and ${ownsThroughTeam('tk.organization_id')})
        or (tk.kind = 'user' and ${userIsCaller(caller, 'tk.user_id')}))`
  }

  /**
   * Deletes the subject's tokens that `where` (over `tk` and the subject `s`) keeps, remembers
   * their digests as revoked and records a destroy event for each, in one statement; the digests.
   */
  private async revokeWhere (db: Kysely<Database>, caller: Caller, subject: RawBuilder<unknown>, where: RawBuilder<unknown>, requestId: string): Promise<string[]> {
    const result = await sql<{ digest: string }>`with grants as (${callerGrants(db, caller)}), subject as (${subject}),
      gone as (delete from ${table.tokens} tk using subject s where ${subjectMatches()} and ${where}
        returning tk.id, tk.digest, tk.kind, tk.organization_id, tk.team_id, tk.user_id),
      revoked as (insert into ${table.revoked_tokens} (digest) select digest from gone on conflict do nothing),
      events as (select * from ${tokenEvents('gone')} e),
      audit as (${recordDirectoryEvents(db, 'events', change('destroy', caller, requestId))})
      select digest from gone`.execute(db)
    return result.rows.map((row) => row.digest)
  }

  /**
   * Inserts a new API token of the subject (a statement answering its row), expiring no later than
   * `cap` (default: the caller's own token's expiry), and records its create events, in one statement.
   */
  private async insert (db: Kysely<Database>, caller: Caller, subject: RawBuilder<unknown>, description: string | null, expiresAt: Date | null, requestId: string,
    cap: RawBuilder<unknown> = callerExpiry(caller)): Promise<CreateResult> {
    const secret = newTokenSecret()
    const createdBy = caller.kind === 'user' ? caller.userId : null
    const result = await sql<TokenView & { subject: string, id: string | null }>`with grants as (${callerGrants(db, caller)}), subject as (${subject}),
      inserted as (insert into ${table.tokens} (id, kind, organization_id, team_id, user_id, digest, expires_at, managed_by, description, created_by)
        select ${newId('at')}::text, s.kind, s.organization_id, s.team_id, s.user_id, ${tokenDigest(secret)}::text,
          least(${expiresAt?.toISOString() ?? null}::timestamptz, ${cap}), 'api', ${description}::text, ${createdBy}::text from subject s
        on conflict (team_id, description) where description is not null do nothing
        returning id, created_at, last_used_at, expires_at, description, created_by, team_id, kind, organization_id, user_id),
      events as (select * from ${tokenEvents('inserted')} e),
      audit as (${recordDirectoryEvents(db, 'events', change('create', caller, requestId))})
      select s.kind as subject, i.* from subject s left join inserted i on true`.execute(db)
    const row = result.rows[0]
    if (row === undefined) return { created: undefined, taken: false }
    if (row.id === null) return { created: undefined, taken: true }
    return { created: row, secret }
  }
}

/**
 * When the caller's own token expires (null: never, or a host vouched for the caller): a token it
 * makes expires no later (`least` skips a null), so no token outlives the one that made it.
 */
const callerExpiry = (caller: Caller): RawBuilder<Date | null> => caller.token === undefined
  ? sql<null>`null::timestamptz`
  : sql<Date | null>`(select ck.expires_at from ${table.tokens} ck where ck.digest = ${caller.token}::text)`

/** A subject as `subjectOf` answers it. */
interface SubjectRow { kind: string, organization_id: string | null, team_id: string | null, user_id: string | null }

/** A subject found (and locked) before, as the row `subjectOf` would answer. */
const subjectValues = (row: SubjectRow): RawBuilder<unknown> =>
  sql`select ${row.kind}::text as kind, ${row.organization_id}::text as organization_id, ${row.team_id}::text as team_id, ${row.user_id}::text as user_id, null::text as token_id`

/** Thrown inside a transaction whose step found nothing to do: the transaction rolls back whole. */
class NothingToDo extends Error {}

/** A token `tk` is of the subject `s`. */
const subjectMatches = () => sql<boolean>`(tk.kind = s.kind and (
  (s.kind = 'team' and tk.team_id = s.team_id) or
  (s.kind = 'organization' and tk.organization_id = s.organization_id) or
  (s.kind = 'user' and tk.user_id = s.user_id)))`

/** The user `column` is the caller itself, a user whose token still names it — the only one who manages a user's tokens. */
const userIsCaller = (caller: Caller, column: string): RawBuilder<boolean> =>
  caller.kind === 'user'
    ? sql<boolean>`(${sql.ref(column)} = ${caller.userId}::text and ${tokenStillNamesCaller(caller)})`
    : sql<boolean>`false`

const change = (action: 'create' | 'destroy', caller: Caller, requestId: string): DirectoryChange =>
  ({ resourceType: 'authentication-token', action, accessor: accessorOf(caller), requestId })
