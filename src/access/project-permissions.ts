import type { ProjectAccess, ProjectAccessObject, WorkspaceAccessObject } from '../../schemas/projects.js'
import type { Access } from '../../schemas/common.js'
import type { TeamProjectTable } from '../db/database.js'
import type { Permissions } from './permissions.js'
import type { ProjectGrant } from './effective-access.js'

/**
 * Team-project access (DESIGN §11.2), stated once: what each level implies, what custom starts
 * from, the custom-only rule, the wire ↔ column names, and what a row grants on each workspace of
 * its project. The SQL predicates (./predicates.ts) read the columns; this file says what they hold.
 */

/** Both permission objects of a team-project, wire names. */
export interface ProjectPermissions {
  'project-access': ProjectAccessObject
  'workspace-access': WorkspaceAccessObject
}
type Part = keyof ProjectPermissions

export const PROJECT_LEVELS: readonly ProjectAccess[] = ['read', 'write', 'maintain', 'admin', 'custom']
/** The order "the caller holds at least this" compares levels by; custom is reached by any level. */
export const PROJECT_RANK: Readonly<Record<ProjectAccess, number>> = { custom: 0, read: 1, write: 2, maintain: 3, admin: 4 }

const workspace = (runs: WorkspaceAccessObject['runs'], sentinel: WorkspaceAccessObject['sentinel-mocks'], state: WorkspaceAccessObject['state-versions'],
  variables: WorkspaceAccessObject['variables'], flags: { create: boolean, locking: boolean, move: boolean, delete: boolean, 'run-tasks': boolean }): WorkspaceAccessObject =>
  ({ runs, 'sentinel-mocks': sentinel, 'state-versions': state, variables, ...flags })

const none = { create: false, locking: false, move: false, delete: false, 'run-tasks': false }
const readProject: ProjectAccessObject = { settings: 'read', teams: 'none', 'variable-sets': 'none' }

/** DESIGN §11.2's table: what each fixed level implies, and custom's defaults. */
export const IMPLIED_PROJECT_PERMISSIONS: Readonly<Record<ProjectAccess, Readonly<ProjectPermissions>>> = {
  read: { 'project-access': readProject, 'workspace-access': workspace('read', 'none', 'read', 'read', none) },
  write: { 'project-access': readProject, 'workspace-access': workspace('apply', 'read', 'write', 'write', { ...none, locking: true }) },
  maintain: { 'project-access': readProject, 'workspace-access': workspace('apply', 'read', 'write', 'write', { create: true, locking: true, move: false, delete: true, 'run-tasks': true }) },
  admin: { 'project-access': { settings: 'delete', teams: 'manage', 'variable-sets': 'write' }, 'workspace-access': workspace('apply', 'read', 'write', 'write', { create: true, locking: true, move: true, delete: true, 'run-tasks': true }) },
  custom: { 'project-access': readProject, 'workspace-access': workspace('read', 'none', 'none', 'none', none) }
}

/** Each wire attribute's column (the workspace-access ones a workspace grant has too keep its names). */
export const PROJECT_COLUMNS = {
  'project-access': { settings: 'project_settings', teams: 'project_teams', 'variable-sets': 'project_variable_sets' },
  'workspace-access': {
    runs: 'runs',
    'sentinel-mocks': 'sentinel_mocks',
    'state-versions': 'state_versions',
    variables: 'variables',
    create: 'workspace_create',
    locking: 'workspace_locking',
    move: 'workspace_move',
    delete: 'workspace_delete',
    'run-tasks': 'run_tasks'
  }
} as const satisfies { [P in Part]: { [K in keyof ProjectPermissions[P]]: keyof TeamProjectTable } }

export type ProjectPermissionColumns = Pick<TeamProjectTable, typeof PROJECT_COLUMNS[Part][keyof typeof PROJECT_COLUMNS[Part]]>

const entries = <P extends Part>(part: P) => Object.entries(PROJECT_COLUMNS[part]) as Array<[keyof ProjectPermissions[P] & string, keyof ProjectPermissionColumns]>

/** Every permission column of a team-project row. */
export const PROJECT_PERMISSION_COLUMNS: ReadonlyArray<keyof ProjectPermissionColumns> =
  [...entries('project-access'), ...entries('workspace-access')].map(([, column]) => column)

/** The value sets of each attribute, weakest first (booleans false first). */
export const PROJECT_VALUES: { [C in keyof ProjectPermissionColumns]: readonly unknown[] } = {
  project_settings: ['read', 'update', 'delete'],
  project_teams: ['none', 'read', 'manage'],
  project_variable_sets: ['none', 'read', 'write'],
  runs: ['read', 'plan', 'apply'],
  sentinel_mocks: ['none', 'read'],
  state_versions: ['none', 'read-outputs', 'read', 'write'],
  variables: ['none', 'read', 'write'],
  workspace_create: [false, true],
  workspace_locking: [false, true],
  workspace_move: [false, true],
  workspace_delete: [false, true],
  run_tasks: [false, true]
}

