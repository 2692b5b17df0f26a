import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { membershipResponses, TeamMembershipsBody, TeamMembershipsQuery } from '../../schemas/organization-memberships.js'
import { TeamParams } from '../../schemas/teams.js'
import { impossibleId } from '../db/ids.js'
import { paged } from '../jsonapi/document.js'
import { notFound } from '../jsonapi/errors.js'
import { firstPage, parsePage } from '../jsonapi/pagination.js'
import type { MembershipsRepository } from './memberships-repository.js'
import { refused } from './memberships-routes.js'
import { toMembershipResource } from './memberships-serialize.js'

const tags = ['teams']
const security = [{ bearerToken: [] }]
const produces = ['application/vnd.api+json']
const consumes = ['application/vnd.api+json', 'application/json']

const description = (what: string) => `${what} Owners, manage-teams and manage-membership members, on a team they see and whose granting flags they hold (as by username); anyone else, or a team that is not there: 404. 422: an id that names no membership of the team’s organization`

/**
 * A team's members by organization membership (DESIGN §14.3), as go-tfe's TeamMembers sends them
 * with OrganizationMembershipIDs and the Terraform provider's `tfe_team_organization_member(s)`
 * read them: an active membership's person joins or leaves the team; an invited one's team waits
 * for the person. A refusal for "may not" is the 404 of a missing team; the rules' are 422.
 */
const teamMembershipRoutes: FastifyPluginAsyncTypebox<{ repository: MembershipsRepository, origin: (request: FastifyRequest) => string }> = async (app, { repository, origin }) => {
  const prefix = app.prefix
  const path = '/teams/:id/relationships/organization-memberships'
  /** A POST (`add`) or DELETE of the body's memberships: 204, or the refusal. */
  const change = (add: boolean) => async (request: FastifyRequest<{ Params: Static<typeof TeamParams>, Body: Static<typeof TeamMembershipsBody> }>, reply: FastifyReply) => {
    const { id } = request.params
    if (impossibleId(id)) throw notFound()
    const refusal = await repository.changeTeam(request.caller, id, request.body.data.map((m) => m.id), add, request.id)
    if (refusal !== undefined) throw refused(refusal)
    return await reply.status(204).send()
  }

  app.post(path, {
    schema: { tags, operationId: 'addTeamOrganizationMemberships', summary: 'Add organization memberships to a team', params: TeamParams, body: TeamMembershipsBody, security, consumes, produces, response: membershipResponses.team, description: description('Adds the memberships: an active one’s person joins now (an API-managed team membership, add_member), an invited one’s on arrival; present ones are not an error.') + '.' }
  }, change(true))

  app.delete(path, {
    schema: { tags, operationId: 'removeTeamOrganizationMemberships', summary: 'Remove organization memberships from a team', params: TeamParams, body: TeamMembershipsBody, security, consumes, produces, response: membershipResponses.team, description: description('Removes the memberships from the team (remove_member); the person stays a member of the organization; absent ones are not an error.') + ', a team membership the seed file manages, or the owners team’s last member.' }
  }, change(false))

  app.get(path, {
    schema: { tags, operationId: 'listTeamOrganizationMemberships', summary: "A team's organization memberships", params: TeamParams, querystring: TeamMembershipsQuery, security, produces, response: membershipResponses.teamList, description: 'The memberships of the team’s members and the invitations given the team, oldest first, always paginated (default page 1, size 20), for those who read the team (the newest Terraform provider’s tfe_team_organization_member(s) read them so). 404: no such team, or one the caller may not read.' }
  }, async (request) => {
    const { id } = request.params
    const page = parsePage(request.query['page[number]'], request.query['page[size]']) ?? firstPage()
    const result = impossibleId(id) ? undefined : await repository.ofTeam(request.caller, id, page)
    if (result === undefined) throw notFound()
    return paged(result.rows.map((row) => toMembershipResource(row, prefix)), page, result.total, {
      origin: origin(request), path: `${prefix}/teams/${encodeURIComponent(id)}/relationships/organization-memberships`, params: {}
    })
  })
}

export default teamMembershipRoutes
