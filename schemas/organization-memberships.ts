import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { StringEnum, Visibility } from './common.js'
import { ErrorDocument, PaginationLinks, PaginationMeta } from './jsonapi.js'
import { OrganizationResource } from './projects.js'

// Organization memberships (DESIGN §14.2, §14.3): HCP Terraform's Organization Memberships API
// and a team's members by membership, as go-tfe sends them; and the caller's organizations.
// @see https://developer.hashicorp.com/terraform/cloud-docs/api-docs/organization-memberships
// @see https://developer.hashicorp.com/terraform/cloud-docs/api-docs/team-members

/** A person's email: one `@` between two parts without spaces, at most 254 characters; unique case-insensitively. */
export const emailOf = (description: string) => Type.String({ minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$', description })
export const Email = emailOf('An email address (unique among users, case-insensitively).')

export const MembershipStatus = StringEnum(['active', 'invited'],
  { description: '`active`: the person is a member; `invited`: the person has not arrived yet (holds nothing until then).' })

const TeamIdentifier = Type.Object({ id: Type.String({ description: 'The team id (`team-…`).' }), type: Type.Literal('teams') })
const Identifier = (type: string, description: string) => Type.Object({ id: Type.String({ description }), type: Type.Literal(type) })

export const MembershipResource = Type.Object({
  id: Type.String({ description: 'The membership id (`ou-…`).' }),
  type: Type.Literal('organization-memberships'),
  attributes: Type.Object({
    status: MembershipStatus,
    email: Type.Union([Type.String(), Type.Null()], { description: "The person's email — null when the caller may not read it (only those who manage the organization's memberships read others'; a member reads their own), or when the user has none." }),
    'created-at': Type.String({ format: 'date-time', description: 'When the membership was made (ISO 8601, UTC).' })
  }),
  relationships: Type.Object({
    organization: Type.Object({ data: Identifier('organizations', "The organization's name.") }, { description: 'The organization.' }),
    user: Type.Object({ data: Identifier('users', 'The user id (`user-…`).') }, { description: 'The person: always a user — an invitation made one for its email (username null until the person arrives).' }),
    teams: Type.Object({ data: Type.Array(TeamIdentifier) }, { description: "The person's teams in the organization (an invitation: the teams it was given), those the caller may read." })
  }),
  links: Type.Object({ self: Type.String({ description: 'The membership.' }) })
}, { $id: 'OrganizationMembership', description: "A person's membership of an organization." })

/** A user as a membership includes it: its username (null until an invited person arrives) and its email, where the caller may read it. */
export const MemberUserResource = Type.Object({
  id: Type.String({ description: 'The user id (`user-…`).' }),
  type: Type.Literal('users'),
  attributes: Type.Object({
    username: Type.Union([Type.String(), Type.Null()], { description: 'The username; null for the user an invitation made, until the person arrives.' }),
    email: Type.Union([Type.String(), Type.Null()], { description: 'The email, where the caller may read it (as the membership’s); else null.' })
  })
}, { $id: 'MemberUser', description: 'A user, as a membership includes it.' })

/** A team as a membership includes it: its name and visibility (the whole team: `GET /teams/:id`). */
export const MemberTeamResource = Type.Object({
  id: Type.String({ description: 'The team id (`team-…`).' }),
  type: Type.Literal('teams'),
  attributes: Type.Object({ name: Type.String(), visibility: Visibility }),
  links: Type.Object({ self: Type.String({ description: 'The team.' }) })
}, { $id: 'MemberTeam', description: 'A team, as a membership includes it.' })

const Included = Type.Optional(Type.Array(Type.Union([MemberUserResource, MemberTeamResource]), { description: 'With `include=user`, `include=teams` or both: the users and teams of the memberships, once each.' }))

export const MembershipDocument = Type.Object({ data: MembershipResource, included: Included }, { description: 'One membership.' })
export const MembershipListDocument = Type.Object({
  data: Type.Array(MembershipResource),
  included: Included,
  meta: Type.Object({ pagination: PaginationMeta }),
  links: PaginationLinks
}, { description: 'A page of memberships, oldest first.' })

const MembershipInclude = Type.Optional(Type.String({ description: 'Comma-separated: `user`, `teams`; empty includes nothing; anything else is 400.' }))
const page = {
  'page[number]': Type.Optional(Type.String({ description: 'Page number, from 1 (default 1).' })),
  'page[size]': Type.Optional(Type.String({ description: 'Per page, 1 to 100 (default 20).' }))
}

export const MembershipParams = Type.Object({ id: Type.String({ description: 'The membership id (`ou-…`).' }) })
export const MembershipShowQuery = Type.Object({ include: MembershipInclude })
export const ListMembershipsQuery = Type.Object({
  ...page,
  include: MembershipInclude,
  'filter[email]': Type.Optional(Type.String({ description: 'Comma-separated emails, case-insensitive: only the memberships of those people whose email the caller may read.' })),
  'filter[status]': Type.Optional(MembershipStatus),
  q: Type.Optional(Type.String({ description: 'A substring, case-insensitive, of the username or (where the caller may read it) the email.' }))
})
export const TeamMembershipsQuery = Type.Object({ ...page })

/** JSON:API's own `meta` member and members this service does not use are accepted and ignored. */
const Ignored = Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Ignored.' }))

export const CreateMembershipBody = Type.Object({
  data: Type.Object({
    type: Type.Optional(StringEnum(['organization-memberships'], { description: 'The resource type.' })),
    attributes: Type.Object({ email: Email }, { additionalProperties: true, description: 'Other attributes are accepted and ignored.' }),
    relationships: Type.Optional(Type.Object({
      teams: Type.Optional(Type.Object({
        data: Type.Array(Type.Object({ type: StringEnum(['teams']), id: Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\u0000]+$' }) }, { additionalProperties: true }),
          { maxItems: 100, description: 'Teams of the organization the person joins (an invitation: once they arrive); each one whose members the caller may change.' })
      }, { additionalProperties: true }))
    }, { additionalProperties: true })),
    meta: Ignored
  }, { additionalProperties: false }),
  meta: Ignored
}, { additionalProperties: false, description: 'Invite a person by email: `email` required, `relationships.teams` optional.' })

export const TeamMembershipsBody = Type.Object({
  data: Type.Array(Type.Object({
    type: StringEnum(['organization-memberships'], { description: 'The resource type.' }),
    id: Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\u0000]+$', description: 'The membership id (`ou-…`).' })
  }, { additionalProperties: true, description: 'A membership of the team’s organization.' }), { minItems: 1, maxItems: 100, description: 'The memberships to add or remove.' }),
  meta: Ignored
}, { additionalProperties: false, description: 'Organization memberships (go-tfe’s TeamMembers with OrganizationMembershipIDs).' })

/** An organization as `GET /organizations` lists it: as `GET /organizations/:org` answers it. */
export const OrganizationListQuery = Type.Object({
  ...page,
  q: Type.Optional(Type.String({ description: 'A substring, case-insensitive, of the name.' }))
})

export const OrganizationListDocument = Type.Object({
  data: Type.Array(OrganizationResource),
  meta: Type.Object({ pagination: PaginationMeta }),
  links: PaginationLinks
}, { description: 'A page of the organizations the caller belongs to, by name.' })

const e = ErrorDocument
export const membershipResponses: Record<'list' | 'show' | 'create' | 'destroy' | 'team' | 'teamList' | 'organizations', Record<number, TSchema>> = {
  organizations: { 200: OrganizationListDocument, 401: e, 422: e, 503: e },
  list: { 200: MembershipListDocument, 400: e, 401: e, 404: e, 422: e, 503: e },
  show: { 200: MembershipDocument, 400: e, 401: e, 404: e, 503: e },
  create: { 201: MembershipDocument, 400: e, 401: e, 404: e, 415: e, 422: e, 503: e },
  destroy: { 204: Type.Null({ description: 'The person left the organization, with every team membership there; no body.' }), 401: e, 404: e, 422: e, 503: e },
  team: { 204: Type.Null({ description: 'Done, no body (adding a present member or removing an absent one is not an error).' }), 400: e, 401: e, 404: e, 415: e, 422: e, 503: e },
  teamList: { 200: Type.Object({ data: Type.Array(MembershipResource), meta: Type.Object({ pagination: PaginationMeta }), links: PaginationLinks }, { description: "A page of the team's memberships, oldest first." }), 401: e, 404: e, 422: e, 503: e }
}

export type MembershipResource = Static<typeof MembershipResource>
export type MemberUserResource = Static<typeof MemberUserResource>
export type MemberTeamResource = Static<typeof MemberTeamResource>
export type MembershipStatus = Static<typeof MembershipStatus>
