import type { OrganizationAccessFlag } from '../../schemas/organization-access.js'

/**
 * An HCP Terraform organization as the mirror read it (DESIGN §13): what the reader
 * (src/mirror/read.ts) returns and what the apply (src/directory/mirror-apply.ts) and the seed
 * writer (src/mirror/seed-out.ts) take. Every id is HCP Terraform's own, kept as it is; names are
 * as read. Nothing here is a secret: HCP Terraform's tokens are never read.
 */
export interface MirrorSnapshot {
  /** The host read from (`app.terraform.io`): the audit events' `auth.description`, the page's "mirrored from". */
  host: string
  organization: {
    /** The organization's name (HCP Terraform's `id` of an organization is its name). */
    name: string
    /** Its `external-id` (`org-…`), when the answer gives one. */
    externalId?: string
    /** The id of its default project (`relationships.default-project`), when the answer gives one. */
    defaultProjectId?: string
  }
  /** Every user met: team members (`include=users`) and organization memberships (`include=user`). */
  users: MirrorUser[]
  teams: MirrorTeam[]
  /** Organization memberships (`ou-…`): an invited person's user has no username. */
  memberships: MirrorMembership[]
  projects: MirrorProject[]
  workspaces: MirrorWorkspace[]
  teamWorkspaces: MirrorTeamWorkspace[]
  teamProjects: MirrorTeamProject[]
  /** What was read but has no place here (a newer level, an unknown flag), each said once. */
  notes: string[]
  /** How many requests the read made (retries included). */
  requests: number
}

export interface MirrorUser {
  id: string
  /** null for an invited person who has no account yet. */
  username: string | null
  email: string | null
}

export interface MirrorTeam {
  id: string
  name: string
  visibility: 'secret' | 'organization'
  /** HCP Terraform's owners team: the team named `owners` (HCP Terraform has exactly one, by that name). */
  isOwners: boolean
  /** The `organization-access` flags this service knows, as read (absent: false). */
  organizationAccess: Partial<Record<OrganizationAccessFlag, boolean>>
  /** Members' user ids (`relationships.users`). */
  userIds: string[]
}

export interface MirrorMembership {
  id: string
  userId: string
  status: 'active' | 'invited'
  /** The teams an invited person joins on arrival (`relationships.teams`). */
  teamIds: string[]
}

export interface MirrorProject {
  id: string
  name: string
  description: string | null
  isDefault: boolean
}

export interface MirrorWorkspace {
  id: string
  name: string
  projectId: string
  description: string | null
}

/** A team-workspaces row (DESIGN §4): the level and, for every level, the permissions as read. */
export interface MirrorTeamWorkspace {
  id: string
  teamId: string
  workspaceId: string
  access: 'read' | 'plan' | 'write' | 'admin' | 'custom'
  runs: 'read' | 'plan' | 'apply'
  variables: 'none' | 'read' | 'write'
  stateVersions: 'none' | 'read-outputs' | 'read' | 'write'
  sentinelMocks: 'none' | 'read'
  workspaceLocking: boolean
  runTasks: boolean
  /** `policy-overrides`, when the answer gives it (absent: false). */
  policyOverrides?: boolean
}

/** A team-projects row (DESIGN §11.2): the level and, for `custom`, the permissions as read. */
export interface MirrorTeamProject {
  id: string
  teamId: string
  projectId: string
  access: 'read' | 'write' | 'maintain' | 'admin' | 'custom'
  projectAccess: { settings: 'read' | 'update' | 'delete', teams: 'none' | 'read' | 'manage', variableSets: 'none' | 'read' | 'write' }
  workspaceAccess: {
    runs: 'read' | 'plan' | 'apply'
    variables: 'none' | 'read' | 'write'
    stateVersions: 'none' | 'read-outputs' | 'read' | 'write'
    sentinelMocks: 'none' | 'read'
    create: boolean
    locking: boolean
    delete: boolean
    move: boolean
    runTasks: boolean
  }
}
