import { ORGANIZATION_ACCESS_FLAGS, type OrganizationAccessFlag } from '../../schemas/organization-access.js'
import { CUSTOM_DEFAULTS, IMPLICIT_PERMISSIONS, PERMISSION_VALUES, type Permissions } from '../access/permissions.js'
import { IMPLIED_PROJECT_PERMISSIONS, PROJECT_LEVELS } from '../access/project-permissions.js'
import type { MirrorMembership, MirrorTeam, MirrorTeamProject, MirrorTeamWorkspace } from '../directory/mirror-snapshot.js'

/**
 * HCP Terraform's resources as the mirror keeps them (DESIGN §13.2): attributes and relationships it
 * does not use are ignored; a value it does not know — a newer level, an unknown flag or
 * permission — is kept where the snapshot has a place for it (a level it does not know is kept as
 * `custom` with the permissions the row gives) and said once in the notes; never a failed run.
 * A permission the answer leaves out is what its level implies (DESIGN §4, §11.2).
 */
export interface Resource { id: string, type: string, attributes?: Record<string, any>, relationships?: Record<string, any> }

/** What was read but has no place here, each said once. */
export class Notes {
  private readonly said = new Set<string>()
  add (note: string): void { this.said.add(note) }
  all (): string[] { return [...this.said] }
}

const KNOWN_FLAGS = new Set<string>(ORGANIZATION_ACCESS_FLAGS)
const WORKSPACE_LEVELS = ['read', 'plan', 'write', 'admin', 'custom'] as const

/** `value` when it is one of `allowed`; absent: `fallback`; anything else: `fallback`, said once. */
function oneOf<T> (value: unknown, allowed: readonly T[], fallback: T, what: string, notes: Notes): T {
  if (allowed.includes(value as T)) return value as T
  if (value !== undefined && value !== null) notes.add(`${what} ${JSON.stringify(value)} is not one this service knows: read as ${JSON.stringify(fallback)}`)
  return fallback
}

/** The id a relationship names (`relationships[name].data.id`), if it names one. */
export function relatedId (resource: Resource, name: string): string | undefined {
  const id: unknown = resource.relationships?.[name]?.data?.id
  return typeof id === 'string' && id !== '' ? id : undefined
}

/** The ids a to-many relationship names. */
export function relatedIds (resource: Resource, name: string): string[] {
  const data: unknown = resource.relationships?.[name]?.data
  return Array.isArray(data) ? data.map((r: Partial<Resource>) => r?.id).filter((id): id is string => typeof id === 'string' && id !== '') : []
}

export const text = (value: unknown): string | null => typeof value === 'string' ? value : null

export function decodeTeam (team: Resource, notes: Notes): MirrorTeam {
  const name = String(team.attributes?.name ?? team.id)
  const flags: Partial<Record<OrganizationAccessFlag, boolean>> = {}
  for (const [flag, value] of Object.entries(team.attributes?.['organization-access'] ?? {})) {
    if (KNOWN_FLAGS.has(flag)) flags[flag as OrganizationAccessFlag] = value === true
    else if (value === true) notes.add(`organization-access "${flag}" (on team "${name}", perhaps others too) has no place here: left out`)
  }
  return {
    id: team.id,
    name,
    visibility: oneOf(team.attributes?.visibility, ['secret', 'organization'] as const, 'secret', `team "${name}": visibility`, notes),
    // HCP Terraform's owners team is the one named owners: no attribute marks it
    isOwners: name === 'owners',
    organizationAccess: flags,
    userIds: relatedIds(team, 'users')
  }
}

/** An organization membership, or undefined (said once) when it names no user. */
export function decodeMembership (membership: Resource, notes: Notes): MirrorMembership | undefined {
  const userId = relatedId(membership, 'user')
  if (userId === undefined) {
    notes.add('an organization membership that names no user: left out')
    return undefined
  }
  return {
    id: membership.id,
    userId,
    status: oneOf(membership.attributes?.status, ['active', 'invited'] as const, 'invited', 'membership status', notes),
    teamIds: relatedIds(membership, 'teams')
  }
}

