import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import type { Connections } from './config.js'
import { JSONAPI_TYPE } from './jsonapi/errors.js'

/**
 * The standalone service's HTTP server, with the connection limits that keep any client from
 * holding the process's file descriptors (DESIGN §5):
 * - at most `max` connections at once; past it, a new connection is closed as soon as it is accepted;
 * - a request's headers must arrive within `headersTimeoutMs`, the whole request within
 *   `requestTimeoutMs` (Node checks every second), and a connection silent for `requestTimeoutMs`
 *   is closed — so idle and half-sent connections are reclaimed.
 */
export function createListener (connections: Connections, handler: (req: IncomingMessage, res: ServerResponse) => void): Server {
  const server = createServer({
    headersTimeout: Math.min(connections.headersTimeoutMs, connections.requestTimeoutMs),
    requestTimeout: connections.requestTimeoutMs,
    connectionsCheckingInterval: 1000
  }, handler)
  server.maxConnections = connections.max
  server.setTimeout(connections.requestTimeoutMs)
  // longer than a load balancer's idle timeout (60 s on most), as Fastify's default, so that the
  // balancer, not the service, closes an idle keep-alive connection
  server.keepAliveTimeout = Math.min(72_000, connections.requestTimeoutMs)
  return server
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them — malformed (400), headers too
 * large (431), a chunk extension too large (413), headers or body not sent in time (408) — are
 * answered with a JSON:API error document like every other error, and the connection closed.
 */
export function clientErrorHandler (error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy()
    return
  }
  const [status, title, detail] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'bad request', 'The request is not valid HTTP.']
  const body = JSON.stringify({ errors: [{ status: String(status), title, detail }] })
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${JSONAPI_TYPE}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
}

const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'request header fields too large', 'The request\'s headers are larger than this service accepts.'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'payload too large', 'A chunk extension is larger than this service accepts.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request timeout', 'The request did not arrive in time.']
}
