import { Type, type TSchema } from '@sinclair/typebox'
import { idOf, UrlSafeName, Visibility } from './common.js'
import { ORGANIZATION_ACCESS_DESCRIPTIONS, ORGANIZATION_ACCESS_FLAGS } from './organization-access.js'
import { emailOf } from './organization-memberships.js'

// The host's directory functions (DESIGN §9.1, src/directory/host-directory.ts): what each call
// accepts. Names follow the seed's and the API's rules; an absent member of a change keeps the
// column as it is. Members given as `undefined` are dropped before validation (a typed host may
// write `{ name: maybeName }`); unknown members are refused.

const strict = { additionalProperties: false } as const

const OrganizationName = UrlSafeName('Unique organization name.')
const Username = Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000]+$', description: 'Unique user name.' })
const TeamName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000]+$', description: 'Unique within the organization.' })
const WorkspaceName = UrlSafeName('Unique within the organization.')
/** A row's id, as given to a change or a removal: an id longer than any, or with a NUL, names nothing. */
export const DirectoryId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\u0000]+$', description: 'The row’s id.' })

const OrganizationAccess = Type.Object(Object.fromEntries(ORGANIZATION_ACCESS_FLAGS.map((flag) =>
  [flag, Type.Optional(Type.Boolean({ description: ORGANIZATION_ACCESS_DESCRIPTIONS[flag] }))])), {
  ...strict,
  description: 'Organization-access flags by their wire names; on create absent flags are false, on a change they keep their value.'
})
const SsoTeamId = Type.Union([Type.String({ maxLength: 256 }), Type.Null()], { description: 'Kept and answered; empty or null clears it.' })

export const CreateOrganization = Type.Object({ name: OrganizationName, id: Type.Optional(idOf('org', 'Explicit id; generated when absent.')) }, strict)
export const ChangeOrganization = Type.Object({ name: Type.Optional(OrganizationName) }, strict)

const UserEmail = emailOf('Unique among users, case-insensitively. An invitation to it (DESIGN §14.2) becomes this user’s: active, with its teams.')
export const CreateUser = Type.Object({ username: Username, email: Type.Optional(UserEmail), id: Type.Optional(idOf('user', 'Explicit id; generated when absent.')) }, strict)
export const ChangeUser = Type.Object({ username: Type.Optional(Username), email: Type.Optional(Type.Union([UserEmail, Type.Null()], { description: 'The email, or null for none.' })) }, strict)

const teamChange = {
  visibility: Type.Optional(Visibility),
  organizationAccess: Type.Optional(OrganizationAccess),
  ssoTeamId: Type.Optional(SsoTeamId),
  allowMemberTokenManagement: Type.Optional(Type.Boolean({ description: 'Kept and answered (default true on create).' }))
}
export const CreateTeam = Type.Object({
  organizationId: DirectoryId,
  name: TeamName,
  id: Type.Optional(idOf('team', 'Explicit id; generated when absent.')),
  owners: Type.Optional(Type.Boolean({ description: "The organization's owners team (at most one; it has no organization-access flags)." })),
  ...teamChange
}, strict)
export const ChangeTeam = Type.Object({ name: Type.Optional(TeamName), ...teamChange }, strict)

export const Membership = Type.Object({ teamId: DirectoryId, userId: DirectoryId }, strict)
export const CreateOrganizationMembership = Type.Object({
  organizationId: DirectoryId,
  email: emailOf('The person’s email: an active membership when a user has it, else an invitation (and the user it makes).'),
  teamIds: Type.Optional(Type.Array(DirectoryId, { maxItems: 100, description: 'Teams of the organization: team memberships at once, or when the invited person arrives.' }))
}, strict)

const ProjectId = Type.String({ minLength: 1, maxLength: 128, description: "A project of the workspace's organization (`prj-…`); absent on create: its default project." })
export const CreateWorkspace = Type.Object({
  organizationId: DirectoryId,
  name: WorkspaceName,
  id: Type.Optional(idOf('ws', 'Explicit id; generated when absent.')),
  projectId: Type.Optional(ProjectId)
}, strict)
export const ChangeWorkspace = Type.Object({ name: Type.Optional(WorkspaceName), projectId: Type.Optional(ProjectId) }, strict)

