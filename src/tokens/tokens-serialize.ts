import type { TokenResource } from '../../schemas/tokens.js'
import type { TokenView } from './tokens-repository.js'

/** An ISO 8601 time in UTC, from what the driver gives (a Date, or a string on some drivers). */
const iso = (value: Date | string): string => new Date(value).toISOString()

/**
 * A token as its resource (DESIGN §9.5). `secret` only for the answer that creates it: every
 * other answer says `token: null`.
 */
export function toTokenResource (row: TokenView, secret: string | null = null): TokenResource {
  return {
    id: row.id,
    type: 'authentication-tokens',
    attributes: {
      'created-at': iso(row.created_at),
      'last-used-at': row.last_used_at === null ? null : iso(row.last_used_at),
      'expired-at': row.expires_at === null ? null : iso(row.expires_at),
      description: row.description,
      token: secret
    },
    relationships: {
      'created-by': { data: row.created_by === null ? null : { id: row.created_by, type: 'users' } },
      ...(row.team_id === null ? {} : { team: { data: { id: row.team_id, type: 'teams' as const } } })
    }
  }
}
