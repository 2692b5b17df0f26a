import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CreateMembershipBody, ListMembershipsQuery, MembershipParams, membershipResponses, MembershipShowQuery, OrganizationListQuery
} from '../../schemas/organization-memberships.js'
import { OrganizationParams } from '../../schemas/workspaces.js'
import { impossibleId } from '../db/ids.js'
import { paged, single } from '../jsonapi/document.js'
import { invalidAttribute, MANAGED_BY_MIRROR, notFound, type ApiError } from '../jsonapi/errors.js'
import { includesOf } from '../jsonapi/include.js'
import { firstPage, parsePage } from '../jsonapi/pagination.js'
import { managedBySeed } from '../directory/seed-file.js'
import type { MembershipRefusal, MembershipsRepository } from './memberships-repository.js'
import { includedOf, toMembershipResource, toOrganizationResource } from './memberships-serialize.js'

const tags = ['organization-memberships']
const security = [{ bearerToken: [] }]
const produces = ['application/vnd.api+json']
const consumes = ['application/vnd.api+json', 'application/json']

/**
 * The answer to a change the directory refused: 404 when the caller may not (as a missing
 * membership, team or organization), 422 for a rule. `pointer`: where in the body the memberships
 * or teams named are.
 */
export function refused (refusal: MembershipRefusal, pointer = '/data'): ApiError {
  switch (refusal.reason) {
    case 'hidden': return notFound()
    case 'taken': return invalidAttribute('The email already has a membership of this organization.', '/data/attributes/email')
    case 'teams': return invalidAttribute(`Team not found, or its members are not yours to change: ${refusal.teams.join(', ')}`, '/data/relationships/teams')
    case 'unknown': return invalidAttribute(`Organization membership not found: ${refusal.memberships.join(', ')}`, pointer)
    case 'last-owner': return invalidAttribute(`The owners team "${refusal.team}" must keep at least one member.`, pointer)
    case 'managed': {
      // a mirrored organization's people are all the mirror's: nothing about one person to add
      if (refusal.by === 'mirror') return invalidAttribute(MANAGED_BY_MIRROR, pointer)
      const source = refusal.by === 'seed' ? managedBySeed(refusal.userId) : refusal.by === 'host' ? 'managed by the host application' : 'managed by the API'
      const what = refusal.teams.length > 0 ? `the team memberships of ${refusal.person} (${refusal.teams.join(', ')})` : `the membership of ${refusal.person}`
      return invalidAttribute(`${source}: ${what}`, pointer)
    }
  }
}

/** `include` on memberships: `user`, `teams`. */
const includes = (include: string | undefined) => {
  const names = includesOf(include, ['user', 'teams'] as const)
  return { user: names.has('user'), teams: names.has('teams') }
}

/**
 * Organization memberships (DESIGN §14.2) and the caller's organizations (§14.3): list, invite,
 * show, end; `GET /organizations`. A membership the caller may not read or end answers the same
 * 404 as one that does not exist; writes pass the request's id on, for their audit events.
 */