/** A team-workspaces row (wire names: runs, variables, state-versions, sentinel-mocks, workspace-locking, run-tasks, policy-overrides). */
export function decodeTeamWorkspace (row: Resource, notes: Notes): MirrorTeamWorkspace | undefined {
  const [teamId, workspaceId] = [relatedId(row, 'team'), relatedId(row, 'workspace')]
  if (teamId === undefined || workspaceId === undefined) {
    notes.add('a team access row that names no team or no workspace: left out')
    return undefined
  }
  const a = row.attributes ?? {}
  const access = levelOf(a.access, WORKSPACE_LEVELS, 'team access level', notes)
  const base = access === 'custom' ? CUSTOM_DEFAULTS : IMPLICIT_PERMISSIONS[access]
  const permission = <K extends keyof Permissions>(name: K): Permissions[K] =>
    oneOf(a[name], PERMISSION_VALUES[name] as unknown as readonly Permissions[K][], base[name], `team access ${name}`, notes)
  return {
    id: row.id,
    teamId,
    workspaceId,
    access,
    runs: permission('runs'),
    variables: permission('variables'),
    stateVersions: permission('state-versions'),
    sentinelMocks: permission('sentinel-mocks'),
    workspaceLocking: permission('workspace-locking'),
    runTasks: permission('run-tasks'),
    ...(typeof a['policy-overrides'] === 'boolean' ? { policyOverrides: a['policy-overrides'] } : {})
  }
}

/** A team-projects row: its level, `project-access` (settings, teams, variable-sets) and `workspace-access`. */
export function decodeTeamProject (row: Resource, notes: Notes): MirrorTeamProject | undefined {
  const [teamId, projectId] = [relatedId(row, 'team'), relatedId(row, 'project')]
  if (teamId === undefined || projectId === undefined) {
    notes.add('a project team access row that names no team or no project: left out')
    return undefined
  }
  const a = row.attributes ?? {}
  const access = levelOf(a.access, PROJECT_LEVELS, 'project access level', notes)
  const implied = IMPLIED_PROJECT_PERMISSIONS[access]
  const p: Record<string, unknown> = a['project-access'] ?? {}
  const w: Record<string, unknown> = a['workspace-access'] ?? {}
  const project = <K extends keyof typeof implied['project-access']>(name: K, allowed: ReadonlyArray<typeof implied['project-access'][K]>) =>
    oneOf(p[name], allowed, implied['project-access'][name], `project-access ${name}`, notes)
  const workspace = <K extends keyof typeof implied['workspace-access']>(name: K, allowed: ReadonlyArray<typeof implied['workspace-access'][K]>) =>
    oneOf(w[name], allowed, implied['workspace-access'][name], `workspace-access ${name}`, notes)
  if (w['policy-overrides'] === true) notes.add('workspace-access "policy-overrides" of a project\'s team access has no place here (a project grants no policy overrides): left out')
  const flag = [false, true] as const
  return {
    id: row.id,
    teamId,
    projectId,
    access,
    projectAccess: {
      settings: project('settings', ['read', 'update', 'delete']),
      teams: project('teams', ['none', 'read', 'manage']),
      variableSets: project('variable-sets', ['none', 'read', 'write'])
    },
    workspaceAccess: {
      runs: workspace('runs', PERMISSION_VALUES.runs),
      variables: workspace('variables', PERMISSION_VALUES.variables),
      stateVersions: workspace('state-versions', PERMISSION_VALUES['state-versions']),
      sentinelMocks: workspace('sentinel-mocks', PERMISSION_VALUES['sentinel-mocks']),
      create: workspace('create', flag),
      locking: workspace('locking', flag),
      delete: workspace('delete', flag),
      move: workspace('move', flag),
      runTasks: workspace('run-tasks', flag)
    }
  }
}

/** A level this service knows, or `custom` (said once): the row's permissions are then kept as given. */
function levelOf<T extends string> (value: unknown, known: readonly T[], what: string, notes: Notes): T | 'custom' {
  if (known.includes(value as T)) return value as T
  notes.add(`${what} ${JSON.stringify(value ?? null)} is not one this service knows: kept as custom, with the permissions HCP Terraform gives`)
  return 'custom'
}
