import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Connections } from './config.js'

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
