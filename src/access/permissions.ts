import type { Access, Runs, SentinelMocks, StateVersions, Variables } from '../../schemas/common.js'

/**
 * The permission attributes of a team-workspace, wire names.
 * @see https://developer.hashicorp.com/terraform/cloud-docs/api-docs/team-access
 */
export interface Permissions {
  runs: Runs
  variables: Variables
  'state-versions': StateVersions
  'sentinel-mocks': SentinelMocks
  'workspace-locking': boolean
  'run-tasks': boolean
  'policy-overrides': boolean
}

export type PermissionName = keyof Permissions
export type FixedAccess = Exclude<Access, 'custom'>

export const ACCESS_LEVELS: readonly Access[] = ['read', 'plan', 'write', 'admin', 'custom']
export const PERMISSION_NAMES: readonly PermissionName[] =
  ['runs', 'variables', 'state-versions', 'sentinel-mocks', 'workspace-locking', 'run-tasks', 'policy-overrides']

/** The value sets of each permission, weakest first (the order "strongest wins" compares by). */
export const PERMISSION_VALUES = {
  runs: ['read', 'plan', 'apply'],
  variables: ['none', 'read', 'write'],
  'state-versions': ['none', 'read-outputs', 'read', 'write'],
  'sentinel-mocks': ['none', 'read'],
  'workspace-locking': [false, true],
  'run-tasks': [false, true],
  'policy-overrides': [false, true]
} as const satisfies { [K in PermissionName]: readonly Permissions[K][] }

/** DESIGN §4: what each fixed level implies; read-only unless access is custom. */
export const IMPLICIT_PERMISSIONS: Readonly<Record<FixedAccess, Readonly<Permissions>>> = {
  read: { runs: 'read', variables: 'read', 'state-versions': 'read', 'sentinel-mocks': 'none', 'workspace-locking': false, 'run-tasks': false, 'policy-overrides': false },
  plan: { runs: 'plan', variables: 'read', 'state-versions': 'read', 'sentinel-mocks': 'none', 'workspace-locking': false, 'run-tasks': false, 'policy-overrides': false },
  write: { runs: 'apply', variables: 'write', 'state-versions': 'write', 'sentinel-mocks': 'read', 'workspace-locking': true, 'run-tasks': false, 'policy-overrides': false },
  admin: { runs: 'apply', variables: 'write', 'state-versions': 'write', 'sentinel-mocks': 'read', 'workspace-locking': true, 'run-tasks': true, 'policy-overrides': false }
}

/** What `custom` starts from on add, for every attribute the body omits (the seed spec's defaults). */
export const CUSTOM_DEFAULTS: Readonly<Permissions> = {
  runs: 'read', variables: 'none', 'state-versions': 'none', 'sentinel-mocks': 'none', 'workspace-locking': false, 'run-tasks': false, 'policy-overrides': false
}

export interface CustomOnlyViolation {
  attribute: PermissionName
  detail: string
}

const HUMAN_NAMES: Record<PermissionName, string> = {
  runs: 'Runs',
  variables: 'Variables',
  'state-versions': 'State versions',
  'sentinel-mocks': 'Sentinel mocks',
  'workspace-locking': 'Workspace locking',
  'run-tasks': 'Run tasks',
  'policy-overrides': 'Policy overrides'
}

/**
 * The custom-only rule: under a fixed level, a permission may only carry the value that
 * level implies (sending it back unchanged is fine; changing it is not).
 */
export function customOnlyViolations (access: Access, requested: Partial<Permissions>): CustomOnlyViolation[] {
  if (access === 'custom') return []
  const implied = IMPLICIT_PERMISSIONS[access]
  return PERMISSION_NAMES
    .filter((name) => requested[name] !== undefined && requested[name] !== implied[name])
    .map((name) => ({
      attribute: name,
      detail: `${HUMAN_NAMES[name]} is read-only when access level is '${access}'; use the 'custom' access level to set this attribute.`
    }))
}

/** The permissions a new row gets: the level's implicit ones, or custom defaults overlaid with the request. */
export function permissionsOnAdd (access: Access, requested: Partial<Permissions>): Permissions {
  return access === 'custom' ? { ...CUSTOM_DEFAULTS, ...defined(requested) } : { ...IMPLICIT_PERMISSIONS[access] }
}

/** What an update writes: the columns it sets, and the current levels under which it is allowed. */
export interface UpdateChanges {
  /** The new access level, when the body names one. */
  access?: Access
  /** The permission values to write; those absent keep their current value. */
  permissions: Partial<Permissions>
  /** The current levels the row may have for this update to be valid (the custom-only rule, applied to the row). */
  currentAccessIn: readonly Access[]
}

/**
 * The update semantics of DESIGN §4, as changes to apply to whatever the row holds when the write
 * lands (so one UPDATE statement suffices, and concurrent updates of different attributes compose):
 * switching to a fixed level resets every permission to that level's; switching to (or staying on)
 * custom writes only the permissions the body gives.
 * Returns the violations instead when the body contradicts the level it names.
 */
export function updateChanges (access: Access | undefined, requested: Partial<Permissions>): UpdateChanges | CustomOnlyViolation[] {
  const given = defined(requested)
  if (access !== undefined) {
    const violations = customOnlyViolations(access, given)
    if (violations.length > 0) return violations
    const permissions = access === 'custom' ? given : { ...IMPLICIT_PERMISSIONS[access] }
    return { access, permissions, currentAccessIn: ACCESS_LEVELS }
  }
  // the level stays: the values given must suit the row's current level
  return { permissions: given, currentAccessIn: ACCESS_LEVELS.filter((level) => customOnlyViolations(level, given).length === 0) }
}

/**
 * The attribute-wise strongest of several permission sets (each attribute compared in its own
 * order, weakest first); null when there are none.
 */
export function strongestPermissions (sets: readonly Permissions[]): Permissions | null {
  if (sets.length === 0) return null
  const strongest = (name: PermissionName) => {
    const order = PERMISSION_VALUES[name] as readonly unknown[]
    return sets.map((set) => set[name]).reduce((a, b) => (order.indexOf(b) > order.indexOf(a) ? b : a))
  }
  return Object.fromEntries(PERMISSION_NAMES.map((name) => [name, strongest(name)])) as unknown as Permissions
}

function defined (requested: Partial<Permissions>): Partial<Permissions> {
  return Object.fromEntries(Object.entries(requested).filter(([, v]) => v !== undefined)) as Partial<Permissions>
}
