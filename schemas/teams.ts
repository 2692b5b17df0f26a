import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { StringEnum, Visibility } from './common.js'
import { ErrorDocument, PaginationLinks, PaginationMeta } from './jsonapi.js'
import { OrganizationRelationship, PageQuery } from './workspaces.js'
import { MembershipResource } from './organization-memberships.js'
import { ORGANIZATION_ACCESS_DESCRIPTIONS, ORGANIZATION_ACCESS_FLAGS, type OrganizationAccessFlag } from './organization-access.js'

export { ORGANIZATION_ACCESS_DESCRIPTIONS }

// Teams (DESIGN §7, §9.3, §9.4): the reads the Terraform provider makes, and HCP Terraform's
// Teams and Team Membership APIs as go-tfe sends them.
// @see https://developer.hashicorp.com/terraform/cloud-docs/api-docs/teams
// @see https://developer.hashicorp.com/terraform/cloud-docs/api-docs/team-members

type Flag = OrganizationAccessFlag
const flags = ORGANIZATION_ACCESS_FLAGS
const flagSchemas = <T extends TSchema>(wrap: (description: string) => T) =>
  Object.fromEntries(flags.map((flag) => [flag, wrap(ORGANIZATION_ACCESS_DESCRIPTIONS[flag])])) as Record<Flag, T>

export const OrganizationAccess = Type.Object(flagSchemas((description) => Type.Boolean({ description })),
  { description: 'Organization-level permissions of the team: every flag, false unless given.' })

const UserIdentifier = Type.Object({
  id: Type.String({ description: 'The user id (`user-…`).' }),
  type: Type.Literal('users')
}, { description: 'A member of the team.' })

export const TeamResource = Type.Object({
  id: Type.String({ description: 'The team id (`team-…`).' }),
  type: Type.Literal('teams'),
  attributes: Type.Object({
    name: Type.String({ description: 'Unique within the organization.' }),
    visibility: Visibility,
    'users-count': Type.Integer({ description: 'How many users are members of the team.' }),
    'organization-access': OrganizationAccess,
    'sso-team-id': Type.Union([Type.String(), Type.Null()], { description: 'The SSO team id the team is linked to, kept and answered (no SSO here); null when none.' }),
    'allow-member-token-management': Type.Boolean({ description: 'Kept and answered (default true): the Terraform provider writes it and reads it back.' }),
    permissions: Type.Object({
      'can-update-membership': Type.Boolean({ description: 'Whether this caller may add and remove the team’s members.' }),
      'can-destroy': Type.Boolean({ description: 'Whether this caller may delete the team (never the owners team, nor a team the seed file manages).' })
    }, { description: 'What this caller may do with the team.' })
  }),
  relationships: Type.Object({
    organization: OrganizationRelationship,
    users: Type.Object({ data: Type.Array(UserIdentifier, { description: 'The members, by username.' }) }, { description: 'The team’s members.' }),
    'organization-memberships': Type.Object({
      data: Type.Array(Type.Object({ id: Type.String({ description: 'The membership id (`ou-…`).' }), type: Type.Literal('organization-memberships') }))
    }, { description: 'The organization memberships of its members, and of the invitations given the team (DESIGN §14.3).' })
  }),
  links: Type.Object({ self: Type.String({ description: 'The team.' }) })
}, { $id: 'Team', description: 'A team.' })

export const UserResource = Type.Object({
  id: Type.String({ description: 'The user id (`user-…`).' }),
  type: Type.Literal('users'),
  attributes: Type.Object({ username: Type.String({ description: 'The username.' }) })
}, { $id: 'User', description: 'A user.' })

const Included = Type.Optional(Type.Array(Type.Union([UserResource, MembershipResource]), { description: 'With `include=users`: the members of the team(s), once each; with `include=organization-memberships`: their memberships (and the invitations given the team).' }))

export const TeamDocument = Type.Object({ data: TeamResource, included: Included }, { description: 'One team.' })

export const TeamListDocument = Type.Object({
  data: Type.Array(TeamResource),
  included: Included,
  meta: Type.Object({ pagination: PaginationMeta }),
  links: PaginationLinks
}, { description: 'A page of the teams the caller may see, by name.' })

