import type { FastifyRequest } from 'fastify'

/** The scheme and host absolute links start with: the request's own. */
export function originOf (request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`
}
