import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { ErrorDocument, PaginationLinks, PaginationMeta } from './jsonapi.js'
import { StringEnum } from './common.js'

// Authentication tokens of teams, organizations and users (DESIGN §9.5), as go-tfe's TeamTokens,
// OrganizationTokens and UserTokens send and read them.
// @see https://developer.hashicorp.com/terraform/cloud-docs/api-docs/team-tokens

const nullableTime = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description })

export const TokenResource = Type.Object({
  id: Type.String({ description: 'The token id (`at-…`).' }),
  type: Type.Literal('authentication-tokens', { description: 'Always `authentication-tokens`.' }),
  attributes: Type.Object({
    'created-at': Type.String({ format: 'date-time', description: 'When the token was made (ISO 8601, UTC).' }),
    'last-used-at': nullableTime('When the token was last used, to the minute (it is written at most once a minute); null if never.'),
    'expired-at': nullableTime('When the token stops being accepted; null: never.'),
    description: Type.Union([Type.String(), Type.Null()], { description: "The token's description; null for a team's or an organization's one description-less token." }),
    token: Type.Union([Type.String(), Type.Null()], { description: 'The secret: only in the answer that creates the token, null in every other answer. It is never shown again.' })
  }, { description: "The token's metadata (and, once, its secret)." }),
  relationships: Type.Object({
    'created-by': Type.Object({
      data: Type.Union([
        Type.Object({
          id: Type.String({ description: 'The user id (`user-…`).' }),
          type: Type.Literal('users', { description: 'Always `users`.' })
        }, { description: 'The user.' }),
        Type.Null()
      ], { description: 'The user who made the token through the API; null when no user made it (a seed, the host, a team or organization token).' })
    }, { description: 'Who made the token.' }),
    team: Type.Optional(Type.Object({
      data: Type.Object({
        id: Type.String({ description: 'The team id (`team-…`).' }),
        type: Type.Literal('teams', { description: 'Always `teams`.' })
      }, { description: 'The team.' })
    }, { description: "A team token's team (absent for organization and user tokens): the Terraform provider imports a team token by id through it." }))
  }, { description: 'Related resources.' })
}, { $id: 'AuthenticationToken', description: 'An authentication token.' })

export const TokenDocument = Type.Object({ data: TokenResource }, { description: 'One token.' })

export const TokenListDocument = Type.Object({
  data: Type.Array(TokenResource, { description: 'The tokens, oldest first.' }),
  meta: Type.Object({ pagination: PaginationMeta }, { description: 'Where this page stands.' }),
  links: PaginationLinks
}, { description: 'A page of tokens, oldest first.' })

export const UserResource = Type.Object({
  id: Type.String({ description: 'The user id (`user-…`).' }),
  type: Type.Literal('users', { description: 'Always `users`.' }),
  attributes: Type.Object({
    username: Type.String({ description: "The user's name." })
  }, { description: "The user's attributes." })
}, { $id: 'User', description: 'A user.' })

export const AccountDocument = Type.Object({ data: UserResource }, { description: 'The user behind the token.' })

/** `expired-at`: an RFC 3339 time with a zone, in the future; null or absent: the token never expires. */
const ExpiredAt = Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
  description: 'When the token stops being accepted (RFC 3339 with a zone, e.g. `2030-01-01T00:00:00Z`); must be in the future (422 otherwise). Absent or null: never.'
}))

/**
 * go-tfe sends these bodies from option structs without a primary field: `type` comes empty, or
 * not at all (older versions), and the attributes may be absent. Unknown members are ignored.
 */
const LenientType = Type.Optional(StringEnum(['authentication-tokens', ''], { description: '`authentication-tokens`; empty or absent is accepted (go-tfe sends it empty).' }))
const Ignored = Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Ignored.' }))

const body = <T extends TSchema>(attributes: T, required: boolean, description: string) => {
  const data = Type.Object({ type: LenientType, id: Type.Optional(Type.String({ description: 'Ignored.' })), attributes, relationships: Ignored, meta: Ignored }, { description: 'The token to make.' })
  return Type.Object({ data: required ? data : Type.Optional(data), meta: Ignored }, { description })
}

/** POST /teams/:id/authentication-token, /organizations/:org/authentication-token: absent, empty, `null` or a document. */
export const RegenerateTokenBody = Type.Union([
  Type.Null({ description: 'No options.' }),
  body(Type.Optional(Type.Object({ 'expired-at': ExpiredAt }, { description: 'The options.' })), false,
    'Options of the new token. The body may be absent, empty or `null` as well.')
], { description: 'Options of the new token: absent, empty, `null`, or a JSON:API document.' })

/** POST /teams/:id/authentication-tokens: a description is required. */
export const CreateTeamTokenBody = body(Type.Object({
  description: Type.String({ minLength: 1, maxLength: 255, description: 'What the token is for; unique among the team\'s tokens (422 otherwise).' }),
  'expired-at': ExpiredAt
}, { description: 'The token to make.' }), true, 'One more token of the team, with a description.')

/** POST /users/:id/authentication-tokens: description optional. */
export const CreateUserTokenBody = Type.Union([
  Type.Null({ description: 'No options.' }),
  body(Type.Optional(Type.Object({
    description: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()], { description: 'What the token is for (optional).' })),
    'expired-at': ExpiredAt
  }, { description: 'The options.' })), false, 'A new token of the user.')
], { description: 'A new token of the user: absent, empty, `null`, or a JSON:API document.' })

export const TokenParams = Type.Object({ id: Type.String({ description: 'The token id (`at-…`).' }) })
export const UserParams = Type.Object({ id: Type.String({ description: 'The user id (`user-…`).' }) })
export const OrganizationTokenQuery = Type.Object({
  token: Type.Optional(Type.String({ description: 'A kind of organization token (go-tfe sends `audit-trails`). Only the organization token is served here: any value answers 404 (see docs/CONTRACT.md).' }))
})
export const TokenListQuery = Type.Object({
  'page[number]': Type.Optional(Type.String({ description: 'Page number, from 1 (default 1).' })),
  'page[size]': Type.Optional(Type.String({ description: 'Per page, 1 to 100 (default 20).' }))
})

const errors = { 401: ErrorDocument, 404: ErrorDocument, 503: ErrorDocument }
export const tokenResponses: Record<'create' | 'show' | 'list' | 'remove' | 'account', Record<number, TSchema>> = {
  create: { 201: TokenDocument, 400: ErrorDocument, ...errors, 415: ErrorDocument, 422: ErrorDocument },
  show: { 200: TokenDocument, ...errors },
  list: { 200: TokenListDocument, ...errors, 422: ErrorDocument },
  remove: { 204: Type.Null({ description: 'Revoked.' }), ...errors },
  account: { 200: AccountDocument, ...errors }
}

export type TokenResource = Static<typeof TokenResource>
export type RegenerateTokenBody = Static<typeof RegenerateTokenBody>
export type CreateTeamTokenBody = Static<typeof CreateTeamTokenBody>
export type CreateUserTokenBody = Static<typeof CreateUserTokenBody>
