import { sql, type Kysely, type QueryCreator } from 'kysely'
import type { Database } from '../db/database.js'
import type { Caller } from '../auth/caller.js'

/**
 * What a caller acts as (DESIGN §3), as the `grants` CTE every statement starts with: one row
 * per team the caller acts through, or one ownership row for an organization token. The
 * predicates of ./predicates.ts read it.
 */
export function callerGrants (qc: QueryCreator<Database>, caller: Caller) {
  switch (caller.kind) {
    case 'organization':
      return qc.selectFrom('organizations')
        .where('organizations.id', '=', caller.organizationId)
        .select(organizationGrant)
    case 'team':
      return qc.selectFrom('teams')
        .where('teams.id', '=', caller.teamId)
        .select(teamGrant)
    case 'user':
      return qc.selectFrom('teams')
        .innerJoin('team_memberships', 'team_memberships.team_id', 'teams.id')
        .where('team_memberships.user_id', '=', caller.userId)
        .select(teamGrant)
  }
}

const organizationGrant = [
  'organizations.id as organization_id',
  sql<string | null>`null::text`.as('team_id'),
  sql<boolean>`true`.as('is_owner'),
  sql<boolean>`false`.as('manage_workspaces'),
  sql<boolean>`false`.as('read_workspaces')
] as const

const teamGrant = [
  'teams.organization_id as organization_id',
  sql<string | null>`teams.id`.as('team_id'),
  'teams.is_owners as is_owner',
  'teams.manage_workspaces as manage_workspaces',
  'teams.read_workspaces as read_workspaces'
] as const

/**
 * A statement's start: the caller's `grants` CTE. Only the predicates' SQL reads it, so the
 * builder is typed without it.
 */
export const withGrants = (db: Kysely<Database>, caller: Caller): QueryCreator<Database> =>
  db.with('grants', (qc) => callerGrants(qc, caller)) as unknown as QueryCreator<Database>

/** The one value that identifies a caller of a kind: statements are built once per kind and replayed with it. */
export const callerValue = (caller: Caller): string =>
  caller.kind === 'organization' ? caller.organizationId : caller.kind === 'team' ? caller.teamId : caller.userId

/** The caller of a kind built back from its value (the shape's placeholder while a statement is built). */
export const callerOfKind = (kind: Caller['kind'], value: string): Caller =>
  kind === 'organization' ? { kind, organizationId: value } : kind === 'team' ? { kind, teamId: value } : { kind, userId: value }
