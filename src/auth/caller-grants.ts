import { sql, type QueryCreator } from 'kysely'
import type { Database } from '../db/database.js'
import type { Caller } from './caller.js'

/** One source of a caller's standing in an organization: a team it acts through, or ownership as such. */
export interface CallerGrant {
  organization_id: string
  /** null for an organization token, which acts through no team */
  team_id: string | null
  is_owner: boolean
  manage_workspaces: boolean
  read_workspaces: boolean
}

/**
 * What a caller acts as (DESIGN §3), as a query every authorization predicate joins against:
 * one row per team the caller acts through, or one ownership row for an organization token.
 * Written once so that routes, effective access and tests ask the same question.
 */
export function callerGrants (qc: QueryCreator<Database>, caller: Caller) {
  switch (caller.kind) {
    case 'organization':
      return qc.selectFrom('organizations')
        .where('organizations.id', '=', caller.organizationId)
        .select([
          'organizations.id as organization_id',
          sql<string | null>`null::text`.as('team_id'),
          sql<boolean>`true`.as('is_owner'),
          sql<boolean>`false`.as('manage_workspaces'),
          sql<boolean>`false`.as('read_workspaces')
        ])
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

const teamGrant = [
  'teams.organization_id as organization_id',
  sql<string | null>`teams.id`.as('team_id'),
  'teams.is_owners as is_owner',
  'teams.manage_workspaces as manage_workspaces',
  'teams.read_workspaces as read_workspaces'
] as const
