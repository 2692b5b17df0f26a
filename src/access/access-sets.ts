import type { PermissionName } from './permissions.js'
import { MANAGED_BY_MIRROR, MIRROR_GUARD } from '../jsonapi/errors.js'

/**
 * What every access set shares (DESIGN §10.1 a workspace's, §11.5 a project's): how a change that
 * changed nothing says why, what is wrong with one entry, and which ETags let a change go on.
 */

/** Why a change of an access set changed nothing. */
export type AccessSetErrorCode = 'not-found' | 'precondition-failed' | 'invalid'

/** What is wrong with one entry: its index in the set, the member at fault (none: the entry itself), why. */
export interface AccessSetProblem {
  entry: number
  member?: 'team' | 'workspace' | 'access' | PermissionName
  detail: string
}

/**
 * A change of an access set that changed nothing: `not-found` (no such workspace or project, or
 * the caller does not administer it), `precondition-failed` (`ifMatch` names a set that is no
 * longer there), `invalid` (`problems` says which entries break which rule; none: the set as a whole,
 * a mirrored organization's, see asAccessSetError).
 */
export class AccessSetError extends Error {
  constructor (readonly code: AccessSetErrorCode, message: string, readonly problems: readonly AccessSetProblem[] = []) {
    super(message)
    this.name = 'AccessSetError'
  }
}

/**
 * A write of the set that the mirror's guard refused (a mirrored organization's rows, DESIGN §13.3:
 * SQLSTATE TAM01 of migration 0013) is the set's own `invalid`, in the mirror's words; any other
 * error as it is.
 */
export function asAccessSetError (err: unknown): unknown {
  return (err as { code?: unknown } | null)?.code === MIRROR_GUARD ? new AccessSetError('invalid', MANAGED_BY_MIRROR) : err
}

/**
 * Whether an If-Match header value lets a write go on against the set named `etag`: `*`, or a list
 * of entity tags one of which is `etag` by the strong comparison (a weak tag never matches).
 */
export function ifMatchAccepts (header: string, etag: string): boolean {
  const value = header.trim()
  if (value === '*') return true
  return value.split(',').map((tag) => tag.trim()).some((tag) => tag === etag)
}
