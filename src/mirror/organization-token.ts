import type { Kysely } from 'kysely'
import { randomUUID } from 'node:crypto'
import { newTokenSecret } from '../auth/token-secret.js'
import type { Database } from '../db/database.js'
import { regenerateToken } from '../directory/tokens.js'

/**
 * `team-access token --organization ORG` (DESIGN §13.3): the organization's own token here, made
 * anew — the one before it revoked in the same transaction — and returned once, to be printed once.
 * How reviewers of a mirrored organization sign in: HCP Terraform's tokens are never copied. The
 * change is the host's (System, `team-access token`), with its audit events. Undefined: no such
 * organization here.
 */
export async function regenerateOrganizationToken (db: Kysely<Database>, organization: string): Promise<string | undefined> {
  const secret = newTokenSecret()
  const result = await regenerateToken(db, { by: 'host', actor: 'team-access token', requestId: randomUUID() }, { kind: 'organization', organization }, secret, null)
  return result.created === undefined ? undefined : secret
}
