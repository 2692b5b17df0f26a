/** How a seed's entries are named in errors: `organizations[0] "acme" › teams[2] "red"`. */

/** A seed that breaks a rule: `entry` names the offending entry, e.g. `organizations[0] "acme" › teams[2] "red"`. */
export class SeedError extends Error {
  constructor (readonly entry: string, readonly problem: string) {
    super(entry === '' ? problem : `${entry}: ${problem}`)
    this.name = 'SeedError'
  }
}

export interface SeedSummary {
  users: number
  organizations: number
  teams: number
  workspaces: number
  /** `team-access` entries applied on this run (new or edited entries). */
  teamAccess: number
  /** `team-access` entries skipped: applied on an earlier run, and the API's to change since. */
  teamAccessAlreadyApplied: number
  tokens: number
}

export function labelOf (item: unknown): string {
  if (typeof item === 'string') return ` "${item}"`
  if (item === null || typeof item !== 'object') return ''
  const entry = item as Record<string, unknown>
  const name = entry.name ?? entry.username ?? (entry.team !== undefined ? `${String(entry.team)} on ${String(entry.workspace)}` : undefined)
  return typeof name === 'string' ? ` "${name}"` : ''
}

export const entry = (list: string, index: number, item: unknown, parent = ''): string =>
  `${parent === '' ? '' : `${parent} › `}${list}[${index}]${labelOf(item)}`
