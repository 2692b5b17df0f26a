import { sql, type Expression, type ExpressionBuilder, type SqlBool, type Transaction } from 'kysely'
import { recordDirectoryEvents, recordEvents, tokenEvents, type Accessor } from '../audit/audit-record.js'
import type { Database } from '../db/database.js'

/** Who removes, and the request the events carry: the seed (System, `seed`) or the host (System, its actor). */
export interface DirectoryChangeSource {
  /** The seed drops its own tokens without revoking them (a document may declare a secret again); anything else is a revocation. */
  by: 'seed' | 'host'
  accessor: Accessor
  requestId: string
}

/**
 * What a removal took with it, by kind, named as a seed's summary names rows — never by secret or
 * digest: team access `red on acme/prod`, memberships `acme/red: alice`, tokens by kind and owner
 * (`user alice`, `team acme/red`, `organization acme`).
 */
export interface DirectoryRemovals {
  teamAccess: string[]
  memberships: string[]
  tokens: string[]
}

/**
 * The directory's removals (DESIGN §9.1), one code path for the seed (rows it no longer declares)
 * and the host (its directory functions): a removal deletes what hangs on the row explicitly, each
 * `delete … returning` naming what it removed and recording its audit events in the same
 * statement — a team's or workspace's team-access rows with one `remove_team` each, memberships
 * with `remove_member`, tokens with `destroy`, teams with `destroy` — then the row (the foreign
 * keys' cascades find nothing left). The team-access rows go in a statement before their team's
 * or workspace's, so that the workspace counters' triggers still see the team while they count
 * its rows out. Runs inside the caller's transaction; what it removed is appended to `removed`.
 */
export class DirectoryWriter {
  constructor (
    private readonly trx: Transaction<Database>,
    private readonly source: DirectoryChangeSource,
    readonly removed: DirectoryRemovals = { teamAccess: [], memberships: [], tokens: [] }
  ) {}

  /** Removes teams with their team access, memberships, tokens and remembered seed grants; one `destroy` event each. */
  async removeTeams (ids: string[]): Promise<void> {
    if (ids.length === 0) return
    await this.removeTeamAccess('team_id', ids)
    await this.removeMemberships((eb) => eb('team_id', 'in', ids))
    await this.removeTokens((eb) => eb('team_id', 'in', ids))
    await this.trx.deleteFrom('seed_grants').where('team_id', 'in', ids).execute()
    await this.trx
      .with('gone', (qc) => qc.deleteFrom('teams').where('id', 'in', ids).returning(['organization_id', 'id', 'name']))
      .with('events', (qc) => qc.selectFrom('gone')
        .select(['gone.organization_id', 'gone.id as resource_id', sql<string>`jsonb_build_object('team', gone.name)`.as('meta')]))
      .with('audit', (qc) => recordDirectoryEvents(qc, 'events', { resourceType: 'team', action: 'destroy', ...this.source }))
      .selectFrom('gone').select('gone.id').execute()
  }

  /** Removes workspaces with their team access and remembered seed grants. */
  async removeWorkspaces (ids: string[]): Promise<void> {
    if (ids.length === 0) return
    await this.removeTeamAccess('workspace_id', ids)
    await this.trx.deleteFrom('seed_grants').where('workspace_id', 'in', ids).execute()
    await this.trx.deleteFrom('workspaces').where('id', 'in', ids).execute()
  }

  /** Removes users with their tokens and memberships. */
  async removeUsers (ids: string[]): Promise<void> {
    if (ids.length === 0) return
    await this.removeTokens((eb) => eb('user_id', 'in', ids))
    await this.removeMemberships((eb) => eb('user_id', 'in', ids))
    await this.trx.deleteFrom('users').where('id', 'in', ids).execute()
  }

