import type { ColumnType, Generated } from 'kysely'
import type {
  Access, Runs, Variables, StateVersions, SentinelMocks, Visibility
} from '../../schemas/common.js'
import type { ProjectAccess } from '../../schemas/projects.js'
import type { AuditAction, AuditResourceType } from '../../schemas/audit.js'

/** Postgres is snake_case; the wire's kebab-case is mapped once, in serialize. */
export interface Database {
  organizations: OrganizationTable
  users: UserTable
  teams: TeamTable
  team_memberships: TeamMembershipTable
  workspaces: WorkspaceTable
  tokens: TokenTable
  team_workspaces: TeamWorkspaceTable
  workspace_access_counts: WorkspaceAccessCountTable
  seed_grants: SeedGrantTable
  audit_events: AuditEventTable
  revoked_tokens: RevokedTokenTable
  projects: ProjectTable
  team_projects: TeamProjectTable
  organization_memberships: OrganizationMembershipTable
  organization_membership_teams: OrganizationMembershipTeamTable
  mirrors: MirrorTable
}

type CreatedAt = ColumnType<Date, Date | string | undefined, never>

/** Who manages a directory row (DESIGN §9.1, migration 0008): a seed removes only its own. */
export type ManagedBy = 'seed' | 'api' | 'host' | 'mirror'
/** Written by every writer that knows its source; a row written without one is the host's. */
type ManagedByColumn = Generated<ManagedBy>

export interface OrganizationTable {
  id: string
  name: string
  created_at: CreatedAt
  managed_by: ManagedByColumn
}

export interface UserTable {
  id: string
  /** Null only for the user an invitation made for an email no user had (DESIGN §14.2, migration 0012), until the person arrives. */
  username: ColumnType<string | null, string | null | undefined, string | null>
  /** Optional, unique case-insensitively (migration 0012). */
  email: ColumnType<string | null, string | null | undefined, string | null>
  created_at: CreatedAt
  managed_by: ManagedByColumn
}

/**
 * A person's membership of an organization (DESIGN §14.2, migration 0012): `active`, or `invited`
 * until the person arrives. Every team member holds an active one (a trigger makes it).
 */
export interface OrganizationMembershipTable {
  id: string
  organization_id: string
  user_id: string
  status: 'active' | 'invited'
  created_at: CreatedAt
  managed_by: ManagedByColumn
}

/** The teams an invitation was given (migration 0012): team memberships once it is active. */
export interface OrganizationMembershipTeamTable {
  membership_id: string
  team_id: string
}

export interface TeamTable {
  id: string
  organization_id: string
  name: string
  visibility: Generated<Visibility>
  is_owners: Generated<boolean>
  manage_workspaces: Generated<boolean>
  read_workspaces: Generated<boolean>
  /** The other organization-access flags (migration 0009; see ./organization-access.ts): stored and answered. */
  manage_policies: Generated<boolean>
  manage_policy_overrides: Generated<boolean>
  manage_vcs_settings: Generated<boolean>
  manage_providers: Generated<boolean>
  manage_modules: Generated<boolean>
  manage_run_tasks: Generated<boolean>
  manage_projects: Generated<boolean>
  read_projects: Generated<boolean>
  manage_membership: Generated<boolean>
  manage_teams: Generated<boolean>
  manage_organization_access: Generated<boolean>
  access_secret_teams: Generated<boolean>
  manage_agent_pools: Generated<boolean>
  delegate_policy_overrides: Generated<boolean>
  /** Stored and answered (migration 0009): the Terraform provider writes them and reads them back. */
  sso_team_id: ColumnType<string | null, string | null | undefined, string | null>
  allow_member_token_management: Generated<boolean>
  created_at: CreatedAt
  managed_by: ManagedByColumn
}

export interface TeamMembershipTable {
  team_id: string
  user_id: string
  managed_by: ManagedByColumn
}

export interface WorkspaceTable {
  id: string
  organization_id: string
  name: string
  created_at: CreatedAt
  managed_by: ManagedByColumn
  /** Its project (migration 0011); left out, the organization's default project (a trigger places it). */
  project_id: Generated<string>
  /** Migration 0012 (DESIGN §14.1). */
  description: ColumnType<string | null, string | null | undefined, string | null>
  /** The attributes clients send that mean nothing to access, as sent (migration 0012). */
  settings: ColumnType<Record<string, unknown>, string | undefined, string>
}

