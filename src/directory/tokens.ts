import { sql, type Kysely, type RawBuilder } from 'kysely'
import { tokenStillNamesCaller } from '../access/grants.js'
import { ownsThroughTeam } from '../access/predicates.js'
import { managesTeam } from '../access/escalation.js'
import { tokenEvents } from '../audit/audit-record.js'
import type { Caller } from '../auth/caller.js'
import { tokenDigest } from '../auth/token-digest.js'
import type { Database } from '../db/database.js'
import { newId } from '../db/ids.js'
import { table } from '../db/tables.js'
import { recordChange } from './events.js'
import { Removals } from './removals.js'
import { grantsOf, managedBy, mayIf, type ChangeSource } from './source.js'

/**
 * Authentication tokens created and revoked (DESIGN §9.1, §9.5), whoever asks. Every statement
 * has a `subject` CTE: the team, organization or user whose tokens the source may manage (an API
 * caller: by the rules of src/access/predicates.ts; a user's tokens are that user's alone) — none
 * when it may not, so a statement that finds no subject changes nothing. A create or a revocation
 * records its audit events in the same statement (src/audit/audit-record.ts `tokenEvents`: a
 * team's or an organization's token in its organization's trail); a revocation keeps the digest
 * in `revoked_tokens` (src/directory/removals.ts), and a revoked secret is never taken again. The
 * secret exists only in the answer to its create: only its digest is stored.
 */

/** Whose tokens: a team (by id), an organization (by name: the API; by id: the host), a user (by id). */
export type TokenSubject =
  | { kind: 'team', teamId: string }
  | { kind: 'organization', organization: string }
  | { kind: 'organization', organizationId: string }
  | { kind: 'user', userId: string }

/** The user `column` is the caller itself, a user whose token still names it — the only one who manages a user's tokens through the API. */
const userIsCaller = (caller: Caller, column: string): RawBuilder<boolean> =>
  caller.kind === 'user'
    ? sql<boolean>`(${sql.ref(column)} = ${caller.userId}::text and ${tokenStillNamesCaller(caller)})`
    : sql<boolean>`false`

const isUser = (source: ChangeSource, column: string): RawBuilder<boolean> => source.by === 'api' ? userIsCaller(source.caller, column) : sql<boolean>`true`

/**
 * The subject the source manages, as a row: kind, and organization_id, team_id, user_id as its
 * tokens carry them, token_id (null here). No row when there is none, or the source may not.
 */
export function subjectOf (source: ChangeSource, subject: TokenSubject): RawBuilder<unknown> {
  switch (subject.kind) {
    case 'team':
      return sql`select 'team'::text as kind, null::text as organization_id, t.id as team_id, null::text as user_id, null::text as token_id
        from ${table.teams} t where t.id = ${subject.teamId}::text and ${mayIf(source, managesTeam('t'))}`
    case 'organization':
      return sql`select 'organization'::text as kind, o.id as organization_id, null::text as team_id, null::text as user_id, null::text as token_id
        from ${table.organizations} o where ${'organization' in subject ? sql`o.name = ${subject.organization}::text` : sql`o.id = ${subject.organizationId}::text`}
          and ${mayIf(source, ownsThroughTeam('o.id'))}`
    case 'user':
      return sql`select 'user'::text as kind, null::text as organization_id, null::text as team_id, u.id as user_id, null::text as token_id
        from ${table.users} u where u.id = ${subject.userId}::text and ${isUser(source, 'u.id')}`
  }
}

/** The subject of the token `id`, as subjectOf's row plus token_id, if the source manages it. */
export function subjectOfToken (source: ChangeSource, id: string): RawBuilder<unknown> {
  return sql`select tk.kind, tk.organization_id, tk.team_id, tk.user_id, tk.id as token_id
    from ${table.tokens} tk left join ${table.teams} t on t.id = tk.team_id
    where tk.id = ${id}::text and ${mayIf(source, sql`(
      (tk.kind = 'team' and ${managesTeam('t')})
      or (tk.kind = 'organization' and ${ownsThroughTeam('tk.organization_id')})
      or (tk.kind = 'user' and ${isUser(source, 'tk.user_id')}))`)}`
}

/** A token `tk` is of the subject `s`. */
export const subjectMatches = (): RawBuilder<boolean> => sql<boolean>`(tk.kind = s.kind and (
  (s.kind = 'team' and tk.team_id = s.team_id) or
  (s.kind = 'organization' and tk.organization_id = s.organization_id) or
  (s.kind = 'user' and tk.user_id = s.user_id)))`

/** A subject found (and locked) before, as the row `subjectOf` would answer. */
export interface SubjectRow { kind: string, organization_id: string | null, team_id: string | null, user_id: string | null }
export const subjectValues = (row: SubjectRow): RawBuilder<unknown> =>
  sql`select ${row.kind}::text as kind, ${row.organization_id}::text as organization_id, ${row.team_id}::text as team_id, ${row.user_id}::text as user_id, null::text as token_id`

/**
 * When an API caller's own token expires (null: never, a host vouched for the caller, or a trusted
 * source): a token it makes expires no later (`least` skips a null), so no token outlives its maker.
 */
