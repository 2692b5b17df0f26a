import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { ErrorDocument, PaginationLinks, PaginationMeta } from './jsonapi.js'

// Workspaces as the Terraform provider reads them (DESIGN §7): read-only here; the attributes
// HCP Terraform has and this service does not store are absent (clients decode them as zero).
// @see https://developer.hashicorp.com/terraform/cloud-docs/api-docs/workspaces

export const OrganizationRelationship = Type.Object({
  data: Type.Object({
    id: Type.String({ description: "The organization's name (HCP Terraform addresses organizations by name)." }),
    type: Type.Literal('organizations')
  })
}, { description: 'The organization the resource belongs to.' })

export const WorkspaceResource = Type.Object({
  id: Type.String({ description: 'The workspace id (`ws-…`).' }),
  type: Type.Literal('workspaces'),
  attributes: Type.Object({
    name: Type.String({ description: 'Unique within the organization.' }),
    'created-at': Type.String({ format: 'date-time', description: 'When the workspace was created (ISO 8601, UTC).' })
  }),
  relationships: Type.Object({
    organization: OrganizationRelationship,
    project: Type.Object({
      data: Type.Object({ id: Type.String({ description: 'The project id (`prj-…`).' }), type: Type.Literal('projects') })
    }, { description: 'The project the workspace is in (DESIGN §11): its organization\'s default project unless placed elsewhere.' })
  }),
  links: Type.Object({ self: Type.String({ description: 'The workspace, by organization and workspace name.' }) })
}, { $id: 'Workspace', description: 'A workspace.' })

export const WorkspaceDocument = Type.Object({ data: WorkspaceResource }, { description: 'One workspace.' })

export const WorkspaceListDocument = Type.Object({
  data: Type.Array(WorkspaceResource),
  meta: Type.Object({ pagination: PaginationMeta }),
  links: PaginationLinks
}, { description: 'A page of the workspaces the caller may read, by name.' })

/** `include` is accepted only empty (the provider sends `include=`); anything else is 400. */
export const Include = Type.Optional(Type.String({ description: 'Accepted empty (clients send `include=`); related resources are not included.' }))

const PageQuery = {
  'page[number]': Type.Optional(Type.String({ description: 'Page number, from 1 (default 1).' })),
  'page[size]': Type.Optional(Type.String({ description: 'Per page, 1 to 100 (default 20).' })),
  include: Include
}

export const WorkspaceParams = Type.Object({ id: Type.String({ description: 'The workspace id (`ws-…`).' }) })
export const WorkspaceByNameParams = Type.Object({
  organization: Type.String({ description: "The organization's name." }),
  name: Type.String({ description: "The workspace's name." })
})
export const OrganizationParams = Type.Object({ organization: Type.String({ description: "The organization's name." }) })
export const WorkspaceShowQuery = Type.Object({ include: Include })
export const ListWorkspacesQuery = Type.Object({
  ...PageQuery,
  'search[name]': Type.Optional(Type.String({ description: 'Only workspaces whose name contains this.' })),
  'filter[project][id]': Type.Optional(Type.String({ description: 'Only the workspaces of this project.' }))
})
export { PageQuery }

export const workspaceResponses: Record<'show' | 'list', Record<number, TSchema>> = {
  show: { 200: WorkspaceDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 503: ErrorDocument },
  list: { 200: WorkspaceListDocument, 400: ErrorDocument, 401: ErrorDocument, 404: ErrorDocument, 422: ErrorDocument, 503: ErrorDocument }
}

export type WorkspaceResource = Static<typeof WorkspaceResource>
