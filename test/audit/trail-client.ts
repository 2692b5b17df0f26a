import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { validateResponse } from '../openapi.js'

export const TRAIL = '/api/v2/organization/audit-trail'

/**
 * Reads the audit trail as a client does. Every 200 is checked against the project's OpenAPI
 * description and must be plain JSON, never the JSON:API media type.
 */
export function trailClient (t: Test, app: FastifyInstance, path = TRAIL) {
  const read = async (token: string | null, query = ''): Promise<LightMyRequestResponse> => {
    const res = await app.inject({ url: `${path}${query}`, headers: token === null ? {} : { authorization: `Bearer ${token}` } })
    if (res.statusCode === 200) {
      const { valid, errors } = validateResponse('auditTrail', res.json())
      if (!valid) t.fail(`GET ${path}${query}: the 200 response does not match schemas/openapi.json`, { errors, body: res.body })
      t.match(res.headers['content-type'], /^application\/json(;|$)/, 'plain JSON, as HCP Terraform')
    }
    return res
  }

  /** Every event, following `next_page` from page 1 until it is null. */
  const readAll = async (token: string, query = '', size?: number): Promise<{ events: any[], pages: any[] }> => {
    const events: any[] = []
    const pages: any[] = []
    for (let page: number | null = 1; page !== null;) {
      const sizing = size === undefined ? '' : `&page%5Bsize%5D=${size}`
      const res = await read(token, `?page%5Bnumber%5D=${page}${sizing}${query}`)
      if (res.statusCode !== 200) throw new Error(`page ${page}: ${res.statusCode} ${res.body}`)
      const body = res.json()
      events.push(...body.data)
      pages.push(body.pagination)
      page = body.pagination.next_page
    }
    return { events, pages }
  }
  return { read, readAll }
}
