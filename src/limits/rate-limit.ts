import type { FastifyInstance } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import { ApiError } from '../jsonapi/errors.js'
import { callerKey } from '../auth/caller.js'
import type { Redis } from 'ioredis'

/**
 * `max` requests per second per caller, counted in Redis when a client is given (one budget
 * across replicas; when Redis fails, requests go through — the limit fails open), else in this
 * process. Registered after authentication, so the budget is the
 * caller's own and a request without a valid credential has already been answered 401.
 */
export async function registerRateLimit (app: FastifyInstance, max: number, redis?: Redis): Promise<void> {
  await app.register(rateLimit, {
    max,
    timeWindow: 1000,
    keyGenerator: (request) => callerKey(request.caller),
    ...(redis === undefined ? {} : { redis, nameSpace: 'team-access:rate-limit:', skipOnError: true }),
    errorResponseBuilder: (_request, context) =>
      new ApiError(429, 'too many requests', `More than ${max} requests per second; retry in ${Math.ceil(context.ttl / 1000)} s.`)
  })
}
