import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { answer, type World } from './hcp-answers.js'

/**
 * HCP Terraform as the mirror's reader meets it, over real HTTP on 127.0.0.1: the recorded answers
 * of ./hcp-answers.ts at the API's base (found through /.well-known/terraform.json, as the clients
 * find it), for the one token it knows, with the faults HCP Terraform's clients meet queued by path
 * — a 429 with `X-RateLimit-Reset` (a delay in seconds), a 503, a dropped connection, a body cut
 * off half-way, a body that is not JSON, JSON that is no JSON:API document, a 403 or 404, a redirect. Its log is what the tests
 * assert on: when each request arrived, how many were open at once, when each fault was answered.
 */
/** `ok`: no fault, for a fault queued behind answers as usual. */
export type Fault = 'ok' | '429' | '503' | 'drop' | 'cut' | 'garbage' | 'empty' | '403' | '404' | 'redirect'

export interface StandInOptions {
  /** The token it knows; any other answers 401. */
  token: string
  world?: World
  /** How long it takes to answer an API request, ms (default 2). */
  delayMs?: number
  /** The API's base its discovery document names (default /api/v2/); `none`: no discovery document (404), the API at /api/v2/. */
  apiBase?: string | 'none'
  /** The discovery document it answers in place of its own (one that names no API, say). */
  discovery?: Record<string, unknown>
  /** A 429's X-RateLimit-Reset (default 0.2). */
  resetSeconds?: string
}

export interface StandIn {
  from: string
  /** Every request as it arrived: when (performance.now()), its path below the API's base (or its whole path), its query. */
  log: Array<{ at: number, path: string, query: string }>
  /** When each fault was answered. */
  faulted: Array<{ at: number, path: string, fault: Fault }>
  /** The most API requests open at once. */
  readonly maxInFlight: number
  /** Faults by path below the API's base: the next requests of that path get them, in order. */
  faults: Map<string, Fault[]>
  close: () => Promise<void>
}

export async function standIn (options: StandInOptions): Promise<StandIn> {
  const base = options.apiBase === undefined || options.apiBase === 'none' ? '/api/v2/' : options.apiBase
  const faults = new Map<string, Fault[]>()
  const log: StandIn['log'] = []
  const faulted: StandIn['faulted'] = []
  const state = { open: 0, maxInFlight: 0 }

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url!, 'http://stand-in')
    if (url.pathname === '/.well-known/terraform.json') {
      log.push({ at: performance.now(), path: url.pathname, query: url.search })
      if (options.apiBase === 'none') { response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>not found</h1>'); return }
      response.writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(options.discovery ?? { 'modules.v1': '/api/registry/v1/modules/', 'motd.v1': '/api/terraform/motd', 'state.v2': base, 'tfe.v2': base, 'tfe.v2.1': base, 'tfe.v2.2': base, 'versions.v1': 'https://checkpoint-api.hashicorp.com/v1/versions/' }))
      return
    }
    const path = url.pathname.startsWith(base) ? `/${url.pathname.slice(base.length)}` : url.pathname
    log.push({ at: performance.now(), path, query: url.search })
    const queued = faults.get(path)?.shift()
    const fault = queued === 'ok' ? undefined : queued
    if (fault === '429') {
      // at once: the tests of the hold count from here
      faulted.push({ at: performance.now(), path, fault })
      response.writeHead(429, { 'content-type': 'application/vnd.api+json', 'x-ratelimit-limit': '30', 'x-ratelimit-reset': options.resetSeconds ?? '0.2' })
        .end('{"errors":[{"status":"429","title":"Too many requests"}]}')
      return
    }
    state.open++
    state.maxInFlight = Math.max(state.maxInFlight, state.open)
    setTimeout(() => {
      state.open--
      if (fault !== undefined) faulted.push({ at: performance.now(), path, fault })
      if (!url.pathname.startsWith(base)) { notFound(response); return }
      if (request.headers.authorization !== `Bearer ${options.token}`) {
        response.writeHead(401, { 'content-type': 'application/vnd.api+json' }).end('{"errors":[{"status":"401","title":"unauthorized"}]}')
        return
      }
      const body = JSON.stringify(answer(options.world ?? {}, path, url.searchParams) ?? null)
      switch (fault) {
        case '503': response.writeHead(503, { 'content-type': 'text/html' }).end('<h1>Service Unavailable</h1>'); return
        case '403': response.writeHead(403, { 'content-type': 'application/vnd.api+json' }).end('{"errors":[{"status":"403","title":"forbidden"}]}'); return
        case '404': notFound(response); return
        case 'redirect': response.writeHead(302, { location: 'https://elsewhere.example/api/v2/x' }).end(); return
        case 'drop': request.socket.destroy(); return
        case 'empty': response.writeHead(200, { 'content-type': 'application/vnd.api+json' }).end('{"meta":{}}'); return
        case 'garbage': response.writeHead(200, { 'content-type': 'application/vnd.api+json' }).end(body.slice(0, body.length >> 1)); return
        case 'cut':
          // the whole length announced, half of it sent, then the connection closed
          response.writeHead(200, { 'content-type': 'application/vnd.api+json', 'content-length': String(Buffer.byteLength(body)) })
          response.write(body.slice(0, body.length >> 1), () => request.socket.destroy())
          return
      }
      if (body === 'null') { notFound(response); return }
      response.writeHead(200, { 'content-type': 'application/vnd.api+json' }).end(body)
    }, options.delayMs ?? 2)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    from: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    faulted,
    get maxInFlight () { return state.maxInFlight },
    faults,
    close: async () => { server.closeAllConnections(); server.close(); await once(server, 'close') }
  }
}

const notFound = (response: ServerResponse) => response.writeHead(404, { 'content-type': 'application/vnd.api+json' }).end('{"errors":[{"status":"404","title":"not found"}]}')
