import type { FastifyInstance } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import { ApiError } from '../jsonapi/errors.js'
import { callerKey } from '../auth/caller.js'

/**
 * `max` requests per second per caller. Registered after authentication, so the budget is the
 * caller's own and a request without a valid credential has already been answered 401.
 */
export async function registerRateLimit (app: FastifyInstance, max: number): Promise<void> {
  await app.register(rateLimit, {
    max,
    timeWindow: 1000,
    keyGenerator: (request) => callerKey(request.caller),
    errorResponseBuilder: (_request, context) =>
      new ApiError(429, 'too many requests', `More than ${max} requests per second; retry in ${Math.ceil(context.ttl / 1000)} s.`)
  })
}