const ProjectName = Type.String({ minLength: 3, maxLength: 40, pattern: '^[A-Za-z0-9_-]([A-Za-z0-9 _-]*[A-Za-z0-9_-])?$', description: '3 to 40 letters, digits, spaces, - and _; unique in the organization, case-insensitively.' })
const ProjectDescription = Type.Union([Type.String({ maxLength: 256 }), Type.Null()], { description: 'Up to 256 characters, or null.' })
export const CreateProject = Type.Object({
  organizationId: DirectoryId,
  name: ProjectName,
  description: Type.Optional(ProjectDescription),
  id: Type.Optional(idOf('prj', 'Explicit id; generated when absent.'))
}, strict)
export const ChangeProject = Type.Object({ name: Type.Optional(ProjectName), description: Type.Optional(ProjectDescription) }, strict)

export const TokenSubject = Type.Union([
  Type.Object({ teamId: DirectoryId }, strict),
  Type.Object({ organizationId: DirectoryId }, strict),
  Type.Object({ userId: DirectoryId }, strict)
], { description: 'Whose token: a team, an organization or a user, by id.' })
export const CreateToken = Type.Object({
  secret: Type.Optional(Type.String({ minLength: 8, maxLength: 512, description: 'A bearer secret; only its SHA-256 digest is stored. Generated when absent.' })),
  description: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Null()], { description: 'Unique per team.' })),
  expiresAt: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the token stops working (a Date, or RFC 3339).' }))
}, strict)

export const CallOptions = Type.Object({
  actor: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Who made the change, as the audit events name it (default `host`).' })),
  requestId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'The request id the audit events carry (default a random UUID).' }))
}, strict)

// The host's questions (src/plugin.ts): who asks, and of what. A caller may carry members of its own.
const callerToken = { token: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'The digest of the token the caller came with.' })) }
export const HostCaller = Type.Union([
  Type.Object({ kind: Type.Literal('organization'), organizationId: DirectoryId, ...callerToken }),
  Type.Object({ kind: Type.Literal('team'), teamId: DirectoryId, ...callerToken }),
  Type.Object({ kind: Type.Literal('user'), userId: DirectoryId, ...callerToken })
], { description: 'Who asks: an organization, a team or a user, by id (DESIGN §3).' })
const HostPage = Type.Object({
  number: Type.Integer({ minimum: 1, maximum: 999_999_999_999 }),
  size: Type.Integer({ minimum: 1, maximum: 100 })
}, { description: 'A page: number ≥ 1, size 1..100.' })
export const EffectiveAccessQuery = Type.Object({ caller: HostCaller, workspaceId: DirectoryId })
export const EffectiveAccessManyQuery = Type.Object({ caller: HostCaller, workspaceIds: Type.Array(DirectoryId) })
export const ExplainWorkspaceQuery = Type.Object({ caller: HostCaller, workspaceId: DirectoryId })
export const ExplainUserQuery = Type.Object({ caller: HostCaller, workspaceId: DirectoryId, username: DirectoryId })
export const ExplainTeamQuery = Type.Object({ caller: HostCaller, teamId: DirectoryId, page: Type.Optional(HostPage) })
/** What an access set's call takes beside its target (a workspace's, a project's). */
const setOptions = {
  caller: HostCaller,
  entries: Type.Array(Type.Unknown(), { description: 'The complete set; each entry is checked by the rules of its access set.' }),
  dryRun: Type.Optional(Type.Boolean()),
  ifMatch: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  requestId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 }))
}
export const SetWorkspaceAccessArguments = Type.Object({ workspaceId: DirectoryId, ...setOptions })
export const SetProjectAccessArguments = Type.Object({ projectId: DirectoryId, ...setOptions })

/** Every schema of the directory's inputs, by name: compiled once, on first use. */
export const DIRECTORY_SCHEMAS = {
  CreateOrganization,
  ChangeOrganization,
  CreateUser,
  ChangeUser,
  CreateTeam,
  ChangeTeam,
  Membership,
  CreateOrganizationMembership,
  CreateWorkspace,
  ChangeWorkspace,
  CreateProject,
  ChangeProject,
  TokenSubject,
  CreateToken,
  CallOptions,
  DirectoryId,
  EffectiveAccessQuery,
  EffectiveAccessManyQuery,
  ExplainWorkspaceQuery,
  ExplainUserQuery,
  ExplainTeamQuery,
  SetWorkspaceAccessArguments,
  SetProjectAccessArguments
} satisfies Record<string, TSchema>
