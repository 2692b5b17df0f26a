import { MANAGED_BY_MIRROR, MIRROR_GUARD } from '../jsonapi/errors.js'
import { isGoneWhileWaiting } from '../db/write-races.js'

/**
 * Why a change to the directory changed nothing, as the host's directory and its questions
 * (src/plugin.ts) answer it: an error with a code, never a database error.
 */

/** Why a directory call changed nothing. */
export type DirectoryErrorCode = 'not-found' | 'conflict' | 'invalid'

/**
 * A directory call that changed nothing: `not-found` (an id names no row), `conflict` (a name,
 * username, id or secret already taken), `invalid` (bad input, or a rule of the owners team).
 */
export class DirectoryError extends Error {
  constructor (readonly code: DirectoryErrorCode, message: string) {
    super(message)
    this.name = 'DirectoryError'
  }
}

// ---- database errors → DirectoryError ----

/** What a unique constraint (or index) keeps unique, for a conflict's message. */
export const UNIQUE: Record<string, string> = {
  organizations_pkey: 'an organization with this id already exists',
  organizations_name_key: 'an organization with this name already exists',
  users_pkey: 'a user with this id already exists',
  users_username_key: 'a user with this username already exists',
  users_email_key: 'a user with this email already exists',
  teams_pkey: 'a team with this id already exists',
  teams_organization_name_key: 'the organization already has a team with this name',
  teams_one_owners_team: 'the organization already has an owners team',
  workspaces_pkey: 'a workspace with this id already exists',
  workspaces_organization_name_key: 'the organization already has a workspace with this name',
  tokens_pkey: 'a token with this id already exists',
  tokens_digest_key: 'this secret is already the secret of another token',
  tokens_team_description_key: 'the team already has a token with this description'
}

/**
 * A unique violation is a conflict, named by what it keeps unique (never with the row's values:
 * a token's would be its digest); a row that went while the call waited for it (a foreign key
 * finds nothing) is not found. Anything else is thrown as it is.
 */
export function asDirectoryError (err: unknown): unknown {
  if (err instanceof DirectoryError) return err
  const e = err as { code?: unknown, constraint?: unknown, message?: unknown } | null
  if (e === null || typeof e !== 'object') return err
  const constraint = typeof e.constraint === 'string'
    ? e.constraint
    : Object.keys(UNIQUE).find((name) => typeof e.message === 'string' && e.message.includes(`"${name}"`))
  if (e.code === '23505') return new DirectoryError('conflict', (constraint === undefined ? undefined : UNIQUE[constraint]) ?? 'conflicts with an existing row')
  if (e.code === '23503') return new DirectoryError('not-found', 'a row this call refers to is gone')
  if (e.code === MIRROR_GUARD) return new DirectoryError('invalid', MANAGED_BY_MIRROR)
  return err
}

export const notFound = (what: string, id: unknown): DirectoryError => new DirectoryError('not-found', `no ${what} with id ${JSON.stringify(id)}`)

/** A unique violation of `constraint`: a create or rename that lost to another of the same name. */
export function violates (err: unknown, constraint: string): boolean {
  const e = err as { code?: unknown, constraint?: unknown, message?: unknown } | null
  if (e === null || typeof e !== 'object' || e.code !== '23505') return false
  return e.constraint === undefined || e.constraint === constraint || (typeof e.message === 'string' && e.message.includes(constraint))
}

/**
 * A create's answer: the row its statement inserted, or why none — `hidden` (nothing to insert
 * into: no such organization, the caller may not, or the organization went while the insert
 * waited for it: never a 500), `taken` (`nameConstraint`, the name unique in its organization).
 */
export async function insertedOrRefused<T> (insert: () => Promise<T | undefined>, nameConstraint: string): Promise<{ row: T } | { refusal: 'hidden' | 'taken' }> {
  try {
    const row = await insert()
    return row === undefined ? { refusal: 'hidden' } : { row }
  } catch (err) {
    if (violates(err, nameConstraint)) return { refusal: 'taken' }
    if (isGoneWhileWaiting(err)) return { refusal: 'hidden' }
    throw err
  }
}
