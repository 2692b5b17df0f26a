import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { validateResponse, type Operation } from '../openapi.js'

export const LIST = '/api/v2/team-workspaces'
export const listUrl = (workspaceId: string, extra = '') =>
  `${LIST}?filter%5Bworkspace%5D%5Bid%5D=${encodeURIComponent(workspaceId)}${extra}`

export interface Call {
  token?: string | null
  headers?: Record<string, string>
}

/**
 * The five operations as a client sends them. Every 2xx answer is checked against the project's
 * OpenAPI description, so every success response in the suite is validated.
 */
export function client (t: Test, app: FastifyInstance) {
  const send = async (operation: Operation, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, call: Call, body?: unknown): Promise<LightMyRequestResponse> => {
    const headers: Record<string, string> = { ...call.headers }
    if (call.token) headers.authorization = `Bearer ${call.token}`
    if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/vnd.api+json'
    const res = await app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }) })
    if (res.statusCode < 300) {
      const { valid, errors } = validateResponse(operation, res.body === '' ? '' : res.json())
      if (!valid) t.fail(`${method} ${url}: the ${res.statusCode} response does not match schemas/openapi.json`, { errors, body: res.body })
      if (res.statusCode !== 204) t.match(res.headers['content-type'], /^application\/vnd\.api\+json/, 'JSON:API media type')
    }
    return res
  }
  return {
    list: (workspaceId: string, call: Call = {}, extra = '') => send('list', 'GET', listUrl(workspaceId, extra), call),
    listUrl: (url: string, call: Call = {}) => send('list', 'GET', url, call),
    show: (id: string, call: Call = {}) => send('show', 'GET', `${LIST}/${encodeURIComponent(id)}`, call),
    add: (body: unknown, call: Call = {}) => send('add', 'POST', LIST, call, body),
    update: (id: string, body: unknown, call: Call = {}) => send('update', 'PATCH', `${LIST}/${encodeURIComponent(id)}`, call, body),
    remove: (id: string, call: Call = {}, body?: string) => send('remove', 'DELETE', `${LIST}/${encodeURIComponent(id)}`, call, body)
  }
}

/** The body of an add, as go-tfe sends it. */
export function addBody (teamId: string, workspaceId: string, attributes: Record<string, unknown>) {
  return {
    data: {
      type: 'team-workspaces',
      attributes,
      relationships: {
        team: { data: { type: 'teams', id: teamId } },
        workspace: { data: { type: 'workspaces', id: workspaceId } }
      }
    }
  }
}

export const NOT_FOUND = { errors: [{ status: '404', title: 'not found' }] }