  /** The team-access rows of teams or workspaces being removed, each with its `remove_team` event in the same statement. */
  async removeTeamAccess (column: 'team_id' | 'workspace_id', ids: string[]): Promise<void> {
    const removed = await this.trx
      .with('removed', (qc) => qc.deleteFrom('team_workspaces').where(column, 'in', ids)
        .returning(['id', 'organization_id', 'team_id', 'workspace_id']))
      .with('audit', (qc) => recordEvents(qc, 'removed', { action: 'remove_team', ...this.source, permissions: false }))
      .selectFrom('removed')
      .innerJoin('teams as t', 't.id', 'removed.team_id')
      .innerJoin('workspaces as w', 'w.id', 'removed.workspace_id')
      .innerJoin('organizations as o', 'o.id', 'removed.organization_id')
      .select(sql<string>`t.name || ' on ' || o.name || '/' || w.name`.as('label'))
      .orderBy('label').execute()
    this.removed.teamAccess.push(...removed.map((r) => r.label))
  }

  /** Removes the memberships `which` keeps, each with its `remove_member` event. */
  async removeMemberships (which: (eb: ExpressionBuilder<Database, 'team_memberships'>) => Expression<SqlBool>): Promise<void> {
    const removed = await this.trx
      .with('gone', (qc) => qc.deleteFrom('team_memberships').where(which).returning(['team_id', 'user_id']))
      .with('events', (qc) => qc.selectFrom('gone').innerJoin('teams as t', 't.id', 'gone.team_id').innerJoin('users as u', 'u.id', 'gone.user_id')
        .select(['t.organization_id', 't.id as resource_id', sql<string>`jsonb_build_object('team', t.name, 'user', u.username)`.as('meta')]))
      .with('audit', (qc) => recordDirectoryEvents(qc, 'events', { resourceType: 'team', action: 'remove_member', ...this.source }))
      .selectFrom('gone')
      .innerJoin('teams as t', 't.id', 'gone.team_id')
      .innerJoin('organizations as o', 'o.id', 't.organization_id')
      .innerJoin('users as u', 'u.id', 'gone.user_id')
      .select(sql<string>`o.name || '/' || t.name || ': ' || u.username`.as('label'))
      .orderBy('label').execute()
    this.removed.memberships.push(...removed.map((r) => r.label))
  }

  /**
   * Removes the tokens `which` keeps, each with its `destroy` event; named by their kind and owner —
   * never by secret or digest. A removal is a revocation for good (DESIGN §9.1: the digest kept in
   * `revoked_tokens`, so that no seed or host brings the secret back), except where the seed drops a
   * token of its own that its document no longer declares.
   */
  async removeTokens (which: (eb: ExpressionBuilder<Database, 'tokens'>) => Expression<SqlBool>): Promise<void> {
    const { by, ...source } = this.source
    const removed = await this.trx
      .with('gone', (qc) => qc.deleteFrom('tokens').where(which).returning(['id', 'kind', 'organization_id', 'team_id', 'user_id', 'digest', 'managed_by']))
      .with('revoked', (qc) => qc.insertInto('revoked_tokens').columns(['digest'])
        .expression((eb) => eb.selectFrom('gone').select('gone.digest').where(sql<boolean>`${by !== 'seed'}::boolean or gone.managed_by <> 'seed'`))
        .onConflict((oc) => oc.doNothing()))
      .with('events', (qc) => qc.selectFrom(tokenEvents('gone').as('e')).selectAll())
      .with('audit', (qc) => recordDirectoryEvents(qc, 'events', { resourceType: 'authentication-token', action: 'destroy', ...source }))
      .selectFrom('gone')
      .leftJoin('organizations as o', 'o.id', 'gone.organization_id')
      .leftJoin('teams as t', 't.id', 'gone.team_id')
      .leftJoin('organizations as tor', 'tor.id', 't.organization_id')
      .leftJoin('users as u', 'u.id', 'gone.user_id')
      .select(sql<string>`case gone.kind when 'user' then 'user ' || u.username when 'team' then 'team ' || tor.name || '/' || t.name
        else 'organization ' || o.name end`.as('label'))
      .orderBy('label').execute()
    this.removed.tokens.push(...removed.map((r) => r.label))
  }
}
