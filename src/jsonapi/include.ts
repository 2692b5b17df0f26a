import { ApiError } from './errors.js'

/**
 * `include` (JSON:API's compound documents): this service includes nothing. Empty is accepted —
 * the Terraform provider always sends `include=` — anything else is a 400 (DESIGN §7).
 */
export function noInclude (include: string | undefined): void {
  if (include !== undefined && include !== '') throw new ApiError(400, 'bad request', 'include not supported', { parameter: 'include' })
}

/**
 * `include` on team reads (DESIGN §9.4): `users` includes the members (go-tfe's TeamMembers.List
 * sends `include=users`); empty includes nothing; anything else is a 400, as `noInclude`.
 */
export function includesUsers (include: string | undefined): boolean {
  if (include !== undefined && include.split(',').every((part) => part === 'users')) return true
  noInclude(include)
  return false
}
