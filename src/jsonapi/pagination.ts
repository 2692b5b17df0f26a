import type { PaginationLinks, PaginationMeta } from '../../schemas/jsonapi.js'
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

/** A whole number ≥ 1 of at most `digits` digits (a page past the end is fine; past 15 digits no offset is). */
function positiveInteger (value: string, digits: number): number | undefined {
  if (!new RegExp(`^\\d{1,${digits}}$`).test(value.trim())) return undefined
  const n = Number(value)
  return n >= 1 ? n : undefined
}

const badParameter = (parameter: string, detail: string) =>
  new ApiError(422, 'invalid parameter', detail, { parameter })

/**
 * `meta.pagination` and top-level `links` of a page. `pageUrl(n)` is the absolute URL of page n
 * (it keeps the filter). An empty list still has one (empty) page.
 */
export function paginate (page: PageRequest, total: number, pageUrl: (n: number) => string):
{ meta: { pagination: PaginationMeta }, links: PaginationLinks } {
  const totalPages = Math.max(1, Math.ceil(total / page.size))
  const prev = page.number > 1 ? Math.min(page.number - 1, totalPages) : null
  const next = page.number < totalPages ? page.number + 1 : null
  return {
    meta: {
      pagination: {
        'current-page': page.number,
        'page-size': page.size,
        'prev-page': prev,
        'next-page': next,
        'total-pages': totalPages,
        'total-count': total
      }
    },
    links: {
      self: pageUrl(page.number),
      first: pageUrl(1),
      prev: prev === null ? null : pageUrl(prev),
      next: next === null ? null : pageUrl(next),
      last: pageUrl(totalPages)
    }
  }
}
