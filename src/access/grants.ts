import { sql, type Kysely, type QueryCreator, type RawBuilder } from 'kysely'
import type { Database } from '../db/database.js'
import type { Caller } from '../auth/caller.js'
import { table } from '../db/tables.js'

/**
 * What a caller acts as (DESIGN §3), as the `grants` CTE every statement starts with: one row
 * per team the caller acts through, or one ownership row for an organization token. The
 * predicates of ./predicates.ts read it. A caller that came with a token has grants only while
 * that token is usable and still names it: the statement checks it, so a token revoked or expired
 * since it was last looked up grants nothing (src/auth/token-identities.ts).
 */
export function callerGrants (qc: QueryCreator<Database>, caller: Caller, rows: 'all' | 'granting' = 'all') {
  switch (caller.kind) {
    case 'organization':
      return qc.selectFrom('organizations')
        .where('organizations.id', '=', caller.organizationId)
        .where(tokenNames(caller.token, 'organization_id', caller.organizationId))
        .select(organizationGrant)
    case 'team':
      return qc.selectFrom('teams')
        .where('teams.id', '=', caller.teamId)
        .where(tokenNames(caller.token, 'team_id', caller.teamId))
        .select(teamGrant)
    case 'user': {
      // its teams, and a row that grants nothing for each organization it is an active member of
      // (DESIGN §2, §14.2): a member with no team there is still a member. A statement that asks
      // only what is granted on workspaces (`rows`: 'granting') leaves those rows out: they grant
      // nothing there, and reading them cost a probe and a union on every call of the host's check
      const teams = qc.selectFrom('teams')
        .innerJoin('team_memberships', 'team_memberships.team_id', 'teams.id')
        .where('team_memberships.user_id', '=', caller.userId)
        .where(tokenNames(caller.token, 'user_id', caller.userId))
        .select(teamGrant)
      if (rows === 'granting') return teams
      return teams.unionAll((qc) => qc.selectFrom('organization_memberships')
        .where('organization_memberships.user_id', '=', caller.userId)
        .where('organization_memberships.status', '=', 'active')
        .where(tokenNames(caller.token, 'user_id', caller.userId))
        .select(membershipGrant))
    }
  }
}

/** The token (by digest; none: a host vouched for the caller) is usable and names this subject. Evaluated once per statement. */
const tokenNames = (token: string | undefined, column: 'organization_id' | 'team_id' | 'user_id', subject: string): RawBuilder<boolean> =>
  sql<boolean>`(${token ?? null}::text is null or exists (select 1 from ${table.tokens} tk
    where tk.digest = ${token ?? null}::text and tk.${sql.raw(column)} = ${subject}::text and (tk.expires_at is null or tk.expires_at > now())))`

/**
 * Whether the caller's token (none: a host vouched for it) is still usable and still names it —
 * for statements about a caller that may act through no team at all (a user's own tokens, its
 * account), where the grants cannot say so.
 */
export const tokenStillNamesCaller = (caller: Caller): RawBuilder<boolean> => {
  const [subject, token] = callerValues(caller)
  const column = caller.kind === 'organization' ? 'organization_id' : caller.kind === 'team' ? 'team_id' : 'user_id'
  return tokenNames(token ?? undefined, column, subject)
}

/**
 * A grant through no team (its columns as the `grants` CTE's): an organization token, an owner
 * (`isOwner`); an active organization membership (DESIGN §14.2), a member holding nothing.
 */
const noTeamGrant = <C extends string>(organization: C, isOwner: boolean) => [
  organization,
  sql<string | null>`null::text`.as('team_id'),
  sql<boolean>`${sql.lit(isOwner)}`.as('is_owner'),
  sql<boolean>`false`.as('manage_workspaces'),
  sql<boolean>`false`.as('read_workspaces'),
  sql<boolean>`false`.as('manage_teams'),
  sql<boolean>`false`.as('manage_membership'),
  sql<boolean>`false`.as('manage_projects'),
  sql<boolean>`false`.as('read_projects')
] as const

const organizationGrant = noTeamGrant('organizations.id as organization_id', true)
const membershipGrant = noTeamGrant('organization_memberships.organization_id as organization_id', false)

const teamGrant = [
  'teams.organization_id as organization_id',
  sql<string | null>`teams.id`.as('team_id'),
  'teams.is_owners as is_owner',
  'teams.manage_workspaces as manage_workspaces',
  'teams.read_workspaces as read_workspaces',
  'teams.manage_teams as manage_teams',
  'teams.manage_membership as manage_membership',
  'teams.manage_projects as manage_projects',
  'teams.read_projects as read_projects'
] as const

/**
 * What each team acts as (DESIGN §3: a team's token is a member whose only team is that team): one
 * grant row per team, with the columns of the `grants` CTE, so that the predicates' flags
 * (`grantsOrganizationWide`) read a team's row as they read a caller's. For the answers of DESIGN
 * §10.2, which ask what teams hold, not what the caller holds; no token is involved.
 */
export const teamGrants = (qc: QueryCreator<Database>) => qc.selectFrom('teams').select(teamGrant)

/**
 * A statement's start: the caller's `grants` CTE. Only the predicates' SQL reads it, so the
 * builder is typed without it. `rows`: 'granting' for a statement whose rules ask only what is
 * granted on workspaces (`callerGrants`). Materialized: a handful of rows found by the caller's key,
 * read first — inlined into a statement that reads it once, the planner may start elsewhere (PGlite,
 * with no statistics, from an organization's every team).
 */
export const withGrants = (db: Kysely<Database>, caller: Caller, rows: 'all' | 'granting' = 'all'): QueryCreator<Database> =>
  db.with((cte) => cte('grants').materialized(), (qc) => callerGrants(qc, caller, rows)) as unknown as QueryCreator<Database>

/**
 * The two values that identify a caller of a kind — its subject's id and its token's digest (null
 * when a host vouched for it): statements are built once per kind and replayed with them.
 */
export const callerValues = (caller: Caller): [string, string | null] =>
  [caller.kind === 'organization' ? caller.organizationId : caller.kind === 'team' ? caller.teamId : caller.userId, caller.token ?? null]

/** The caller of a kind built back from its values (the shape's placeholders while a statement is built). */
export const callerOfKind = (kind: Caller['kind'], [value, token]: readonly unknown[]): Caller => {
  const subject = value as string
  const caller: Caller = kind === 'organization' ? { kind, organizationId: subject } : kind === 'team' ? { kind, teamId: subject } : { kind, userId: subject }
  return token === null || token === undefined ? caller : { ...caller, token: token as string }
}
