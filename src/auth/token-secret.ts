import { randomBytes } from 'node:crypto'

/**
 * A new bearer secret, shaped as HCP Terraform's (`<14 characters>.atlasv1.<54 characters>`):
 * 400 bits from the operating system's random source, base64url. Only its digest is stored
 * (src/auth/token-digest.ts); the secret is answered once, by the create, and never kept.
 */
export const newTokenSecret = (): string =>
  `${randomBytes(10).toString('base64url')}.atlasv1.${randomBytes(40).toString('base64url')}`
