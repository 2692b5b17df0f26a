import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { TeamMembersBody, TeamParams, teamResponses } from '../../schemas/teams.js'
import { impossibleId } from '../db/ids.js'
import { invalidAttribute, notFound } from '../jsonapi/errors.js'
import { managedBySeed } from '../directory/seed-file.js'
import type { MembersRefusal, TeamMembersRepository } from './team-members-repository.js'

const tags = ['teams']
const security = [{ bearerToken: [] }]
const produces = ['application/vnd.api+json']
const consumes = ['application/vnd.api+json', 'application/json']

const description = (what: string) => `${what} Owners, manage-teams and manage-membership members, on a team they see and whose granting flags they hold; anyone else, or a team that is not there: 404. 422: a username that names no user`

/**
 * A team's members (DESIGN §9.4), as go-tfe's TeamMembers sends them: users by username in
 * `data`. A refusal for "may not" is the 404 of a missing team; the rules' refusals are 422.
 */
const teamMemberRoutes: FastifyPluginAsyncTypebox<{ repository: TeamMembersRepository }> = async (app, { repository }) => {
  const answer = (refusal: MembersRefusal | undefined, id: string) => {
    if (refusal === undefined) return
    switch (refusal.reason) {
      case 'hidden': throw notFound()
      case 'unknown': throw invalidAttribute(`User not found: ${refusal.users.join(', ')}`, '/data')
      case 'seed': throw invalidAttribute(`${managedBySeed(id)}: the membership of ${refusal.users.join(', ')}`, '/data')
      case 'last-owner': throw invalidAttribute('The owners team must keep at least one member.', '/data')
    }
  }

  app.post('/teams/:id/relationships/users', {
    schema: { tags, operationId: 'addTeamMembers', summary: 'Add users to a team', params: TeamParams, body: TeamMembersBody, security, consumes, produces, response: teamResponses.members, description: description('Adds the users, by username (API-managed memberships; present members are not an error).') + '.' }
  }, async (request, reply) => {
    const { id } = request.params
    if (impossibleId(id)) throw notFound()
    answer(await repository.add(request.caller, id, request.body.data.map((user) => user.id), request.id), id)
    return await reply.status(204).send()
  })

  app.delete('/teams/:id/relationships/users', {
    schema: { tags, operationId: 'removeTeamMembers', summary: 'Remove users from a team', params: TeamParams, body: TeamMembersBody, security, consumes, produces, response: teamResponses.members, description: description('Removes the users, by username (absent members are not an error).') + ', a membership the seed file manages, or the owners team’s last member.' }
  }, async (request, reply) => {
    const { id } = request.params
    if (impossibleId(id)) throw notFound()
    answer(await repository.remove(request.caller, id, request.body.data.map((user) => user.id), request.id), id)
    return await reply.status(204).send()
  })
}

export default teamMemberRoutes