export const makerExpiry = (source: ChangeSource): RawBuilder<Date | null> => source.by !== 'api' || source.caller.token === undefined
  ? sql<null>`null::timestamptz`
  : sql<Date | null>`(select ck.expires_at from ${table.tokens} ck where ck.digest = ${source.caller.token}::text)`

/** A token's metadata as the API's resource answers it. */
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

export interface NewToken {
  secret: string
  description: string | null
  expiresAt: Date | null
  /** The latest it may expire (default: its maker's own token's expiry). */
  cap?: RawBuilder<unknown>
}

/** A create's answer: the token; or none made — no subject the source manages, a description `taken`, a `revoked` secret. */
export type CreateResult = { created: TokenView } | { created: undefined, taken: boolean, revoked: boolean }

/** Creates a token of the subject, managed by the source, with its `create` events; in one statement. */
export async function createToken (db: Kysely<Database>, source: ChangeSource, subject: RawBuilder<unknown>, token: NewToken): Promise<CreateResult> {
  const digest = tokenDigest(token.secret)
  const createdBy = source.by === 'api' && source.caller.kind === 'user' ? source.caller.userId : null
  const result = await sql<TokenView & { id: string | null, revoked: boolean }>`with ${grantsOf(db, source)} subject as (${subject}),
    inserted as (insert into ${table.tokens} (id, kind, organization_id, team_id, user_id, digest, expires_at, managed_by, description, created_by)
      select ${newId('at')}::text, s.kind, s.organization_id, s.team_id, s.user_id, ${digest}::text,
        least(${token.expiresAt?.toISOString() ?? null}::timestamptz, ${token.cap ?? makerExpiry(source)}), ${managedBy(source)}::text,
        ${token.description}::text, ${createdBy}::text
      from subject s where not exists (select 1 from ${table.revoked_tokens} r where r.digest = ${digest}::text)
      on conflict (team_id, description) where description is not null do nothing
      returning id, created_at, last_used_at, expires_at, description, created_by, team_id, kind, organization_id, user_id),
    events as (select * from ${tokenEvents('inserted')} e),
    audit as (${recordChange(db, 'events', 'authentication-token', 'create', source)})
    select i.*, exists (select 1 from ${table.revoked_tokens} r where r.digest = ${digest}::text) as revoked
    from subject s left join inserted i on true`.execute(db)
  const row = result.rows[0]
  if (row === undefined) return { created: undefined, taken: false, revoked: false }
  if (row.id === null) return { created: undefined, taken: !row.revoked, revoked: row.revoked }
  const { revoked: _, ...created } = row
  return { created: created as TokenView }
}

/**
 * Revokes the subject's tokens that `where` (over `tk` and the subject `s`) keeps, each with its
 * `destroy` event, its digest revoked for good; in one statement. The digests revoked.
 */
export async function revokeTokens (db: Kysely<Database>, source: ChangeSource, subject: RawBuilder<unknown>, where: RawBuilder<boolean>): Promise<string[]> {
  return await new Removals(db, source).removeTokens(sql<boolean>`${subjectMatches()} and ${where}`,
    { with: sql`${grantsOf(db, source)} subject as (${subject})`, using: sql`using subject s` })
}

/** Thrown inside a transaction whose step found nothing to do: the transaction rolls back whole. */
class NothingToDo extends Error {}

/** The API-made token without a description: the one a regenerate replaces. */
export const subjectToken = sql<boolean>`tk.description is null and tk.managed_by = 'api'`

/**
 * A new description-less token of a team or an organization; the one before it (if any) is revoked
 * in the same transaction (regenerate). The subject's row is locked as the source may manage it,
 * so concurrent regenerates of one subject take turns; what follows acts on that row as it is, not
 * on the caller's grants again — the token revoked may be the one the caller came with. Every step
 * finds its row, or nothing is written at all.
 */
export async function regenerateToken (db: Kysely<Database>, source: ChangeSource, subject: TokenSubject & { kind: 'team' | 'organization' },
  secret: string, expiresAt: Date | null): Promise<CreateResult & { revokedDigests: string[] }> {
  const none = { created: undefined, taken: false, revoked: false, revokedDigests: [] }
  return await db.transaction().execute(async (trx) => {
    const found = await sql<SubjectRow & { cap: Date | null }>`with ${grantsOf(trx, source)} locked as (${subjectOf(source, subject)} for update)
      select s.*, ${makerExpiry(source)} as cap from locked s`.execute(trx)
    const locked = found.rows[0]
    if (locked === undefined) return none
    const revokedDigests = await revokeTokens(trx, source, subjectValues(locked), subjectToken)
    // the cap read before the revocation: the token revoked may be the caller's own
    const created = await createToken(trx, source, subjectValues(locked), { secret, description: null, expiresAt, cap: sql`${locked.cap}::timestamptz` })
    if (created.created === undefined) throw new NothingToDo()
    return { ...created, revokedDigests }
  }).catch((err: unknown) => {
    if (err instanceof NothingToDo) return none
    throw err
  })
}
