import type { Visibility } from '../../schemas/common.js'
import type { OrganizationAccess, OrganizationAccessFlag } from '../access/organization-access.js'
import type { ManagedBy } from '../db/database.js'

/** What the host's directory takes and answers (DESIGN §9.1): `app.teamAccess.directory`, or `directory(db)` in a script. */

/** Every call's last, optional argument: who is acting and the request, as the audit events record them. */
export interface DirectoryCallOptions {
  /** The accessor's description in the audit events (`auth.type` `System`); default `host`. */
  actor?: string | undefined
  /** The request id the audit events carry; default a new random UUID. */
  requestId?: string | undefined
}

export interface DirectoryOrganization {
  id: string
  name: string
  managedBy: ManagedBy
  createdAt: Date
}

export interface DirectoryUser {
  id: string
  /** Null only for the user an invitation made (DESIGN §14.2) until the person arrives. */
  username: string | null
  email: string | null
  managedBy: ManagedBy
  createdAt: Date
}

export interface DirectoryTeam {
  id: string
  organizationId: string
  name: string
  visibility: Visibility
  /** The organization's owners team. */
  owners: boolean
  /** Every flag, by its wire name. */
  organizationAccess: OrganizationAccess
  ssoTeamId: string | null
  allowMemberTokenManagement: boolean
  managedBy: ManagedBy
  createdAt: Date
}

export interface DirectoryMembership {
  teamId: string
  userId: string
  managedBy: ManagedBy
}

/** A person's membership of an organization (DESIGN §14.2). */
export interface DirectoryOrganizationMembership {
  id: string
  organizationId: string
  /** Always a user: an invitation made one for its email (username null until the person arrives). */
  userId: string
  email: string | null
  /** `invited` until the person arrives (a seed, the host or a mirror declares a user with the email). */
  status: 'active' | 'invited'
  /** Its teams: the person's team memberships there, or the teams an invitation was given. */
  teamIds: string[]
  managedBy: ManagedBy
  createdAt: Date
}

export interface NewOrganizationMembership {
  organizationId: string
  /** A user with this email (case-insensitively) makes it active; none: an invitation, and a user made for the email. */
  email: string
  /** Teams of the organization: team memberships at once, or when the invited person arrives. */
  teamIds?: string[] | undefined
}

export interface DirectoryWorkspace {
  id: string
  organizationId: string
  name: string
  /** The project it is in (DESIGN §11.1). */
  projectId: string
  managedBy: ManagedBy
  createdAt: Date
}

/** A project (DESIGN §11): every organization has its default one, never removed. */
export interface DirectoryProject {
  id: string
  organizationId: string
  name: string
  description: string | null
  isDefault: boolean
  managedBy: ManagedBy
  createdAt: Date
}

export interface NewProject {
  organizationId: string
  /** 3–40 letters, digits, spaces, `-`, `_`; unique in the organization, case-insensitively. */
  name: string
  description?: string | null | undefined
  /** An explicit id (`prj-…`); generated when absent. */
  id?: string | undefined
}
export interface ProjectChange { name?: string | undefined, description?: string | null | undefined }

/** A new token: its id, and its secret — the only time it is seen (only its digest is stored). */
export interface DirectoryToken {
  id: string
  secret: string
}

/** Organization-access flags by their wire names (`manage-workspaces`, …); absent or undefined: not given. */
export type OrganizationAccessInput = { [flag in OrganizationAccessFlag]?: boolean | undefined }

export interface NewOrganization {
  /** URL-safe, unique. */
  name: string
  /** An explicit id (`org-…`); generated when absent. */
  id?: string | undefined
}
export interface OrganizationChange { name?: string | undefined }

export interface NewUser {
  /** Unique. */
  username: string
  /** Unique, case-insensitively. An invitation to it becomes this user's (its id kept, when no `id` is given): active, with its teams. */
  email?: string | undefined
  /** An explicit id (`user-…`); generated when absent. */
  id?: string | undefined
}
/** A rename, an email (null: none; one an invitation waits for makes its membership this user's), or both. */
export interface UserChange { username?: string | undefined, email?: string | null | undefined }

/** A team's attributes that a change may name; absent (or undefined) ones keep their value. */
export interface TeamChange {
  /** Unique within the organization; the owners team's is fixed. */
  name?: string | undefined
  /** Default `secret`. */
  visibility?: Visibility | undefined
  /** Merged flag by flag; on create, absent flags are false. The owners team has none. */
  organizationAccess?: OrganizationAccessInput | undefined
  /** Kept and answered; null or empty clears it. */
  ssoTeamId?: string | null | undefined
  /** Kept and answered; default true. */
  allowMemberTokenManagement?: boolean | undefined
}

export interface NewTeam extends TeamChange {
  organizationId: string
  name: string
  /** An explicit id (`team-…`); generated when absent. */
  id?: string | undefined
  /** The organization's owners team (at most one per organization). */
  owners?: boolean | undefined
}

export interface Membership {
  teamId: string
  userId: string
}

