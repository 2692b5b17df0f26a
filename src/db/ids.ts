import { randomBytes } from 'node:crypto'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** The entity prefixes of DESIGN §2. */
export type IdPrefix = 'org' | 'user' | 'team' | 'ws' | 'at' | 'tws'

/**
 * A random id the shape HCP Terraform uses: prefix, dash, 16 base62 characters.
 * Rejection sampling keeps every character equally likely (248 = 4 × 62).
 */
export function newId (prefix: IdPrefix): string {
  let out = ''
  while (out.length < 16) {
    for (const byte of randomBytes(24)) {
      if (byte < 248 && out.length < 16) out += BASE62[byte % 62]
    }
  }
  return `${prefix}-${out}`
}

/** Ids longer than any we serve, or with a NUL (which PostgreSQL cannot even compare), exist nowhere: 404 without asking. */
const MAX_ID_LENGTH = 128
export const impossibleId = (id: string): boolean => id.length > MAX_ID_LENGTH || id.includes('\u0000')
