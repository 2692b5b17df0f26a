import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Visibility } from './common.js'
import { ErrorDocument, PaginationLinks, PaginationMeta } from './jsonapi.js'
import { OrganizationRelationship, PageQuery } from './workspaces.js'

// Teams as the Terraform provider reads them (DESIGN §7): read-only here.
// @see https://developer.hashicorp.com/terraform/cloud-docs/api-docs/teams

export const TeamResource = Type.Object({
  id: Type.String({ description: 'The team id (`team-…`).' }),
  type: Type.Literal('teams'),
  attributes: Type.Object({
    name: Type.String({ description: 'Unique within the organization.' }),
    visibility: Visibility,
    'users-count': Type.Integer({ description: 'How many users are members of the team.' }),
    'organization-access': Type.Object({
      'manage-workspaces': Type.Boolean({ description: 'Admin on every workspace of the organization.' }),
      'read-workspaces': Type.Boolean({ description: 'Read on every workspace of the organization.' })
    }, { description: 'Organization-level permissions of the team.' })
  }),
  relationships: Type.Object({ organization: OrganizationRelationship }),
  links: Type.Object({ self: Type.String({ description: 'The team.' }) })
}, { $id: 'Team', description: 'A team.' })

export const TeamDocument = Type.Object({ data: TeamResource }, { description: 'One team.' })

export const TeamListDocument = Type.Object({
  data: Type.Array(TeamResource),
  meta: Type.Object({ pagination: PaginationMeta }),
  links: PaginationLinks
}, { description: 'A page of the teams the caller may see, by name.' })

export const TeamParams = Type.Object({ id: Type.String({ description: 'The team id (`team-…`).' }) })
export const TeamShowQuery = Type.Object({ include: PageQuery.include })
export const ListTeamsQuery = Type.Object({
  ...PageQuery,
  'filter[names]': Type.Optional(Type.String({ description: 'Comma-separated team names: only teams of exactly these names.' }))
})

export const teamResponses: Record<'show' | 'list', Record<number, TSchema>> = {
  show: { 200: TeamDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 503: ErrorDocument },
  list: { 200: TeamListDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument }
}

export type TeamResource = Static<typeof TeamResource>
