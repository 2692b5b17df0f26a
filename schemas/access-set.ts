import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Access, OptionalPermissions, StringEnum } from './common.js'
import { ErrorDocument } from './jsonapi.js'
import { TeamWorkspaceResource } from './team-workspaces.js'

// The access set of a workspace (DESIGN §10.1): every team-access row of one workspace as one
// document, read with an ETag and replaced as a whole. Beyond HCP Terraform: an extension.

const strict = { additionalProperties: false } as const
const Meta = Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Ignored.' }))
const RequestId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\u0000]+$', description: 'An id, as the API serves it.' })

/** The most entries one set may hold. */
export const MAX_SET_ENTRIES = 1000

const relationship = (type: string, description: string) => Type.Object({
  data: Type.Object({ type: StringEnum([type]), id: RequestId }, strict),
  links: Type.Optional(Type.Object({}, { additionalProperties: true })),
  meta: Meta
}, { ...strict, description })

/**
 * One entry of the desired set: a team and its access, validated as the body of an add
 * (`POST /team-workspaces`). What GET answers may be sent back as it is: a row's `id` and `links`
 * are accepted and ignored (the team is the key), its workspace relationship must name this workspace.
 */
export const AccessSetEntryResource = Type.Object({
  type: StringEnum(['team-workspaces']),
  id: Type.Optional(Type.String({ description: 'Ignored: the team is the key of an entry.' })),
  attributes: Type.Object({ access: Access, ...OptionalPermissions }, strict),
  relationships: Type.Object({
    team: relationship('teams', 'The team that holds the access.'),
    workspace: Type.Optional(relationship('workspaces', 'When present, the workspace of the path.'))
  }, strict),
  links: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Ignored.' })),
  meta: Meta
}, { ...strict, description: "One team's access, as in an add: the permission attributes only under 'custom' (or with the values the level implies)." })

export const PutAccessSetBody = Type.Object({
  data: Type.Array(AccessSetEntryResource, { maxItems: MAX_SET_ENTRIES, description: 'The complete desired set: one entry per team; a team absent from it loses its access.' }),
  meta: Meta
}, { ...strict, description: "The workspace's complete desired team access." })

/** The entries as the host's `setWorkspaceAccess` takes them: the team by id, the attributes by their wire names. */
export const HostAccessSetEntries = Type.Array(Type.Object({
  teamId: RequestId,
  access: Access,
  ...OptionalPermissions
}, strict), { maxItems: MAX_SET_ENTRIES })

const ids = (description: string) => Type.Array(Type.String(), { description })

export const AccessSetChanges = Type.Object({
  added: ids('The teams that get a row.'),
  updated: ids('The teams whose row changes.'),
  removed: ids('The teams whose row is removed.')
}, { description: 'What the request changes (or, in a dry run, would change), by team id, each list in the order of team ids.' })

export const AccessSetDocument = Type.Object({
  data: Type.Array(TeamWorkspaceResource)
}, { description: "Every team-access row of the workspace, secret teams' included, in creation order; the ETag header names exactly this set." })

export const AccessSetChangedDocument = Type.Object({
  data: Type.Array(TeamWorkspaceResource),
  meta: Type.Object({
    changes: AccessSetChanges,
    'dry-run': Type.Boolean({ description: 'Whether nothing was changed (a plan).' })
  })
}, { description: 'The set as it now is (in a dry run: as it would be; rows it would add carry ids that are not kept), and what changed.' })

export const AccessSetParams = Type.Object({
  id: Type.String({ description: 'The workspace id (`ws-…`).' })
})

export const PutAccessSetQuery = Type.Object({
  'dry-run': Type.Optional(StringEnum(['true', 'false'], { description: '`true`: answer what would change, and change nothing.' }))
})

export const PutAccessSetHeaders = Type.Object({
  'if-match': Type.Optional(Type.String({ description: 'An ETag from GET: apply only if the set is still exactly that one (412 otherwise). `*` matches any set.' }))
})

const etag = { ETag: Type.String({ description: 'A strong entity tag naming the set exactly (its rows ids and attributes).' }) }

export const accessSetResponses: Record<'show' | 'put', Record<number, TSchema>> = {
  show: { 200: { ...AccessSetDocument, headers: etag }, 401: ErrorDocument, 404: ErrorDocument, 503: ErrorDocument },
  put: {
    200: { ...AccessSetChangedDocument, headers: { ETag: Type.String({ description: 'The set as it now is; in a dry run, the set as it still is: send it as If-Match to apply exactly the plan.' }) } },
    ...Object.fromEntries([400, 401, 404, 412, 415, 422, 503].map((status) => [status, ErrorDocument]))
  }
}

const BEYOND = 'An extension of this service, beyond HCP Terraform\'s API (which manages team access one row at a time).'

export const accessSetDescriptions = {
  show: `${BEYOND} Every team-access row of the workspace, secret teams' included, with an ETag naming exactly this set. Owners and workspace admins only; 404 for anyone else, as for a workspace that does not exist.`,
  put: `${BEYOND} Makes the workspace's team access equal to the complete desired set, in one transaction: rows added, changed and removed, each with its audit event; rows that stay as they are record nothing. An entry is what an add would create (under 'custom', omitted permissions take the custom defaults). Answers the new set and meta.changes (team ids). ?dry-run=true answers the same and changes nothing. If-Match makes it conditional. Owners and workspace admins only. 404: no such workspace, or not the caller's to manage. 412: If-Match names a set that is no longer there. 422: a malformed entry, a custom-only attribute under a fixed level, a team twice, or a team the caller cannot see in the workspace's organization (each error points at its entry); nothing changes.`
}

export type AccessSetEntryResource = Static<typeof AccessSetEntryResource>
export type PutAccessSetBody = Static<typeof PutAccessSetBody>
export type AccessSetChanges = Static<typeof AccessSetChanges>
