import { randomBytes } from 'node:crypto'

/**
 * Base58, the alphabet of HCP Terraform's ids: no `0`, `O`, `I` or `l`. Newer Terraform providers
 * check an id's shape before they look it up (`terraform import tfe_team.x acme/team-…` reads the
 * team only when the id matches `^team-[1-9A-HJ-NP-Za-km-z]{16}$`), so ours must match too.
 */
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'

/** The entity prefixes of DESIGN §2. */
export type IdPrefix = 'org' | 'user' | 'team' | 'ws' | 'at' | 'tws' | 'prj' | 'tprj' | 'ou'

/**
 * A random id the shape HCP Terraform uses: prefix, dash, 16 base58 characters.
 * Rejection sampling keeps every character equally likely (232 = 4 × 58).
 */
export function newId (prefix: IdPrefix): string {
  let out = ''
  while (out.length < 16) {
    for (const byte of randomBytes(24)) {
      if (byte < 232 && out.length < 16) out += BASE58[byte % 58]
    }
  }
  return `${prefix}-${out}`
}

/** Ids longer than any we serve, or with a NUL (which PostgreSQL cannot even compare), exist nowhere: 404 without asking. */
const MAX_ID_LENGTH = 128
export const impossibleId = (id: string): boolean => id.length > MAX_ID_LENGTH || id.includes('\u0000')