const TeamInclude = Type.Optional(Type.String({ description: 'Comma-separated: `users` includes the members (go-tfe’s TeamMembers.List), `organization-memberships` their memberships (ListOrganizationMemberships); empty (the provider sends `include=`) includes nothing; anything else is 400.' }))

export const TeamParams = Type.Object({ id: Type.String({ description: 'The team id (`team-…`).' }) })
export const TeamShowQuery = Type.Object({ include: TeamInclude })
export const ListTeamsQuery = Type.Object({
  ...PageQuery,
  include: TeamInclude,
  'filter[names]': Type.Optional(Type.String({ description: 'Comma-separated team names: only teams of exactly these names.' })),
  'filter[own]': Type.Optional(Type.Literal('true', { description: "An extension: only the teams the caller acts through — a user token's teams, a team token's own team (an organization token acts through none). The access review's page draws a member's reach from them." }))
})

/** JSON:API's own `meta` member, and members clients may send that this service does not use, are accepted and ignored. */
const Ignored = (description: string) => Type.Optional(Type.Object({}, { additionalProperties: true, description }))
const TeamName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000]+$', description: 'Unique within the organization.' })

export const OrganizationAccessInput = Type.Object(flagSchemas((description) => Type.Optional(Type.Boolean({ description }))), {
  additionalProperties: true,
  description: 'Organization-level permissions. On create, absent flags are false; on update, absent flags keep their value. Only owners may set or change them; the owners team has none. Unknown flags are ignored.'
})

const teamAttributes = (name: TSchema) => Type.Object({
  name,
  visibility: Type.Optional(Visibility),
  'organization-access': Type.Optional(OrganizationAccessInput),
  'sso-team-id': Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()], { description: 'Kept and answered; empty or null clears it.' })),
  'allow-member-token-management': Type.Optional(Type.Boolean({ description: 'Kept and answered (default true on create).' }))
}, { additionalProperties: true, description: 'Other attributes go-tfe may send are accepted and ignored.' })

const teamData = (attributes: TSchema, update: boolean) => Type.Object({
  type: Type.Optional(StringEnum(['teams'], { description: 'The resource type.' })),
  ...(update ? { id: Type.Optional(Type.String({ description: 'When present, the id in the path.' })) } : {}),
  // go-tfe leaves out an empty attributes object: an update may have none
  attributes: update ? Type.Optional(attributes) : attributes,
  relationships: Ignored('Ignored.'),
  meta: Ignored('Ignored.')
}, { additionalProperties: false })

export const CreateTeamBody = Type.Object({
  data: teamData(teamAttributes(TeamName), false),
  meta: Ignored('Ignored.')
}, { additionalProperties: false, description: 'Create a team: `name` required; `visibility` (default `secret`), `organization-access` optional.' })

export const UpdateTeamBody = Type.Object({
  data: teamData(teamAttributes(Type.Optional(TeamName)), true),
  meta: Ignored('Ignored.')
}, { additionalProperties: false, description: 'Update a team: each attribute optional; `organization-access` merges (absent flags keep their value).' })

export const TeamMembersBody = Type.Object({
  data: Type.Array(Type.Object({
    type: StringEnum(['users'], { description: 'The resource type.' }),
    id: Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\u0000]+$', description: 'The username (go-tfe sends usernames as ids).' })
  }, { additionalProperties: true, description: 'A user, by username.' }), { minItems: 1, maxItems: 100, description: 'The users to add or remove.' }),
  meta: Ignored('Ignored.')
}, { additionalProperties: false, description: 'Users, by username (HCP Terraform’s team membership relationship).' })

export const teamResponses: Record<'show' | 'list' | 'create' | 'update' | 'destroy' | 'members', Record<number, TSchema>> = {
  show: { 200: TeamDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 503: ErrorDocument },
  list: { 200: TeamListDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument },
  create: { 201: TeamDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 415: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument },
  update: { 200: TeamDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 415: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument },
  destroy: { 204: Type.Null({ description: 'Deleted, with its memberships, tokens and team access; no body.' }), 401: ErrorDocument, 404: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument },
  members: { 204: Type.Null({ description: 'Done, no body (adding a present member or removing an absent one is not an error).' }), 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 415: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument }
}

export type TeamResource = Static<typeof TeamResource>
export type UserResource = Static<typeof UserResource>
export type OrganizationAccessInput = Static<typeof OrganizationAccessInput>
