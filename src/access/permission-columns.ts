import { PERMISSION_NAMES, PERMISSION_VALUES, type PermissionName, type Permissions } from './permissions.js'
import type { TeamWorkspaceTable } from '../db/database.js'

/**
 * The one place where a permission's wire name meets its column (the wire is kebab-case,
 * PostgreSQL snake_case). Repository, serializer and seed all go through here, so a new
 * permission is a line in this table, a column in a migration and its values in ./permissions.
 */
export const PERMISSION_COLUMNS = {
  runs: 'runs',
  variables: 'variables',
  'state-versions': 'state_versions',
  'sentinel-mocks': 'sentinel_mocks',
  'workspace-locking': 'workspace_locking',
  'run-tasks': 'run_tasks',
  'policy-overrides': 'policy_overrides'
} as const satisfies { [K in PermissionName]: keyof TeamWorkspaceTable }

export type PermissionColumn = typeof PERMISSION_COLUMNS[PermissionName]
export type PermissionRow = { [K in PermissionName as typeof PERMISSION_COLUMNS[K]]: Permissions[K] }

/** Every permission column, in the order of PERMISSION_NAMES. */
export const PERMISSION_COLUMN_NAMES: readonly PermissionColumn[] = PERMISSION_NAMES.map((name) => PERMISSION_COLUMNS[name])

/** The SQL type of a permission's column: flags are boolean, the rest text. */
export const columnType = (name: PermissionName): 'boolean' | 'text' =>
  typeof PERMISSION_VALUES[name][0] === 'boolean' ? 'boolean' : 'text'

/** A row's permissions, by wire name. */
export function permissionsOf (row: PermissionRow): Permissions {
  return Object.fromEntries(PERMISSION_NAMES.map((name) => [name, row[PERMISSION_COLUMNS[name]]])) as unknown as Permissions
}

/** Permissions as column values. */
export function permissionColumns (permissions: Permissions): PermissionRow {
  return Object.fromEntries(PERMISSION_NAMES.map((name) => [PERMISSION_COLUMNS[name], permissions[name]])) as unknown as PermissionRow
}

/** Only the permission attributes of an object that may carry others (a request body, a seed entry). */
export function pickPermissions (from: Partial<Permissions>): Partial<Permissions> {
  return Object.fromEntries(PERMISSION_NAMES.filter((name) => from[name] !== undefined).map((name) => [name, from[name]])) as Partial<Permissions>
}