const membershipRoutes: FastifyPluginAsyncTypebox<{ repository: MembershipsRepository, origin: (request: FastifyRequest) => string }> = async (app, { repository, origin }) => {
  const prefix = app.prefix

  app.get('/organizations/:organization/organization-memberships', {
    schema: { tags, operationId: 'listOrganizationMemberships', summary: "List an organization's memberships", params: OrganizationParams, querystring: ListMembershipsQuery, security, produces, response: membershipResponses.list, description: 'Every membership of the organization, oldest first, always paginated (default page 1, size 20), for its members. Emails: those who manage memberships (owners, manage-teams, manage-membership) read everyone’s, a member their own; any other email is null, and filter[email] and q never find a person by it. filter[email]: comma-separated, case-insensitive; filter[status]: active or invited; q: a substring of the username or email; include: user, teams. 404: no such organization, or the caller is no member of it.' }
  }, async (request) => {
    const { 'page[number]': number, 'page[size]': size, 'filter[email]': emails, 'filter[status]': status, q, include } = request.query
    const wanted = includes(include)
    const page = parsePage(number, size) ?? firstPage()
    const { organization } = request.params
    const filter = {
      emails: emails === undefined ? undefined : emails.split(',').map((email) => email.trim().toLowerCase()).filter((email) => email !== ''),
      status,
      q: q === undefined || q === '' ? undefined : q
    }
    const result = impossibleId(organization) ? undefined : await repository.list(request.caller, organization, page, filter)
    if (result === undefined) throw notFound()
    const params = Object.fromEntries(Object.entries({ 'filter[email]': emails, 'filter[status]': status, q, include }).filter(([, v]) => v !== undefined)) as Record<string, string>
    const document = paged(result.rows.map((row) => toMembershipResource(row, prefix)), page, result.total, {
      origin: origin(request), path: `${prefix}/organizations/${encodeURIComponent(organization)}/organization-memberships`, params
    })
    return wanted.user || wanted.teams ? { data: document.data, included: includedOf(result.rows, wanted, prefix), meta: document.meta, links: document.links } : document
  })

  app.post('/organizations/:organization/organization-memberships', {
    schema: { tags, operationId: 'createOrganizationMembership', summary: 'Invite a person by email', params: OrganizationParams, body: CreateMembershipBody, security, consumes, produces, response: membershipResponses.create, description: 'Owners (the owners team’s and the organization’s tokens included), manage-membership and manage-teams: active when a user has the email (case-insensitively), else invited — a user is made for the email (username null until the person arrives: a seed, the host or a mirror declaring a user with that email). relationships.teams: teams of the organization whose members the caller may change; an active person joins them now, an invited one on arrival. 422: the email already has a membership here, or a team is not one the caller may name. 404: no such organization, or the caller may not.' }
  }, async (request, reply) => {
    const { organization } = request.params
    const { attributes, relationships } = request.body.data
    const teams = (relationships?.teams?.data ?? []).map((team) => team.id)
    if (impossibleId(organization)) throw notFound()
    const result = await repository.create(request.caller, organization, attributes.email, teams, request.id)
    if ('refusal' in result) throw refused(result.refusal)
    const row = await repository.find(request.caller, result.id)
    if (row === undefined) throw notFound()
    return await reply.status(201).send(single(toMembershipResource(row, prefix)))
  })

  app.get('/organization-memberships/:id', {
    schema: { tags, operationId: 'showOrganizationMembership', summary: 'Show a membership', params: MembershipParams, querystring: MembershipShowQuery, security, produces, response: membershipResponses.show, description: 'The membership, for a member of its organization (the email as the list answers it); include: user, teams. 404 otherwise.' }
  }, async (request) => {
    const wanted = includes(request.query.include)
    const row = impossibleId(request.params.id) ? undefined : await repository.find(request.caller, request.params.id)
    if (row === undefined) throw notFound()
    return { ...single(toMembershipResource(row, prefix)), ...(wanted.user || wanted.teams ? { included: includedOf([row], wanted, prefix) } : {}) }
  })

  app.delete('/organization-memberships/:id', {
    schema: { tags, operationId: 'deleteOrganizationMembership', summary: 'End a membership', params: MembershipParams, security, produces, response: membershipResponses.destroy, description: 'The person leaves the organization: every team membership of theirs there goes (a remove_member event each), then the membership (organization-membership destroy), in one transaction; access stops from the next request. An invitation takes the user it made with it. Owners, manage-membership and manage-teams, where they may change the members of each of the person’s teams; else 404. 422: the owners team’s last member, or a membership (or one of the person’s team memberships) the seed file or the host manages.' }
  }, async (request, reply) => {
    const { id } = request.params
    const refusal = impossibleId(id) ? { reason: 'hidden' as const } : await repository.destroy(request.caller, id, request.id)
    if (refusal !== undefined) throw refused(refusal)
    return await reply.status(204).send()
  })

  app.get('/organizations', {
    schema: { tags, operationId: 'listOrganizations', summary: 'The organizations the caller belongs to', querystring: OrganizationListQuery, security, produces, response: membershipResponses.organizations, description: 'A user token: each organization it is an active member of; a team or an organization token: its own. By name, always paginated (default page 1, size 20); q: a substring of the name.' }
  }, async (request) => {
    const { 'page[number]': number, 'page[size]': size, q } = request.query
    const page = parsePage(number, size) ?? firstPage()
    const result = await repository.organizations(request.caller, page, q === undefined || q === '' ? undefined : q)
    if (result === undefined) throw notFound()
    return paged(result.rows.map((row) => toOrganizationResource(row, prefix)), page, result.total, {
      origin: origin(request), path: `${prefix}/organizations`, params: q === undefined ? {} : { q }
    })
  })
}

export default membershipRoutes
