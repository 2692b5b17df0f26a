import type { Caller } from '../auth/caller.js'

/**
 * DESIGN §8: whose audit trail a caller reads. Only an organization token reads one — its own
 * organization's, as in HCP Terraform; a user or team token (the owners team's too) reads none,
 * and is answered as if there were nothing there.
 */
export const auditTrailOf = (caller: Caller): string | undefined =>
  caller.kind === 'organization' ? caller.organizationId : undefined
