// A team's organization-access flags (DESIGN §9.3): every flag HashiCorp's go-tfe sends, in its
// order. Here manage-workspaces and read-workspaces grant workspace access (§3), manage-teams and
// manage-membership grant team management; the others are stored and answered.
// The wire name ↔ column map is src/db/organization-access.ts.

export const ORGANIZATION_ACCESS_DESCRIPTIONS = {
  'manage-policies': 'Manage policies and policy sets (stored and answered).',
  'manage-policy-overrides': 'Override failed policy checks (stored and answered).',
  'delegate-policy-overrides': 'Delegate policy overrides (a beta flag of HCP Terraform; stored and answered).',
  'manage-workspaces': 'Admin on every workspace of the organization.',
  'manage-vcs-settings': 'Manage VCS providers and SSH keys (stored and answered).',
  'manage-providers': 'Manage the private provider registry (stored and answered).',
  'manage-modules': 'Manage the private module registry (stored and answered).',
  'manage-run-tasks': 'Manage run tasks (stored and answered).',
  'manage-projects': 'Manage projects (stored and answered).',
  'read-workspaces': 'Read on every workspace of the organization.',
  'read-projects': 'Read every project (stored and answered).',
  'manage-membership': "Add and remove members of the organization's teams (those whose organization access the caller holds itself).",
  'manage-teams': "Create, update and delete the organization's teams and their tokens (those whose organization access the caller holds itself), and see every team.",
  'manage-organization-access': 'Manage teams\' organization access (stored and answered; here only owners change organization access).',
  'access-secret-teams': 'See secret teams (stored and answered).',
  'manage-agent-pools': 'Manage agent pools (stored and answered).'
} as const

export type OrganizationAccessFlag = keyof typeof ORGANIZATION_ACCESS_DESCRIPTIONS
export const ORGANIZATION_ACCESS_FLAGS = Object.keys(ORGANIZATION_ACCESS_DESCRIPTIONS) as OrganizationAccessFlag[]
