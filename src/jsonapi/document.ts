import type { PaginationLinks, PaginationMeta } from '../../schemas/jsonapi.js'
import type { PageRequest } from './pagination.js'

/**
 * The one module that builds JSON:API documents: resources, the `{ data }` envelope, and a
 * page's `meta.pagination` and `links`. Serializers give it a resource's parts; routes give it
 * resources and, for a page, where its pages live.
 * @see https://jsonapi.org/format/#document-structure
 */

/** A resource object: `links.self` is the path under the prefix the API is mounted at. */
export function resource<T extends string, A, R> (type: T, id: string, attributes: A, relationships: R, self: string) {
  return { id, type, attributes, relationships, links: { self } }
}

/** A path segment of a link, escaped. */
export const segment = (value: string): string => encodeURIComponent(value)

/** A document of one resource. */
export const single = <D>(data: D): { data: D } => ({ data })

/** A document of every resource, unpaginated. */
export const collection = <D>(data: D[]): { data: D[] } => ({ data })

/** Where a list lives: an absolute origin + path, and the query parameters every page link keeps. */
export interface ListLocation {
  origin: string
  path: string
  params: Record<string, string>
}

/** A document of one page: `meta.pagination` and absolute `links` that keep the list's parameters. */
export function paged<D> (data: D[], page: PageRequest, total: number, at: ListLocation):
{ data: D[], meta: { pagination: PaginationMeta }, links: PaginationLinks } {
  const { totalPages, prev, next } = pageNumbers(page, total)
  // brackets percent-encoded, as HCP Terraform's links
  const url = (n: number) => `${at.origin}${at.path}?${new URLSearchParams({ ...at.params, 'page[number]': String(n), 'page[size]': String(page.size) }).toString()}`
  return {
    data,
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
      self: url(page.number),
      first: url(1),
      prev: prev === null ? null : url(prev),
      next: next === null ? null : url(next),
      last: url(totalPages)
    }
  }
}

/** Where a page stands among all pages: shared by JSON:API's `meta.pagination` and the audit trail's `pagination`. */
export function pageNumbers (page: PageRequest, total: number): { totalPages: number, prev: number | null, next: number | null } {
  const totalPages = Math.max(1, Math.ceil(total / page.size)) // an empty list still has one (empty) page
  return {
    totalPages,
    prev: page.number > 1 ? Math.min(page.number - 1, totalPages) : null,
    next: page.number < totalPages ? page.number + 1 : null
  }
}
