import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { StringEnum } from './common.js'
import { ErrorDocument } from './jsonapi.js'

// The audit trail (DESIGN §8): HCP Terraform's audit-trail API, plain JSON (not JSON:API), in the
// shape HashiCorp's go-tfe decodes (`AuditTrailList`: `version` a string, `timestamp` a zoned
// time, `meta` a map, pagination integers).
// @see https://developer.hashicorp.com/terraform/cloud-docs/api-docs/audit-trails

export const AuditAction = StringEnum(['add_team', 'update_team_permissions', 'remove_team', 'create', 'update', 'destroy', 'add_member', 'remove_member'],
  { description: "What changed. A workspace's team access: a team was given access to the workspace (add_team), its access was changed (update_team_permissions), or it was taken away (remove_team). A workspace, a team, a project, a team-project: created, updated, destroyed; a team's member added or removed. An authentication token: created or destroyed." })

export const AuditResourceType = StringEnum(['workspace', 'team', 'authentication-token', 'project', 'team-project', 'organization-membership'],
  { description: "What the event is about: a workspace (its team access, or the workspace itself: created, renamed, moved, destroyed), a team (and its members), an authentication token, a project, a team's access to a project, or a person's organization membership." })

const nullable = <T extends TSchema>(schema: T, description: string) => Type.Union([schema, Type.Null()], { description })

export const AuditEvent = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The event id, a UUID.' }),
  version: Type.String({ description: 'The version of the event format, a string ("0").' }),
  type: Type.Literal('Resource', { description: 'Always "Resource": a change to a resource.' }),
  timestamp: Type.String({ format: 'date-time', description: 'When the change was made: RFC 3339 in UTC, with microseconds.' }),
  auth: Type.Object({
    accessor_id: nullable(Type.String(), 'The user, team or organization behind the token that made the change; null for a seed file.'),
    description: Type.String({ description: 'Its username, team name or organization name at the time; "seed" for a seed file.' }),
    type: StringEnum(['Client', 'System', 'Mirror'], { description: '"Client" for a change made with a token, "System" for one made by a seed file or the host, "Mirror" for a difference a mirror run found in HCP Terraform (DESIGN §13.3; description: the host it reads).' }),
    impersonator_id: nullable(Type.String(), 'Always null: nobody acts as someone else here.'),
    organization_id: Type.String({ description: 'The organization whose access changed.' })
  }, { description: 'Who made the change.' }),
  request: Type.Object({
    id: Type.String({ description: 'The id of the request that made the change (its `X-Request-Id`); for a seed file, one id per application of the file.' })
  }, { description: 'The request that made the change.' }),
  resource: Type.Object({
    id: Type.String({ description: 'The workspace whose access changed, or the team, token, project or team-project.' }),
    type: AuditResourceType,
    action: AuditAction,
    meta: Type.Object({
      team: Type.Optional(Type.String({ description: "The team's name at the time (workspace and team events)." })),
      permissions: Type.Optional(Type.String({ description: 'The access after the change, wire names: `access=custom runs=apply variables=none …`. Only on add_team and update_team_permissions, and on team-project create and update (`access=custom settings=read teams=none …`).' })),
      workspace: Type.Optional(Type.String({ description: "The workspace's name after the change (a workspace's create, update and destroy)." })),
      project: Type.Optional(Type.String({ description: "The project's name at the time (project and team-project events); a workspace moved: `<from> -> <to>`, the projects' names." })),
      user: Type.Optional(Type.String({ description: 'The username added or removed (add_member, remove_member); the person of an organization membership, once they have one.' })),
      email: Type.Optional(Type.String({ description: "The person's email (organization-membership create and destroy)." })),
      subject: Type.Optional(Type.String({ description: 'The name of the team, organization or user the token acts for (authentication-token events); never the secret.' }))
    }, { description: 'What the change was about, by name.' })
  }, { description: 'What changed.' })
}, { description: 'One change of team access.' })

const nullablePage = (description: string) => nullable(Type.Integer(), description)

export const AuditTrailPagination = Type.Object({
  current_page: Type.Integer({ description: 'This page, from 1.' }),
  prev_page: nullablePage('The previous page, or null on the first.'),
  next_page: nullablePage('The next page, or null on the last.'),
  total_pages: Type.Integer({ description: 'How many pages there are (at least 1).' }),
  total_count: Type.Integer({ description: 'How many events match, in all.' })
}, { description: 'Where this page is (snake_case, as HCP Terraform).' })

export const AuditTrailDocument = Type.Object({
  data: Type.Array(AuditEvent, { description: 'The events, oldest first.' }),
  pagination: AuditTrailPagination
}, { description: "A page of the organization's audit trail." })

/** Query values arrive as strings; the route checks them so the message can be exact. Unknown parameters are ignored. */
export const AuditTrailQuery = Type.Object({
  since: Type.Optional(Type.String({ description: 'Only events strictly after this moment: ISO 8601 with an offset (`Z`, `+02:00`), with or without fractional seconds — go-tfe sends whole seconds and the value’s own offset.' })),
  'page[number]': Type.Optional(Type.String({ description: 'Page number, from 1 (default 1).' })),
  'page[size]': Type.Optional(Type.String({ description: 'Events per page, 1 to 1000 (default 1000).' })),
  organization: Type.Optional(Type.String({ description: "The organization's name, for a user who owns several (an extension of HCP Terraform's API; an organization token's trail is its own)." }))
})

/** Success is plain JSON; every error is the JSON:API error document, as everywhere else. */
const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((status) =>
  [status, { description: 'A JSON:API error document.', content: { 'application/vnd.api+json': { schema: ErrorDocument } } }]))

export const responses: Record<number, unknown> = {
  200: { description: 'A page of events.', content: { 'application/json': { schema: AuditTrailDocument } } },
  ...errors(401, 404, 422, 503)
}

export const description = 'The audit trail of the organization of the token: every add, update and remove of team access, oldest first, always paginated. Its owners read it: the organization token (HCP Terraform’s rule, what go-tfe uses), the owners team’s token, and the owners team’s members — a user who owns several organizations names one with `organization`; anyone else gets 404. 422: a `since` that is not ISO 8601 with an offset, or bad page parameters. Plain JSON, not JSON:API, as HCP Terraform; errors are JSON:API error documents.'

export type AuditAction = Static<typeof AuditAction>
export type AuditResourceType = Static<typeof AuditResourceType>
export type AuditEvent = Static<typeof AuditEvent>
export type AuditTrailPagination = Static<typeof AuditTrailPagination>
export type AuditTrailDocument = Static<typeof AuditTrailDocument>
export type AuditTrailQuery = Static<typeof AuditTrailQuery>
