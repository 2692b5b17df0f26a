import type { FastifyRequest } from 'fastify'
import { ApiError } from './errors.js'

/** `host[:port]`: a DNS name or IPv4 address, or a bracketed IPv6 address, and an optional port. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/**
 * Where absolute links start (DESIGN §4): the configured public URL's origin, else the request's
 * scheme and `Host` — only when that is a well-formed `host[:port]`: a forged Host is a 400,
 * never part of a link.
 */
export function linkOrigin (publicUrl: string | undefined): (request: FastifyRequest) => string {
  if (publicUrl !== undefined) {
    const origin = new URL(publicUrl).origin
    return () => origin
  }
  return (request) => {
    const host = request.headers.host ?? ''
    if (!HOST.test(host)) throw new ApiError(400, 'bad request', 'The Host header is not a valid host[:port].')
    return `${request.protocol}://${host}`
  }
}
