import { Type, type Static } from '@sinclair/typebox'
import { Access, idOf, OptionalPermissions, Runs, SentinelMocks, StateVersions, UrlSafeName, Variables, Visibility } from './common.js'
import { ProjectAccess, ProjectSettings, ProjectTeams, ProjectVariableSets } from './projects.js'
import { emailOf } from './organization-memberships.js'
import { ORGANIZATION_ACCESS_DESCRIPTIONS, ORGANIZATION_ACCESS_FLAGS } from './organization-access.js'

// DESIGN §6: the seed file, also the way a host syncs its directory in. Keys are kebab-case like the API.
// It is the whole truth for the rows it manages (§9.1): what it no longer declares is removed.

const strict = { additionalProperties: false } as const

export const SeedToken = Type.Union([
  Type.String({ minLength: 8, maxLength: 512, description: 'A bearer secret; only its SHA-256 digest is stored.' }),
  Type.Object({
    token: Type.String({ minLength: 8, maxLength: 512, description: 'A bearer secret; only its SHA-256 digest is stored.' }),
    'expires-at': Type.Optional(Type.String({ format: 'date-time', description: 'When the token stops working (RFC 3339).' }))
  }, strict)
])

const Tokens = Type.Array(SeedToken, {
  description: "Bearer secrets that act for this entity: its complete list of seed tokens (a seed token no longer listed is removed; the API's and the host's stay)."
})

export const SeedUser = Type.Object({
  id: Type.Optional(idOf('user', 'Explicit id; generated when absent.')),
  username: Type.String({ minLength: 1, maxLength: 100, description: 'Unique user name; team members refer to it.' }),
  email: Type.Optional(emailOf("The user's email, unique case-insensitively (absent: none). An invitation to this email (DESIGN §14.2) becomes this user's: its membership active, its teams team memberships.")),
  tokens: Type.Optional(Tokens)
}, strict)

export const SeedTeam = Type.Object({
  id: Type.Optional(idOf('team', 'Explicit id; generated when absent.')),
  name: Type.String({ minLength: 1, maxLength: 100, description: 'Unique within the organization.' }),
  visibility: Type.Optional(Visibility),
  owners: Type.Optional(Type.Boolean({ description: "The organization's owners team (at most one)." })),
  'organization-access': Type.Optional(Type.Object(Object.fromEntries(ORGANIZATION_ACCESS_FLAGS.map((flag) =>
    [flag, Type.Optional(Type.Boolean({ description: ORGANIZATION_ACCESS_DESCRIPTIONS[flag] }))])), {
    additionalProperties: Type.Boolean(),
    description: "Organization-level permissions, HCP Terraform's flags (absent: false); manage-workspaces and read-workspaces grant workspace access, manage-teams and manage-membership manage teams, the rest are stored and answered. Other flags may be given and are ignored."
  })),
  members: Type.Optional(Type.Array(Type.String({ minLength: 1 }), {
    description: "Usernames: the team's complete list of seed-managed members (a member the seed added and no longer lists is removed; absent means none). Members the API or the host added stay."
  })),
  tokens: Type.Optional(Tokens)
}, strict)

export const SeedWorkspace = Type.Object({
  id: Type.Optional(idOf('ws', 'Explicit id; generated when absent.')),
  name: UrlSafeName('Unique within the organization.'),
  project: Type.Optional(Type.String({ minLength: 1, description: "The name of the project it is in (one of this organization's, case-insensitively); absent: the organization's default project." }))
}, strict)

export const SeedProject = Type.Object({
  id: Type.Optional(idOf('prj', 'Explicit id; generated when absent.')),
  name: Type.String({ minLength: 3, maxLength: 40, pattern: '^[A-Za-z0-9_-]([A-Za-z0-9 _-]*[A-Za-z0-9_-])?$', description: '3 to 40 letters, digits, spaces, - and _ (no leading or trailing space); unique in the organization, case-insensitively. The default project ("Default Project") may be named to take it over.' }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()], { description: 'Up to 256 characters.' }))
}, strict)

export const SeedProjectAccess = Type.Object({
  id: Type.Optional(idOf('tprj', 'Explicit id; generated when absent.')),
  team: Type.String({ minLength: 1, description: 'Name of a team of this organization.' }),
  project: Type.String({ minLength: 1, description: 'Name of a project of this organization.' }),
  access: ProjectAccess,
  'project-access': Type.Optional(Type.Partial(Type.Object({ settings: ProjectSettings, teams: ProjectTeams, 'variable-sets': ProjectVariableSets }), strict)),
  'workspace-access': Type.Optional(Type.Partial(Type.Object({
    runs: Runs,
    'sentinel-mocks': SentinelMocks,
    'state-versions': StateVersions,
    variables: Variables,
    create: Type.Boolean(),
    locking: Type.Boolean(),
    move: Type.Boolean(),
    delete: Type.Boolean(),
    'run-tasks': Type.Boolean()
  }), strict))
}, { ...strict, description: "A grant of a team's access to a project, made once (as team-access entries); the objects only under custom." })

export const SeedTeamAccess = Type.Object({
  id: Type.Optional(idOf('tws', 'Explicit id; generated when absent.')),
  team: Type.String({ minLength: 1, description: 'Name of a team of this organization.' }),
  workspace: Type.String({ minLength: 1, description: 'Name of a workspace of this organization.' }),
  access: Access,
  ...OptionalPermissions
}, strict)

export const SeedOrganization = Type.Object({
  id: Type.Optional(idOf('org', 'Explicit id; generated when absent.')),
  name: UrlSafeName('Unique organization name.'),
  tokens: Type.Optional(Tokens),
  teams: Type.Optional(Type.Array(SeedTeam)),
  projects: Type.Optional(Type.Array(SeedProject)),
  workspaces: Type.Optional(Type.Array(SeedWorkspace)),
  'team-access': Type.Optional(Type.Array(SeedTeamAccess)),
  'project-access': Type.Optional(Type.Array(SeedProjectAccess))
}, strict)

export const SeedDocument = Type.Object({
  users: Type.Optional(Type.Array(SeedUser)),
  organizations: Type.Optional(Type.Array(SeedOrganization))
}, { ...strict, description: 'Organizations, users, teams, memberships, workspaces, tokens and team access, applied idempotently; the seed-managed rows it no longer declares are removed.' })

export type SeedDocument = Static<typeof SeedDocument>
export type SeedToken = Static<typeof SeedToken>
export type SeedUser = Static<typeof SeedUser>
export type SeedTeamAccess = Static<typeof SeedTeamAccess>
export type SeedProject = Static<typeof SeedProject>
export type SeedProjectAccess = Static<typeof SeedProjectAccess>
