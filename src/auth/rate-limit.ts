import type { FastifyInstance } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import { ApiError } from '../jsonapi/errors.js'
import type { Caller } from './caller.js'

/** The budget's key: the user, team or organization behind the request (DESIGN §5), whichever token it used. */
const keyOf = (caller: Caller): string =>
  caller.kind === 'organization' ? `organization:${caller.organizationId}` : caller.kind === 'team' ? `team:${caller.teamId}` : `user:${caller.userId}`

/**
 * `max` requests per second per caller. Registered after authentication, so the budget is the
 * caller's own and a request without a valid credential has already been answered 401.
 */
export async function registerRateLimit (app: FastifyInstance, max: number): Promise<void> {
  await app.register(rateLimit, {
    max,
    timeWindow: 1000,
    keyGenerator: (request) => keyOf(request.caller),
    errorResponseBuilder: (_request, context) =>
      new ApiError(429, 'too many requests', `More than ${max} requests per second; retry in ${Math.ceil(context.ttl / 1000)} s.`)
  })
}