/** A project (DESIGN §11, migration 0011): each organization's default one is made with it, by a trigger. */
export interface ProjectTable {
  id: string
  organization_id: string
  name: string
  description: ColumnType<string | null, string | null | undefined, string | null>
  is_default: Generated<boolean>
  created_at: CreatedAt
  managed_by: ManagedByColumn
}

/** A team's access to a project (DESIGN §11.2, migration 0011): every column as the level implies, or as set under custom. */
export interface TeamProjectTable {
  id: string
  organization_id: string
  team_id: string
  project_id: string
  access: ProjectAccess
  project_settings: 'read' | 'update' | 'delete'
  project_teams: 'none' | 'read' | 'manage'
  project_variable_sets: 'none' | 'read' | 'write'
  runs: Runs
  sentinel_mocks: SentinelMocks
  state_versions: StateVersions
  variables: Variables
  workspace_create: boolean
  workspace_locking: boolean
  workspace_delete: boolean
  workspace_move: boolean
  run_tasks: boolean
  created_at: CreatedAt
}

export type TokenKind = 'organization' | 'team' | 'user'

export interface TokenTable {
  id: string
  kind: TokenKind
  organization_id: string | null
  team_id: string | null
  user_id: string | null
  digest: string
  expires_at: Date | null
  created_at: CreatedAt
  managed_by: ManagedByColumn
  /** Migration 0009: unique per team; null for a subject's description-less token. */
  description: ColumnType<string | null, string | null | undefined, string | null>
  /** Written at most once a minute per token (src/auth/caller.ts). */
  last_used_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
  /** The user who made it through the API; null for a seed's, a host's, or one made by a team or organization token. */
  created_by: ColumnType<string | null, string | null | undefined, string | null>
}

/** Digests of revoked tokens (migration 0009), whoever revoked them: a seed never brings one back, nor the host. */
export interface RevokedTokenTable {
  digest: string
  revoked_at: CreatedAt
}

export interface TeamWorkspaceTable {
  id: string
  organization_id: string
  team_id: string
  workspace_id: string
  access: Access
  runs: Runs
  variables: Variables
  state_versions: StateVersions
  sentinel_mocks: SentinelMocks
  workspace_locking: boolean
  run_tasks: boolean
  /** Defaults to false (migration 0006): the service always writes it. */
  policy_overrides: Generated<boolean>
  /** The team's visibility, kept equal to it by triggers (migration 0005); never written by the service. */
  team_visibility: ColumnType<Visibility, never, never>
  created_at: CreatedAt
}

/** Kept by triggers (migration 0002): a workspace's rows, in all and of organization-visible teams. */
export interface WorkspaceAccessCountTable {
  workspace_id: string
  total: number
  organization_visible: number
}

/** The seed's team-access entries already applied, by fingerprint (migration 0004). */
export interface SeedGrantTable {
  fingerprint: string
  applied_at: CreatedAt
  /** The entry's team and workspace (migration 0008; null for entries remembered before it): their removal forgets the entry. */
  team_id: string | null
  workspace_id: string | null
}

/** Who made a change: a token's kind, or the system (a seed file). */
export type AccessorKind = TokenKind | 'system' | 'mirror'

/** One change of access (migration 0007); append-only, written in the statement that makes the change. */
export interface AuditEventTable {
  id: Generated<string>
  organization_id: string
  occurred_at: CreatedAt
  accessor_kind: AccessorKind
  /** The user, team or organization behind the token; null for the system. */
  accessor_id: string | null
  /** Its username, team name or organization name when the change was made; `seed` for the system. */
  accessor_description: string
  request_id: string
  action: AuditAction
  /** What the event is about (migration 0009): a workspace's team access, a team, or a token. */
  resource_type: ColumnType<AuditResourceType, AuditResourceType | undefined, never>
  /** The team or token of a directory event; null for a workspace's (its id is workspace_id). */
  resource_id: string | null
  /** A directory event's meta object (`team`, `user`, `subject`); null for a workspace's. */
  meta: ColumnType<Record<string, string> | null, string | null | undefined, never>
  /** A workspace event's workspace, team and team name; null for a directory event. */
  workspace_id: string | null
  team_id: string | null
  team_name: string | null
  /** `access=… runs=… …` after the change (wire names); null for a removal. */
  permissions: string | null
}

/** A mirrored organization (DESIGN §13, migration 0013): where it is read from, and its last successful run. */
export interface MirrorTable {
  organization_id: string
  /** The host read from (`app.terraform.io`). */
  host: string
  succeeded_at: ColumnType<Date, Date | string, Date | string>
  duration_ms: number
  requests: number
}
