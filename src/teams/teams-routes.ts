import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { CreateTeamBody, ListTeamsQuery, TeamParams, teamResponses, TeamShowQuery, UpdateTeamBody, type OrganizationAccessInput } from '../../schemas/teams.js'
import { OrganizationParams } from '../../schemas/workspaces.js'
import { impossibleId } from '../db/ids.js'
import { paged, single } from '../jsonapi/document.js'
import { invalidAttribute, notFound, type ApiError } from '../jsonapi/errors.js'
import { includesOf } from '../jsonapi/include.js'
import { firstPage, parsePage } from '../jsonapi/pagination.js'
import { ORGANIZATION_ACCESS_FLAGS, prerequisiteMessage, type OrganizationAccess, type OrganizationAccessFlag } from '../access/organization-access.js'
import { managedBySeed } from '../directory/seed-file.js'
import type { MembershipsRepository } from '../people/memberships-repository.js'
import { toMembershipResource } from '../people/memberships-serialize.js'
import type { Refusal, TeamsRepository, TeamView } from './teams-repository.js'
import { includedUsers, toTeamResource } from './teams-serialize.js'

const tags = ['teams']
const security = [{ bearerToken: [] }]
const produces = ['application/vnd.api+json']
const consumes = ['application/vnd.api+json', 'application/json']

/** The flags a body gives, by wire name; unknown members of `organization-access` are ignored. */
const givenFlags = (access: OrganizationAccessInput | undefined): Partial<OrganizationAccess> =>
  Object.fromEntries(ORGANIZATION_ACCESS_FLAGS.filter((flag) => typeof access?.[flag] === 'boolean').map((flag) => [flag, access![flag]]))

type TeamAttributesInput = { visibility?: 'secret' | 'organization', 'organization-access'?: OrganizationAccessInput, 'sso-team-id'?: string | null, 'allow-member-token-management'?: boolean }

/** The attributes kept only to be answered (the provider reads back what it wrote): an empty or null `sso-team-id` clears it. */
const keptAttributes = (attributes: Pick<TeamAttributesInput, 'sso-team-id' | 'allow-member-token-management'>) => ({
  ...(attributes['sso-team-id'] === undefined ? {} : { ssoTeamId: attributes['sso-team-id'] === '' ? null : attributes['sso-team-id'] }),
  ...(attributes['allow-member-token-management'] === undefined ? {} : { allowMemberTokenManagement: attributes['allow-member-token-management'] })
})

/** The answer to a write the repository refused: 404 when the caller may not (as a missing team), 422 for a rule. */
function refused (refusal: Refusal, name?: string, id = ''): ApiError {
  switch (refusal) {
    case 'prerequisite': return invalidAttribute(prerequisiteMessage(name as OrganizationAccessFlag), `/data/attributes/organization-access/${name ?? ''}`)
    case 'hidden': return notFound()
    case 'taken': return invalidAttribute('Name has already been taken', '/data/attributes/name')
    case 'seed': return invalidAttribute(managedBySeed(id), '/data')
    case 'owners': return invalidAttribute('The owners team cannot be deleted, renamed or given organization access.', '/data')
  }
}

/**
 * Teams (DESIGN §7, §9.3): the reads the Terraform provider makes, with `include=users` (§9.4) and
 * `include=organization-memberships` (§14.3: read by src/people/, the memberships' own module),
 * and create, update, delete. A team the caller may not see or may not change answers the same
 * 404 as one that does not exist; writes pass the request's id on, for their audit events.
 */
