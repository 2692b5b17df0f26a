import type { OrganizationAccessFlag } from '../../schemas/organization-access.js'
import type { TeamTable } from '../db/database.js'

/**
 * The one place where a team's organization-access flag (DESIGN §9.3, kebab-case on the wire)
 * meets its column. Every flag go-tfe sends is stored and answered; of them, manage-workspaces and
 * read-workspaces grant workspace access (§3) and manage-teams and manage-membership grant team
 * management (src/access/predicates.ts); the others are kept and echoed.
 */
export const ORGANIZATION_ACCESS_COLUMNS = {
  'manage-policies': 'manage_policies',
  'manage-policy-overrides': 'manage_policy_overrides',
  'delegate-policy-overrides': 'delegate_policy_overrides',
  'manage-workspaces': 'manage_workspaces',
  'manage-vcs-settings': 'manage_vcs_settings',
  'manage-providers': 'manage_providers',
  'manage-modules': 'manage_modules',
  'manage-run-tasks': 'manage_run_tasks',
  'manage-projects': 'manage_projects',
  'read-workspaces': 'read_workspaces',
  'read-projects': 'read_projects',
  'manage-membership': 'manage_membership',
  'manage-teams': 'manage_teams',
  'manage-organization-access': 'manage_organization_access',
  'access-secret-teams': 'access_secret_teams',
  'manage-agent-pools': 'manage_agent_pools'
} as const satisfies Record<OrganizationAccessFlag, keyof TeamTable>

export type { OrganizationAccessFlag }
export type OrganizationAccessColumn = typeof ORGANIZATION_ACCESS_COLUMNS[OrganizationAccessFlag]
export type OrganizationAccess = Record<OrganizationAccessFlag, boolean>

export const ORGANIZATION_ACCESS_FLAGS = Object.keys(ORGANIZATION_ACCESS_COLUMNS) as OrganizationAccessFlag[]
export const ORGANIZATION_ACCESS_COLUMN_NAMES: readonly OrganizationAccessColumn[] = ORGANIZATION_ACCESS_FLAGS.map((flag) => ORGANIZATION_ACCESS_COLUMNS[flag])

/** A team row's flags, by wire name (every flag; a row's false is false). */
export function organizationAccessOf (row: Record<OrganizationAccessColumn, boolean>): OrganizationAccess {
  return Object.fromEntries(ORGANIZATION_ACCESS_FLAGS.map((flag) => [flag, row[ORGANIZATION_ACCESS_COLUMNS[flag]]])) as OrganizationAccess
}

/** The columns of the flags an object gives (a request body, a seed entry); absent flags are left out. */
export function organizationAccessColumns (flags: Partial<Record<string, boolean | undefined>>): Partial<Record<OrganizationAccessColumn, boolean>> {
  return Object.fromEntries(ORGANIZATION_ACCESS_FLAGS.filter((flag) => typeof flags[flag] === 'boolean')
    .map((flag) => [ORGANIZATION_ACCESS_COLUMNS[flag], flags[flag]])) as Partial<Record<OrganizationAccessColumn, boolean>>
}

/**
 * Flags that need another (DESIGN §11.3, as HCP Terraform): manage-projects needs
 * manage-workspaces; read-projects needs read-workspaces (manage-workspaces, which reads every
 * workspace, will do).
 */
export const FLAG_PREREQUISITES = [
  { flag: 'manage-projects', requires: ['manage-workspaces'] },
  { flag: 'read-projects', requires: ['read-workspaces', 'manage-workspaces'] }
] as const satisfies ReadonlyArray<{ flag: OrganizationAccessFlag, requires: readonly OrganizationAccessFlag[] }>

/** The first flag set without its prerequisite, and what it needs (its message); none: undefined. */
export function missingPrerequisite (flags: Partial<OrganizationAccess>): { flag: OrganizationAccessFlag, message: string } | undefined {
  const missing = FLAG_PREREQUISITES.find((p) => flags[p.flag] === true && !p.requires.some((flag) => flags[flag] === true))
  return missing === undefined ? undefined : { flag: missing.flag, message: prerequisiteMessage(missing.flag) }
}

/** What a flag without its prerequisite is told. */
export const prerequisiteMessage = (flag: OrganizationAccessFlag): string => {
  const p = FLAG_PREREQUISITES.find((candidate) => candidate.flag === flag)
  return p === undefined ? `${flag} cannot be set` : `${flag} requires ${p.requires.join(' (or ')}${p.requires.length > 1 ? ')' : ''}`
}