/** A row's permission objects, by wire name. */
export function projectPermissionsOf (row: ProjectPermissionColumns): ProjectPermissions {
  const part = <P extends Part>(p: P) => Object.fromEntries(entries(p).map(([name, column]) => [name, row[column]])) as unknown as ProjectPermissions[P]
  return { 'project-access': part('project-access'), 'workspace-access': part('workspace-access') }
}

/** Permission objects (each attribute optional) as column values. */
export function projectPermissionColumns (given: { [P in Part]?: Partial<ProjectPermissions[P]> }): Partial<ProjectPermissionColumns> {
  const columns: Record<string, unknown> = {}
  for (const p of ['project-access', 'workspace-access'] as const) {
    for (const [name, column] of entries(p)) {
      const value = (given[p] as Record<string, unknown> | undefined)?.[name]
      if (value !== undefined) columns[column] = value
    }
  }
  return columns as Partial<ProjectPermissionColumns>
}

/** A custom-only violation: the attribute's JSON pointer under `data/attributes`, and what is wrong. */
export interface ProjectCustomOnlyViolation { pointer: string, detail: string }

/**
 * The custom-only rule at project scope (§11.2): under a fixed level, both objects may be absent
 * or empty (`{}`, as the provider sends); any key set in them is refused.
 */
export function projectCustomOnlyViolations (access: ProjectAccess, given: { [P in Part]?: Partial<ProjectPermissions[P]> }): ProjectCustomOnlyViolation[] {
  if (access === 'custom') return []
  return (['project-access', 'workspace-access'] as const).flatMap((p) => Object.keys(given[p] ?? {}).map((name) => ({
    pointer: `/data/attributes/${p}/${name}`,
    detail: `${p} ${name} is read-only when access level is '${access}'; use the 'custom' access level to set it.`
  })))
}

/** The columns a new row gets: the level's implied values, or custom's defaults overlaid with what is given. */
export function projectColumnsOnAdd (access: ProjectAccess, given: { [P in Part]?: Partial<ProjectPermissions[P]> }): ProjectPermissionColumns {
  const base = projectPermissionColumns(IMPLIED_PROJECT_PERMISSIONS[access]) as ProjectPermissionColumns
  return access === 'custom' ? { ...base, ...projectPermissionColumns(given) } : base
}

/**
 * The columns an update writes: a fixed level resets every attribute to its implied value; custom
 * (named, or kept) writes only what is given — switching to custom from a fixed level starts from
 * the level's values, as HCP Terraform keeps them.
 */
export function projectColumnsOnUpdate (access: ProjectAccess | undefined, given: { [P in Part]?: Partial<ProjectPermissions[P]> }): Partial<ProjectPermissionColumns> {
  if (access !== undefined && access !== 'custom') return projectPermissionColumns(IMPLIED_PROJECT_PERMISSIONS[access])
  return projectPermissionColumns(given)
}

/**
 * What a team-project row grants on each workspace of its project (§11.2): `maintain` and `admin`
 * are a workspace's admin, `read`/`write` themselves, `custom` custom — with the workspace
 * permissions from its workspace-access (locking as workspace-locking; never policy overrides).
 */
export const WORKSPACE_LEVEL_OF: Readonly<Record<ProjectAccess, Access>> = { read: 'read', write: 'write', maintain: 'admin', admin: 'admin', custom: 'custom' }

export function workspaceGrantOf (access: ProjectAccess, row: Pick<TeamProjectTable, 'runs' | 'variables' | 'state_versions' | 'sentinel_mocks' | 'workspace_locking' | 'run_tasks'>): { access: Access, permissions: Permissions } {
  return {
    access: WORKSPACE_LEVEL_OF[access],
    permissions: {
      runs: row.runs,
      variables: row.variables,
      'state-versions': row.state_versions,
      'sentinel-mocks': row.sentinel_mocks,
      'workspace-locking': row.workspace_locking,
      'run-tasks': row.run_tasks,
      'policy-overrides': false
    }
  }
}

/** The columns of a team-project row that a workspace grant needs, as a statement selects them (`tp_` before each). */
export const PROJECT_GRANT_COLUMNS = ['id', 'project_id', 'access', 'runs', 'variables', 'state_versions', 'sentinel_mocks', 'workspace_locking', 'run_tasks'] as const
export type ProjectGrantRow = { [C in typeof PROJECT_GRANT_COLUMNS[number] as `tp_${C}`]: TeamProjectTable[C] | null }

/** A row's `tp_` columns (a left join: nulls when the team has no row on the project) as the grant it gives on a workspace. */
export function projectGrantOf (row: ProjectGrantRow): ProjectGrant | null {
  if (row.tp_id === null) return null
  return {
    id: row.tp_id,
    projectId: row.tp_project_id!,
    projectAccess: row.tp_access!,
    ...workspaceGrantOf(row.tp_access!, {
      runs: row.tp_runs!,
      variables: row.tp_variables!,
      state_versions: row.tp_state_versions!,
      sentinel_mocks: row.tp_sentinel_mocks!,
      workspace_locking: row.tp_workspace_locking!,
      run_tasks: row.tp_run_tasks!
    })
  }
}