const teamRoutes: FastifyPluginAsyncTypebox<{ repository: TeamsRepository, memberships: MembershipsRepository, origin: (request: FastifyRequest) => string }> = async (app, { repository, memberships, origin }) => {
  const prefix = app.prefix
  /** `included` of team reads: the members (`users`), their organization memberships (`organization-memberships`, DESIGN §14.3). */
  const included = async (request: FastifyRequest, include: string | undefined, rows: TeamView[]) => {
    const wanted = includesOf(include, ['users', 'organization-memberships'] as const)
    if (wanted.size === 0) return undefined
    const users = wanted.has('users') ? includedUsers(rows) : []
    const ofTeams = wanted.has('organization-memberships') ? await memberships.ofTeams(request.caller, rows.map((row) => row.id)) : []
    return [...users, ...ofTeams.map((row) => toMembershipResource(row, prefix))]
  }

  app.get('/teams/:id', {
    schema: { tags, operationId: 'showTeam', summary: 'Show a team', params: TeamParams, querystring: TeamShowQuery, security, produces, response: teamResponses.show, description: 'The team: owners see every team of their organization; members the teams visible to the organization and the secret teams they belong to. 404 otherwise.' }
  }, async (request) => {
    includesOf(request.query.include, ['users', 'organization-memberships'] as const)
    const row = impossibleId(request.params.id) ? undefined : await repository.find(request.caller, request.params.id)
    if (row === undefined) throw notFound()
    const extra = await included(request, request.query.include, [row])
    return { ...single(toTeamResource(row, prefix)), ...(extra === undefined ? {} : { included: extra }) }
  })

  app.get('/organizations/:organization/teams', {
    schema: { tags, operationId: 'listTeams', summary: "List an organization's teams", params: OrganizationParams, querystring: ListTeamsQuery, security, produces, response: teamResponses.list, description: 'The teams of the organization the caller may see, by name, always paginated (default page 1, size 20); filter[names] keeps teams of exactly those comma-separated names (data "tfe_team"); filter[own]=true (an extension) only the teams the caller acts through. 404: no such organization, or the caller is no member of it.' }
  }, async (request) => {
    const { 'page[number]': number, 'page[size]': size, 'filter[names]': filter, 'filter[own]': own, include } = request.query
    includesOf(include, ['users', 'organization-memberships'] as const)
    const page = parsePage(number, size) ?? firstPage()
    const linksFrom = origin(request)
    const { organization } = request.params
    const names = filter === undefined ? undefined : filter.split(',').map((name) => name.trim()).filter((name) => name !== '')
    const result = impossibleId(organization) ? undefined : await repository.list(request.caller, organization, page, names, own === 'true')
    if (result === undefined) throw notFound()
    const document = paged(result.rows.map((row) => toTeamResource(row, prefix)), page, result.total, {
      origin: linksFrom, path: `${prefix}/organizations/${encodeURIComponent(organization)}/teams`, params: { ...(filter === undefined ? {} : { 'filter[names]': filter }), ...(own === undefined ? {} : { 'filter[own]': own }) }
    })
    const extra = await included(request, include, result.rows)
    return extra !== undefined ? { data: document.data, included: extra, meta: document.meta, links: document.links } : document
  })

  app.post('/organizations/:organization/teams', {
    schema: { tags, operationId: 'createTeam', summary: 'Create a team', params: OrganizationParams, body: CreateTeamBody, security, consumes, produces, response: teamResponses.create, description: 'Creates a team managed by the API: owners, and teams with manage-teams. Only owners may give organization-access flags. 422: the name is taken. 404: no such organization, or the caller may not.' }
  }, async (request, reply) => {
    const { organization } = request.params
    const { name, visibility, 'organization-access': access, ...rest } = request.body.data.attributes as TeamAttributesInput & { name: string }
    if (impossibleId(organization)) throw notFound()
    const result = await repository.create(request.caller, organization, { name, ...(visibility === undefined ? {} : { visibility }), organizationAccess: givenFlags(access), ...keptAttributes(rest) }, request.id)
    if ('refusal' in result) throw refused(result.refusal, result.name)
    return await reply.status(201).send(single(toTeamResource(result.team, prefix)))
  })

  app.patch('/teams/:id', {
    schema: { tags, operationId: 'updateTeam', summary: 'Update a team', params: TeamParams, body: UpdateTeamBody, security, consumes, produces, response: teamResponses.update, description: 'Changes the name, visibility or organization-access flags (merged: absent flags keep their value). Owners, and manage-teams teams holding every granting flag of the team; only owners change flags. 422: the name is taken, the seed file manages the team, or the owners team would be renamed or given flags.' }
  }, async (request) => {
    const { id } = request.params
    const { data } = request.body
    if (data.id !== undefined && data.id !== id) throw invalidAttribute('data.id does not match the id in the path', '/data/id')
    const { name, visibility, 'organization-access': access, ...rest } = (data.attributes ?? {}) as TeamAttributesInput & { name?: string }
    if (impossibleId(id)) throw notFound()
    const changes = { ...(name === undefined ? {} : { name }), ...(visibility === undefined ? {} : { visibility }), organizationAccess: givenFlags(access), ...keptAttributes(rest) }
    const result = await repository.update(request.caller, id, changes, request.id)
    if ('refusal' in result) throw refused(result.refusal, result.name, id)
    return single(toTeamResource(result.team, prefix))
  })

  app.delete('/teams/:id', {
    schema: { tags, operationId: 'deleteTeam', summary: 'Delete a team', params: TeamParams, security, produces, response: teamResponses.destroy, description: 'Deletes the team with its team access, memberships and tokens, as the host and a seed remove one: a remove_team audit event per team-access row, remove_member per membership, destroy per token (its secret revoked for good), then the team\'s destroy. 422: the owners team, or one the seed file manages.' }
  }, async (request, reply) => {
    const { id } = request.params
    const result = impossibleId(id) ? { refusal: 'hidden' as const } : await repository.destroy(request.caller, id, request.id)
    if (result.refusal !== undefined) throw refused(result.refusal, undefined, id)
    app.forgetTokens('revoked' in result ? result.revoked ?? [] : [])
    return await reply.status(204).send()
  })
}

export default teamRoutes
