// The page's client of the API: every request through the scheduler (./scheduler.ts), which keeps
// to the caller's rate limit and waits out a 429; the token, from this tab's sessionStorage, only
// ever as a header — never in a URL, a cookie or a referrer.
import { Scheduler } from './scheduler.js'

const BASE = document.querySelector<HTMLMetaElement>('meta[name="api-base"]')!.content
const TOKEN_KEY = 'team-access:token'

export interface Resource { id: string, type: string, attributes: Record<string, any>, relationships?: Record<string, any> }
export interface ListDocument { data: Resource[], included?: Resource[], meta?: { pagination?: { 'total-pages'?: number, 'total-count'?: number } } }
export interface List { data: Resource[], included: Resource[] }

/** An answer other than 2xx: its status, and the error document's detail. */
export class ApiError extends Error {
  constructor (readonly status: number, message: string) { super(message) }
}

/** The token of this tab, if one was pasted. */
export const token = (): string | null => sessionStorage.getItem(TOKEN_KEY)
export const keepToken = (value: string): void => sessionStorage.setItem(TOKEN_KEY, value)
export const forgetToken = (): void => sessionStorage.removeItem(TOKEN_KEY)

let scheduler = new Scheduler()
let onPause: (until: number) => void = () => {}

/**
 * A fresh start (a sign-in, another organization): what the last one still had waiting is dropped
 * (its promises reject with Cancelled), and `paused` is told whenever the page waits for the service.
 */
export function restart (paused: (until: number) => void): void {
  scheduler.close()
  onPause = paused
  scheduler = new Scheduler((until) => onPause(until))
}

/** Answers 429 so far since the last restart: each waited out and sent again. */
export const throttled = (): number => scheduler.throttled

/** A request to the API in its turn (`later`: after the others waiting, ./scheduler.ts); a 2xx answer, or an ApiError. */
export async function request (path: string, { accept = 'application/vnd.api+json', later = false }: { accept?: string, later?: boolean } = {}): Promise<Response> {
  const response = await scheduler.send(async () => await fetch(`${BASE}${path}`, {
    headers: { Authorization: `Bearer ${token() ?? ''}`, Accept: accept },
    credentials: 'omit',
    cache: 'no-store',
    referrerPolicy: 'no-referrer'
  }), later)
  if (!response.ok) {
    let detail = response.statusText
    try {
      const body = await response.json() as { errors?: Array<{ title?: string, detail?: string }> }
      detail = body.errors?.[0]?.detail ?? body.errors?.[0]?.title ?? detail
    } catch {}
    throw new ApiError(response.status, detail)
  }
  return response
}

export const json = async <T>(path: string, later = false): Promise<T> => await (await request(path, { later })).json() as T

/** Every page of a list, 100 a page: the first, then the rest at once — the scheduler paces them, after the first pages of other lists. */
export async function all (path: string): Promise<List> {
  const pageOf = (n: number) => `${path}${path.includes('?') ? '&' : '?'}page%5Bsize%5D=100&page%5Bnumber%5D=${n}`
  const first = await json<ListDocument>(pageOf(1))
  const pages = first.meta?.pagination?.['total-pages'] ?? 1
  const rest = await Promise.all(Array.from({ length: Math.max(0, pages - 1) }, async (_, i) => await json<ListDocument>(pageOf(i + 2), true)))
  const documents = [first, ...rest]
  return { data: documents.flatMap((d) => d.data), included: documents.flatMap((d) => d.included ?? []) }
}

/** An organization's path in the API. */
export const org = (organization: string): string => `/organizations/${encodeURIComponent(organization)}`