export interface NewWorkspace {
  organizationId: string
  /** URL-safe, unique within the organization. */
  name: string
  /** An explicit id (`ws-…`); generated when absent. */
  id?: string | undefined
  /** The project it is in; absent: the organization's default project. */
  projectId?: string | undefined
}
/** A rename, a move to another project of the organization (the access it inherits moves with it, from the next request), or both. */
export interface WorkspaceChange { name?: string | undefined, projectId?: string | undefined }

/** Whose token: a team's, an organization's or a user's, by id. */
export type TokenSubject = { teamId: string } | { organizationId: string } | { userId: string }

export interface NewToken {
  /** The bearer secret (8 to 512 characters); generated as the API does when absent. A revoked secret is refused. */
  secret?: string | undefined
  /** Unique per team. */
  description?: string | null | undefined
  /** When the token stops working. */
  expiresAt?: Date | string | null | undefined
}

/** The host's directory functions: `app.teamAccess.directory`, or `directory(db)` in a script. */
export interface Directory {
  /** Creates an organization, managed by the host. */
  createOrganization: (organization: NewOrganization, options?: DirectoryCallOptions) => Promise<DirectoryOrganization>
  /** Renames an organization; a change that changes nothing writes nothing. */
  changeOrganization: (id: string, change: OrganizationChange, options?: DirectoryCallOptions) => Promise<DirectoryOrganization>
  /**
   * Removes an organization and everything in it: its teams (with their memberships, tokens and
   * team access), workspaces and tokens, each removal with its audit events.
   */
  removeOrganization: (id: string, options?: DirectoryCallOptions) => Promise<void>

  /** Creates a user, managed by the host. */
  createUser: (user: NewUser, options?: DirectoryCallOptions) => Promise<DirectoryUser>
  /** Renames a user. */
  changeUser: (id: string, change: UserChange, options?: DirectoryCallOptions) => Promise<DirectoryUser>
  /** Removes a user with its memberships (`remove_member`, organization-membership `destroy`) and tokens (`destroy`); refused while it is an owners team's last member. */
  removeUser: (id: string, options?: DirectoryCallOptions) => Promise<void>

  /** Invites a person by email into an organization (organization-membership `create`; `add_member` per team of an active one), managed by the host. */
  createOrganizationMembership: (membership: NewOrganizationMembership, options?: DirectoryCallOptions) => Promise<DirectoryOrganizationMembership>
  /** Ends a membership: the person leaves every team of the organization (`remove_member`), then it (`destroy`); never the owners team's last member. */
  removeOrganizationMembership: (id: string, options?: DirectoryCallOptions) => Promise<void>
  /** An organization's memberships, oldest first. */
  listOrganizationMemberships: (organizationId: string, options?: DirectoryCallOptions) => Promise<DirectoryOrganizationMembership[]>

  /** Creates a team, managed by the host (`create` event). */
  createTeam: (team: NewTeam, options?: DirectoryCallOptions) => Promise<DirectoryTeam>
  /** Changes what `change` names, nothing else (`update` event; none when nothing differs). */
  changeTeam: (id: string, change: TeamChange, options?: DirectoryCallOptions) => Promise<DirectoryTeam>
  /** Removes a team with its memberships, tokens and team access (`remove_team` per row, `destroy`); never the owners team. */
  removeTeam: (id: string, options?: DirectoryCallOptions) => Promise<void>

  /** Adds a user to a team (`add_member`); a present member is left as it is. */
  addMember: (membership: Membership, options?: DirectoryCallOptions) => Promise<DirectoryMembership>
  /** Removes a user from a team (`remove_member`); an absent member is no error; never the owners team's last member. */
  removeMember: (membership: Membership, options?: DirectoryCallOptions) => Promise<void>

  /** Creates a workspace, managed by the host. */
  createWorkspace: (workspace: NewWorkspace, options?: DirectoryCallOptions) => Promise<DirectoryWorkspace>
  /** Renames a workspace, or moves it to another project of its organization. */
  changeWorkspace: (id: string, change: WorkspaceChange, options?: DirectoryCallOptions) => Promise<DirectoryWorkspace>
  /** Removes a workspace with its team access (`remove_team` per row). */
  removeWorkspace: (id: string, options?: DirectoryCallOptions) => Promise<void>

  /** Creates a project, managed by the host (`project` create event). */
  createProject: (project: NewProject, options?: DirectoryCallOptions) => Promise<DirectoryProject>
  /** Renames a project or changes its description (`update` event; none when nothing differs). */
  changeProject: (id: string, change: ProjectChange, options?: DirectoryCallOptions) => Promise<DirectoryProject>
  /** Removes a project with its team access (`team-project` destroy per row, then `destroy`); never the default project, nor one that holds workspaces (`invalid`). */
  removeProject: (id: string, options?: DirectoryCallOptions) => Promise<void>

  /** Creates a token of a team, an organization or a user, managed by the host (`create` event); its secret is answered once. */
  createToken: (subject: TokenSubject, token?: NewToken, options?: DirectoryCallOptions) => Promise<DirectoryToken>
  /** Removes a token (`destroy` event): it answers 401 from the next request on, and its secret is revoked for good. */
  removeToken: (id: string, options?: DirectoryCallOptions) => Promise<void>
}
