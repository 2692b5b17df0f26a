import { ApiError } from './errors.js'

export const DEFAULT_PAGE_SIZE = 20
export const MAX_PAGE_SIZE = 100

export interface PageRequest { number: number, size: number }

/**
 * DESIGN §4: no page parameter → undefined (every row, unpaginated); either one → a page,
 * number ≥ 1 (default 1) and size 1..100 (default 20); anything else is 422.
 */
export function parsePage (number: string | undefined, size: string | undefined): PageRequest | undefined {
  if (number === undefined && size === undefined) return undefined
  const n = number === undefined ? 1 : positiveInteger(number, 15)
  if (n === undefined) throw badParameter('page[number]', 'page[number] must be a positive integer')
  const s = size === undefined ? DEFAULT_PAGE_SIZE : positiveInteger(size, 3)
  if (s === undefined || s > MAX_PAGE_SIZE) throw badParameter('page[size]', `page[size] must be between 1 and ${MAX_PAGE_SIZE}`)
  return { number: n, size: s }
}

/** The first page at the default size: lists that are always paginated start there. */
export const firstPage = (): PageRequest => ({ number: 1, size: DEFAULT_PAGE_SIZE })

/** A whole number ≥ 1 of at most `digits` digits (a page past the end is fine; past 15 digits no offset is). */
function positiveInteger (value: string, digits: number): number | undefined {
  if (!new RegExp(`^\\d{1,${digits}}$`).test(value.trim())) return undefined
  const n = Number(value)
  return n >= 1 ? n : undefined
}

const badParameter = (parameter: string, detail: string) =>
  new ApiError(422, 'invalid parameter', detail, { parameter })

/**
 * A page of a list that is always paginated, with sizes of its own (the audit trail: default and
 * largest 1000, as HCP Terraform): number ≥ 1 (default 1), size 1..max; anything else is 422.
 */
export function parseFixedPage (number: string | undefined, size: string | undefined, sizes: { default: number, max: number }): PageRequest {
  // 12 digits: the offset of any such page is still an exact number
  const n = number === undefined ? 1 : positiveInteger(number, 12)
  if (n === undefined) throw badParameter('page[number]', 'page[number] must be a positive integer')
  const s = size === undefined ? sizes.default : positiveInteger(size, String(sizes.max).length)
  if (s === undefined || s > sizes.max) throw badParameter('page[size]', `page[size] must be between 1 and ${sizes.max}`)
  return { number: n, size: s }
}
