import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CreateTeamTokenBody, CreateUserTokenBody, OrganizationTokenQuery, RegenerateTokenBody, TokenListQuery, TokenParams,
  tokenResponses, UserParams
} from '../../schemas/tokens.js'
import { TeamParams } from '../../schemas/teams.js'
import { OrganizationParams } from '../../schemas/workspaces.js'
import { impossibleId } from '../db/ids.js'
import { paged, single } from '../jsonapi/document.js'
import { invalidAttribute, notFound } from '../jsonapi/errors.js'
import { firstPage, parsePage } from '../jsonapi/pagination.js'
import type { TokensRepository, CreateResult, Subject } from './tokens-repository.js'
import { toTokenResource } from './tokens-serialize.js'

const tags = ['tokens']
const security = [{ bearerToken: [] }]
const produces = ['application/vnd.api+json']
const consumes = ['application/vnd.api+json', 'application/json']

const who = {
  team: 'Owners of the organization (a member of the owners team, the owners team\'s token, the organization token) and teams with manage-teams — of a team that is not the owners team and whose manage-workspaces, read-workspaces, manage-teams and manage-membership the caller holds itself. Anyone else: 404, as for a team that does not exist.',
  organization: 'Owners acting through the owners team: a member\'s user token or the owners team\'s token (not an organization token). Anyone else: 404.',
  user: 'That user alone, with one of its user tokens; anyone else: 404, as for a user that does not exist.'
}

/** `expired-at` of a body: null when absent; 422 when it is not in the future. */
function expiry (value: string | null | undefined): Date | null {
  if (value === undefined || value === null) return null
  const at = new Date(value)
  if (Number.isNaN(at.getTime()) || at.getTime() <= Date.now()) throw invalidAttribute('Expired at must be in the future', '/data/attributes/expired-at')
  return at
}

/**
 * Authentication tokens (DESIGN §9.5): a team's (go-tfe TeamTokens), an organization's
 * (OrganizationTokens), a user's own (UserTokens), one by id, and the user behind a user token
 * (Users.ReadCurrent). Whoever may not manage a subject's tokens gets the 404 of one that does not
 * exist. The secret of a new token is answered once, by its create.
 */
