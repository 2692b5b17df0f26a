import { ApiError } from './errors.js'

/**
 * `include` (JSON:API's compound documents): this service includes nothing. Empty is accepted —
 * the Terraform provider always sends `include=` — anything else is a 400 (DESIGN §7).
 */
export function noInclude (include: string | undefined): void {
  if (include !== undefined && include !== '') throw new ApiError(400, 'bad request', 'include not supported', { parameter: 'include' })
}

/**
 * `include` where a resource has related resources to include: the comma-separated names, each one
 * of `allowed` (empty parts ignored: `include=` includes nothing); any other is a 400, as
 * `noInclude`.
 */
export function includesOf<T extends string> (include: string | undefined, allowed: readonly T[]): Set<T> {
  const names = (include ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '')
  const unknown = names.find((name) => !(allowed as readonly string[]).includes(name))
  if (unknown !== undefined) throw new ApiError(400, 'bad request', 'include not supported', { parameter: 'include' })
  return new Set(names as T[])
}
