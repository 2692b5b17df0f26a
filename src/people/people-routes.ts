import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { MembershipsRepository } from './memberships-repository.js'
import membershipRoutes from './memberships-routes.js'
import teamMembershipRoutes from './team-memberships-routes.js'

/**
 * The routes of people (DESIGN §14.2, §14.3): organization memberships and the caller's
 * organizations (memberships-routes.ts), a team's members by membership (team-memberships-routes.ts).
 */
const peopleRoutes: FastifyPluginAsyncTypebox<{ repository: MembershipsRepository, origin: (request: FastifyRequest) => string }> = async (app, options) => {
  await app.register(membershipRoutes, options)
  await app.register(teamMembershipRoutes, options)
}

export default peopleRoutes
