import { ApiError } from '../jsonapi/errors.js'
import { parseFixedPage, type PageRequest } from '../jsonapi/pagination.js'

/** HCP Terraform's audit-trail pages: 1000 events unless asked for fewer, never more. */
export const AUDIT_PAGE_SIZES = { default: 1000, max: 1000 }

export const parseAuditPage = (number: string | undefined, size: string | undefined): PageRequest =>
  parseFixedPage(number, size, AUDIT_PAGE_SIZES)

/**
 * ISO 8601, extended format, date and time with an offset: `Z`, `±hh:mm`, `±hhmm` or `±hh`, with
 * or without a fraction of a second (`.` or `,`). go-tfe sends whole seconds and the value's own
 * offset (`2026-11-22T02:02:03+01:00`); a `+` a client forgot to escape arrives as a space and
 * is read as the `+` it was.
 */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,12}))?(?:(Z)|([+\- ])(\d{2})(?::?(\d{2}))?)$/i

/**
 * `since` as the instant it names, in UTC with microseconds (`2026-11-22T01:02:03.456789Z`), or
 * undefined when absent; 422 when it is not an ISO 8601 date and time with an offset. Digits past
 * the microsecond are dropped, not rounded: events are stamped to the microsecond, so "strictly
 * after" the truncated instant is exactly "strictly after" the one given.
 */
export function parseSince (value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const match = ISO_8601.exec(value.trim())
  if (match === null) throw badSince()
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const fraction = (match[7] ?? '').padEnd(6, '0').slice(0, 6)
  const sign = match[9] === '-' ? -1 : 1
  const offsetMinutes = match[8] !== undefined ? 0 : sign * (Number(match[10]) * 60 + Number(match[11] ?? 0))
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59 ||
    Number(match[10] ?? 0) > 23 || Number(match[11] ?? 0) > 59) throw badSince()
  const local = new Date(0)
  local.setUTCFullYear(year, month - 1, day)
  local.setUTCHours(hour, minute, second, Number(fraction.slice(0, 3)))
  const instant = new Date(local.getTime() - offsetMinutes * 60_000)
  if (instant.getUTCFullYear() < 1 || instant.getUTCFullYear() > 9999) throw badSince()
  return `${instant.toISOString().slice(0, 23)}${fraction.slice(3)}Z`
}

function daysIn (year: number, month: number): number {
  return new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeap(year) ? 1 : 0)
}

const isLeap = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0

const badSince = () => new ApiError(422, 'invalid parameter',
  'since must be an ISO 8601 date and time with an offset, e.g. 2026-11-22T01:02:03Z or 2026-11-22T02:02:03.456+01:00',
  { parameter: 'since' })