const tokenRoutes: FastifyPluginAsyncTypebox<{ repository: TokensRepository, origin: (request: FastifyRequest) => string }> = async (app, { repository, origin }) => {
  const prefix = app.prefix

  const created = (reply: FastifyReply, result: CreateResult) => {
    app.forgetTokens(result.revoked ?? [])
    if (result.created !== undefined) return reply.status(201).send(single(toTokenResource(result.created, result.secret)))
    if (result.taken) throw invalidAttribute('Description has already been taken', '/data/attributes/description')
    throw notFound()
  }

  // ── a team's tokens ──────────────────────────────────────────────────────
  app.post('/teams/:id/authentication-token', {
    schema: { tags, operationId: 'regenerateTeamToken', summary: "Create (regenerate) a team's token", params: TeamParams, body: RegenerateTokenBody, security, consumes, produces, response: tokenResponses.create, description: `A new description-less token of the team; the one made before it through the API, if any, is revoked at once (it answers 401 from its next request). The secret is in this answer only. Who: ${who.team}` }
  }, async (request, reply) => {
    const at = expiry(request.body?.data?.attributes?.['expired-at'])
    if (impossibleId(request.params.id)) throw notFound()
    return created(reply, await repository.regenerate(request.caller, { kind: 'team', teamId: request.params.id }, at, request.id))
  })

  app.post('/teams/:id/authentication-tokens', {
    schema: { tags, operationId: 'createTeamToken', summary: 'Create one more team token', params: TeamParams, body: CreateTeamTokenBody, security, consumes, produces, response: tokenResponses.create, description: `One more token of the team, with a description unique among its tokens (422 otherwise). The secret is in this answer only. Who: ${who.team}` }
  }, async (request, reply) => {
    const { description, 'expired-at': expiredAt } = request.body.data.attributes
    const at = expiry(expiredAt)
    if (impossibleId(request.params.id)) throw notFound()
    return created(reply, await repository.create(request.caller, { kind: 'team', teamId: request.params.id }, description, at, request.id))
  })

  app.get('/teams/:id/authentication-token', {
    schema: { tags, operationId: 'showTeamToken', summary: "Show a team's token", params: TeamParams, security, produces, response: tokenResponses.show, description: `The team's description-less token made through the API (token: null); 404 while it has none. Who: ${who.team}` }
  }, async (request) => {
    const row = impossibleId(request.params.id) ? undefined : await repository.findSubjectToken(request.caller, { kind: 'team', teamId: request.params.id })
    if (row === undefined) throw notFound()
    return single(toTokenResource(row))
  })

  app.get('/teams/:id/authentication-tokens', {
    schema: { tags, operationId: 'listTeamTokens', summary: "List a team's tokens", params: TeamParams, querystring: TokenListQuery, security, produces, response: tokenResponses.list, description: `Every token of the team (a seed's included), oldest first, always paginated (default page 1, size 20); token: null. Who: ${who.team}` }
  }, async (request) => {
    return await list(request, { kind: 'team', teamId: request.params.id }, `/teams/${encodeURIComponent(request.params.id)}/authentication-tokens`)
  })

  app.delete('/teams/:id/authentication-token', {
    schema: { tags, operationId: 'revokeTeamToken', summary: "Revoke a team's token", params: TeamParams, security, produces, response: tokenResponses.remove, description: `Revokes the team's description-less token made through the API: it answers 401 from its next request, and no seed brings it back. 404 while there is none. Who: ${who.team}` }
  }, async (request, reply) => {
    const revoked = impossibleId(request.params.id) ? [] : await repository.revokeSubjectToken(request.caller, { kind: 'team', teamId: request.params.id }, request.id)
    if (revoked.length === 0) throw notFound()
    app.forgetTokens(revoked)
    return await reply.status(204).send()
  })

  // ── an organization's token ──────────────────────────────────────────────
  const organizationSubject = ({ params, query }: { params: { organization: string }, query: { token?: string } }): Subject & { kind: 'organization' } => {
    // the audit-trails token (go-tfe's `?token=audit-trails`) and any other kind: not served here
    if (query.token !== undefined || impossibleId(params.organization)) throw notFound()
    return { kind: 'organization', organization: params.organization }
  }

  app.post('/organizations/:organization/authentication-token', {
    schema: { tags, operationId: 'regenerateOrganizationToken', summary: "Create (regenerate) the organization's token", params: OrganizationParams, querystring: OrganizationTokenQuery, body: RegenerateTokenBody, security, consumes, produces, response: tokenResponses.create, description: `A new organization token; the one made before it through the API, if any, is revoked at once. Tokens a seed declares are other tokens (revoked by id). The secret is in this answer only. Who: ${who.organization}` }
  }, async (request, reply) => {
    const at = expiry(request.body?.data?.attributes?.['expired-at'])
    return created(reply, await repository.regenerate(request.caller, organizationSubject(request), at, request.id))
  })

  app.get('/organizations/:organization/authentication-token', {
    schema: { tags, operationId: 'showOrganizationToken', summary: "Show the organization's token", params: OrganizationParams, querystring: OrganizationTokenQuery, security, produces, response: tokenResponses.show, description: `The organization token made through the API (token: null); 404 while there is none. Who: ${who.organization}` }
  }, async (request) => {
    const row = await repository.findSubjectToken(request.caller, organizationSubject(request))
    if (row === undefined) throw notFound()
    return single(toTokenResource(row))
  })

  app.delete('/organizations/:organization/authentication-token', {
    schema: { tags, operationId: 'revokeOrganizationToken', summary: "Revoke the organization's token", params: OrganizationParams, querystring: OrganizationTokenQuery, security, produces, response: tokenResponses.remove, description: `Revokes the organization token made through the API: 401 from its next request. 404 while there is none. Who: ${who.organization}` }
  }, async (request, reply) => {
    const revoked = await repository.revokeSubjectToken(request.caller, organizationSubject(request), request.id)
    if (revoked.length === 0) throw notFound()
    app.forgetTokens(revoked)
    return await reply.status(204).send()
  })

  // ── a user's own tokens ──────────────────────────────────────────────────
  app.get('/users/:id/authentication-tokens', {
    schema: { tags, operationId: 'listUserTokens', summary: "List a user's tokens", params: UserParams, querystring: TokenListQuery, security, produces, response: tokenResponses.list, description: `The user's tokens, oldest first, always paginated (default page 1, size 20); token: null. Who: ${who.user}` }
  }, async (request) => {
    return await list(request, { kind: 'user', userId: request.params.id }, `/users/${encodeURIComponent(request.params.id)}/authentication-tokens`)
  })

  app.post('/users/:id/authentication-tokens', {
    schema: { tags, operationId: 'createUserToken', summary: 'Create a user token', params: UserParams, body: CreateUserTokenBody, security, consumes, produces, response: tokenResponses.create, description: `A new token of the user, with an optional description and expiry. The secret is in this answer only. Who: ${who.user}` }
  }, async (request, reply) => {
    const attributes = request.body?.data?.attributes
    const at = expiry(attributes?.['expired-at'])
    if (impossibleId(request.params.id)) throw notFound()
    return created(reply, await repository.create(request.caller, { kind: 'user', userId: request.params.id }, attributes?.description ?? null, at, request.id))
  })

  // ── one token by id ──────────────────────────────────────────────────────
  app.get('/authentication-tokens/:id', {
    schema: { tags, operationId: 'showToken', summary: 'Show a token', params: TokenParams, security, produces, response: tokenResponses.show, description: "One token of any kind (token: null), to whoever manages its subject: a team's as for the team's tokens, an organization's as for the organization token, a user's to that user. 404 otherwise." }
  }, async (request) => {
    const row = impossibleId(request.params.id) ? undefined : await repository.findById(request.caller, request.params.id)
    if (row === undefined) throw notFound()
    return single(toTokenResource(row))
  })

  app.delete('/authentication-tokens/:id', {
    schema: { tags, operationId: 'revokeToken', summary: 'Revoke a token', params: TokenParams, security, produces, response: tokenResponses.remove, description: 'Revokes one token of any kind — one a seed declares included (DESIGN §9.1): 401 from its next request, and no seed brings it back. Who: whoever manages its subject; 404 otherwise.' }
  }, async (request, reply) => {
    const revoked = impossibleId(request.params.id) ? [] : await repository.revokeById(request.caller, request.params.id, request.id)
    if (revoked.length === 0) throw notFound()
    app.forgetTokens(revoked)
    return await reply.status(204).send()
  })

  // ── the user behind a user token ─────────────────────────────────────────
  app.get('/account/details', {
    schema: { tags, operationId: 'showAccount', summary: 'The user behind the token', security, produces, response: tokenResponses.account, description: "The user a user token belongs to (go-tfe's Users.ReadCurrent). A team or organization token: 404." }
  }, async (request) => {
    const user = await repository.account(request.caller)
    if (user === undefined) throw notFound()
    return single({ id: user.id, type: 'users' as const, attributes: { username: user.username } })
  })

  async function list (request: FastifyRequest & { query: { 'page[number]'?: string, 'page[size]'?: string } }, subject: Subject & { kind: 'team' | 'user' }, path: string) {
    const page = parsePage(request.query['page[number]'], request.query['page[size]']) ?? firstPage()
    const id = subject.kind === 'team' ? subject.teamId : subject.userId
    const result = impossibleId(id) ? undefined : await repository.list(request.caller, subject, page)
    if (result === undefined) throw notFound()
    return paged(result.rows.map((row) => toTokenResource(row)), page, result.total, { origin: origin(request), path: `${prefix}${path}`, params: {} })
  }
}

export default tokenRoutes
