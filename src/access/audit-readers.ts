/**
 * DESIGN §8: who reads an organization's audit trail — its owners: its organization token (HCP
 * Terraform's rule, what go-tfe uses), the owners team's token, and the users of the owners team,
 * so that the person doing a review sees the history. Anyone else is answered as if there were
 * nothing there. The statement decides it (`ownsOrganization`, ./predicates.ts); this says which
 * organization a caller asks about: an organization token's own, or the one named by
 * `organization` — which a caller owning one organization need not give.
 */
export type TrailChoice = { organizationId: string } | { refusal: 'none' | 'several' }

/** The trail a caller reads, from the organizations it owns (`owned`, by id; those named `organization`, if given). */
export const trailOf = (owned: string[]): TrailChoice =>
  owned.length === 1 ? { organizationId: owned[0]! } : { refusal: owned.length === 0 ? 'none' : 'several' }
