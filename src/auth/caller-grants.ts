import { sql, type QueryCreator } from 'kysely'
import type { Database } from '../db/database.js'
import { usableToken, type Principal } from './caller.js'

/**
 * What a caller acts as (DESIGN §3), as a query every authorization predicate joins against:
 * one row per team the caller acts through, or one ownership row for an organization token.
 * Written once so that routes, effective access and tests ask the same question.
 */
export function callerGrants (qc: QueryCreator<Database>, caller: Principal) {
  switch (caller.kind) {
    case 'bearer':
      // the token resolved in the same statement: one branch per kind, each an index lookup by digest
      return qc.selectFrom('tokens')
        .innerJoin('organizations', 'organizations.id', 'tokens.organization_id')
        .where(usableToken(caller.digest))
        .select(organizationGrant)
        .unionAll(qc.selectFrom('tokens')
          .innerJoin('teams', 'teams.id', 'tokens.team_id')
          .where(usableToken(caller.digest))
          .select(teamGrant))
        .unionAll(qc.selectFrom('tokens')
          .innerJoin('team_memberships', 'team_memberships.user_id', 'tokens.user_id')
          .innerJoin('teams', 'teams.id', 'team_memberships.team_id')
          .where(usableToken(caller.digest))
          .select(teamGrant))
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
