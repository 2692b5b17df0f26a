import { createHash } from 'node:crypto'

/** Tokens are stored and looked up by this digest only; the secret never reaches the database. */
export const tokenDigest = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('hex')
