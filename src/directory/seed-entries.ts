/** How a seed's entries are named in errors: `organizations[0] "acme" › teams[2] "red"`. */

/** A seed that breaks a rule: `entry` names the offending entry, e.g. `organizations[0] "acme" › teams[2] "red"`. */
export class SeedError extends Error {
  constructor (readonly entry: string, readonly problem: string) {
    super(entry === '' ? problem : `${entry}: ${problem}`)
    this.name = 'SeedError'
  }
}

/**
 * Rows of each kind, by name — never a secret or a digest: organizations `acme`, users `alice`,
 * teams and workspaces `acme/red`, memberships `acme/red: alice`, tokens by kind and owner
 * (`user alice`, `team acme/red`, `organization acme`), team access `red on acme/prod`.
 */
export interface SeedChanges {
  organizations: string[]
  users: string[]
  teams: string[]
  memberships: string[]
  workspaces: string[]
  tokens: string[]
  teamAccess: string[]
  projects: string[]
  projectAccess: string[]
}

export const SEED_KINDS = ['organizations', 'users', 'teams', 'memberships', 'projects', 'workspaces', 'tokens', 'teamAccess', 'projectAccess'] as const

/** How many rows of each kind: what a log line carries of creations and changes. */
export const countChanges = (changes: SeedChanges): Record<keyof SeedChanges, number> =>
  Object.fromEntries(SEED_KINDS.map((kind) => [kind, changes[kind].length])) as Record<keyof SeedChanges, number>

export const noChanges = (): SeedChanges => ({ organizations: [], users: [], teams: [], memberships: [], workspaces: [], tokens: [], teamAccess: [], projects: [], projectAccess: [] })

export interface SeedSummary {
  /** Entries of the document, by kind. */
  users: number
  organizations: number
  teams: number
  workspaces: number
  /** `team-access` entries applied on this run (new or edited entries). */
  teamAccess: number
  /** `team-access` entries skipped: applied on an earlier run, and the API's to change since. */
  teamAccessAlreadyApplied: number
  tokens: number
  /** A plan only: the apply ran and was rolled back, nothing changed. */
  dryRun: boolean
  /** Rows the apply created (team access: rows a `team-access` entry added). */
  created: SeedChanges
  /** Rows that existed and were changed or adopted (a row the API or the host made, now the seed's). */
  changed: SeedChanges
  /**
   * Seed-managed rows the document no longer declares, and what their removal took with it: a
   * team's memberships, tokens and team-access rows, a workspace's team-access rows, a user's
   * memberships and tokens. Organizations are never removed.
   */
  removed: SeedChanges
  /**
   * What the apply left out or took over, and why, by owner — never a secret: a declared token
   * that was revoked stays revoked (DESIGN §9.1), `token of user alice: revoked, left out`; a row
   * the API or the host made is adopted whole, `team acme/platform: made through the API, …`.
   */
  warnings: string[]
}

export function labelOf (item: unknown): string {
  if (typeof item === 'string') return ` "${item}"`
  if (item === null || typeof item !== 'object') return ''
  const entry = item as Record<string, unknown>
  const name = entry.name ?? entry.username ?? (entry.team !== undefined ? `${String(entry.team)} on ${String(entry.workspace ?? entry.project)}` : undefined)
  return typeof name === 'string' ? ` "${name}"` : ''
}

export const entry = (list: string, index: number, item: unknown, parent = ''): string =>
  `${parent === '' ? '' : `${parent} › `}${list}[${index}]${labelOf(item)}`

const NOUNS: Record<keyof SeedChanges, string> = {
  organizations: 'organization',
  users: 'user',
  teams: 'team',
  memberships: 'membership',
  workspaces: 'workspace',
  tokens: 'token of',
  teamAccess: 'team access',
  projects: 'project',
  projectAccess: 'project access'
}

/** Rows of one kind created or changed that are named one by one; past it, the rest are counted (removals are always named). */
export const NAMED_PER_KIND = 20

/**
 * The summary as lines a person reads (the CLI prints them, a start logs them): one line per
 * row removed (-), per row created (+) or changed (~) up to NAMED_PER_KIND of a kind (a first
 * apply of a large seed is not a line per row), then the totals — the same for a dry run and an apply.
 */
export function formatSeedSummary (summary: SeedSummary): string[] {
  const lines: string[] = []
  const count = (changes: SeedChanges) => SEED_KINDS.reduce((n, kind) => n + changes[kind].length, 0)
  for (const [sign, changes] of [['+', summary.created], ['~', summary.changed], ['-', summary.removed]] as const) {
    for (const kind of SEED_KINDS) {
      const labels = changes[kind]
      const named = sign === '-' || labels.length <= NAMED_PER_KIND ? labels : labels.slice(0, NAMED_PER_KIND)
      for (const label of named) lines.push(`  ${sign} ${NOUNS[kind]} ${label}`)
      if (named.length < labels.length) lines.push(`  ${sign} … and ${labels.length - named.length} more (${kind})`)
    }
  }
  for (const warning of summary.warnings) lines.push(`  ! ${warning}`)
  if (summary.teamAccessAlreadyApplied > 0) {
    lines.push(`  = ${summary.teamAccessAlreadyApplied} team-access ${summary.teamAccessAlreadyApplied === 1 ? 'entry' : 'entries'} applied before, left as the API keeps them`)
  }
  const totals = `${count(summary.created)} to create, ${count(summary.changed)} to change, ${count(summary.removed)} to remove`
  if (lines.length === 0) lines.push('  no changes: the database already matches the document')
  return [summary.dryRun ? `dry run, nothing changed — ${totals}` : `applied — ${totals.replace(/to (create|change|remove)/g, (_, verb: string) => `${verb === 'change' ? 'changed' : `${verb}d`}`)}`, ...lines]
}
