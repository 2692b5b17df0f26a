// A team's organization-access flags (DESIGN §9.3): every flag HashiCorp's go-tfe sends, in its
// order. Here manage-workspaces and read-workspaces grant workspace access (§3), manage-teams and
// manage-membership grant team management; the others are stored and answered.
// The wire name ↔ column map is src/db/organization-access.ts.

export const ORGANIZATION_ACCESS_DESCRIPTIONS = {
  'manage-policies': 'Manage policies (kept and echoed; grants nothing here).',
  'manage-policy-overrides': 'Override policy checks (kept and echoed; grants nothing here).',
  'delegate-policy-overrides': 'Delegate policy overrides, a beta flag of HCP Terraform (kept and echoed; grants nothing here).',
  'manage-workspaces': 'Admin on every workspace of the organization.',
  'manage-vcs-settings': 'Manage VCS settings (kept and echoed; grants nothing here).',
  'manage-providers': 'Manage the private registry’s providers (kept and echoed; grants nothing here).',
  'manage-modules': 'Manage the private registry’s modules (kept and echoed; grants nothing here).',
  'manage-run-tasks': 'Manage run tasks (kept and echoed; grants nothing here).',
  'manage-projects': 'Manage projects (kept and echoed; grants nothing here).',
  'read-workspaces': 'Read on every workspace of the organization.',
  'read-projects': 'Read projects (kept and echoed; grants nothing here).',
  'manage-membership': 'Add and remove members of the teams the team’s members see (never of a team with flags they do not hold).',
  'manage-teams': 'Create, update and delete teams and change their members (never a team with flags they do not hold), and see every team.',
  'manage-organization-access': 'Manage organization access (kept and echoed; grants nothing here).',
  'access-secret-teams': 'Access secret teams (kept and echoed; grants nothing here).',
  'manage-agent-pools': 'Manage agent pools (kept and echoed; grants nothing here).'
} as const

export type OrganizationAccessFlag = keyof typeof ORGANIZATION_ACCESS_DESCRIPTIONS
export const ORGANIZATION_ACCESS_FLAGS = Object.keys(ORGANIZATION_ACCESS_DESCRIPTIONS) as OrganizationAccessFlag[]
