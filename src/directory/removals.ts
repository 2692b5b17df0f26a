import { sql, type Kysely, type RawBuilder } from 'kysely'
import { recordDirectoryEvents, recordEvents, tokenEvents } from '../audit/audit-record.js'
import type { Database } from '../db/database.js'
import { table } from '../db/tables.js'
import { membershipEventRows, organizationMembershipEventRows, teamEventRows, teamProjectEventRows, workspaceEventRows } from './events.js'
import { accessorOf, type ChangeSource } from './source.js'

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

/** What one removal statement removes: the memberships and tokens its conditions keep (over `m`, `tk`), and rows by id. */
interface Removal {
  memberships?: RawBuilder<boolean>
  tokens?: RawBuilder<boolean>
  /** A scope the token condition reads: CTEs before the removal, and the `using` of the tokens' delete (an API caller's subject). */
  tokenScope?: { with: RawBuilder<unknown>, using: RawBuilder<unknown> }
  rows?: { table: 'teams' | 'users' | 'workspaces', ids: string[] }
}

/**
 * The directory's removals (DESIGN §9.1), one code path whoever asks (src/directory/source.ts):
 * a removal deletes what hangs on the row explicitly, naming what it removed and recording its
 * audit events in the same statement — team-access rows with one `remove_team` each, team-project
 * rows with a `team-project` destroy, memberships with `remove_member`, tokens with `destroy` (and their digests revoked for good, in
 * `revoked_tokens`: no seed or host brings a removed secret back), teams and workspaces with `destroy` — then the
 * row (the foreign keys' cascades find nothing left). A team's or workspace's team-access rows go
 * in a statement before the row's, so that the workspace counters' triggers still see the team
 * while they count its rows out: a team's removal is two statements, a user's one. Runs inside the
 * caller's transaction (the rows it removes are locked by then); what it removed is appended to
 * `removed`.
 */
export class Removals {
  constructor (
    private readonly db: Kysely<Database>,
    private readonly source: ChangeSource,
    readonly removed: DirectoryRemovals = { teamAccess: [], memberships: [], tokens: [] }
  ) {}

  /** Removes teams with their team access, memberships, tokens and remembered seed grants; one `destroy` event each. The tokens' digests. */
  async removeTeams (ids: string[]): Promise<string[]> {
    if (ids.length === 0) return []
    await this.removeTeamAccess('team_id', ids)
    const hangs = sql<boolean>`team_id = any(${ids}::text[])`
    return await this.remove({ memberships: hangs, tokens: hangs, rows: { table: 'teams', ids } })
  }

  /** Removes workspaces with their team access and remembered seed grants. */
  async removeWorkspaces (ids: string[]): Promise<void> {
    if (ids.length === 0) return
    await this.removeTeamAccess('workspace_id', ids)
    await this.remove({ rows: { table: 'workspaces', ids } })
  }

  /** Removes users with their tokens, team memberships and organization memberships. */
  async removeUsers (ids: string[]): Promise<void> {
    if (ids.length === 0) return
    const hangs = sql<boolean>`user_id = any(${ids}::text[])`
    await this.remove({ memberships: hangs, tokens: hangs, rows: { table: 'users', ids } })
  }

  /** Removes the memberships `which` keeps (over `m`), each with its `remove_member` event. */
  async removeMemberships (which: RawBuilder<boolean>): Promise<void> {
    await this.remove({ memberships: which })
  }

  /**
   * Removes the tokens `which` keeps (over `tk`, and the scope's names), each with its `destroy`
   * event and its digest revoked for good (DESIGN §9.1); the digests removed.
   */
  async removeTokens (which: RawBuilder<boolean>, scope?: Removal['tokenScope']): Promise<string[]> {
    return await this.remove({ tokens: which, ...(scope === undefined ? {} : { tokenScope: scope }) })
  }

  /**
   * The team-access rows of teams or workspaces being removed (or of a workspace a seed adopts: but
   * those of the teams in `keepTeams`), each with its `remove_team` event in the same statement.
   */
  async removeTeamAccess (column: 'team_id' | 'workspace_id', ids: string[], keepTeams: string[] = []): Promise<void> {
    const removed = await this.db
      .with('removed', (qc) => qc.deleteFrom('team_workspaces').where(column, 'in', ids)
        .$call((q) => keepTeams.length === 0 ? q : q.where('team_id', 'not in', keepTeams))
        .returning(['id', 'organization_id', 'team_id', 'workspace_id']))
      .with('audit', (qc) => recordEvents(qc, 'removed', { action: 'remove_team', accessor: accessorOf(this.source), requestId: this.source.requestId, permissions: false }))
      .selectFrom('removed')
      .innerJoin('teams as t', 't.id', 'removed.team_id')
      .innerJoin('workspaces as w', 'w.id', 'removed.workspace_id')
      .innerJoin('organizations as o', 'o.id', 'removed.organization_id')
      .select(sql<string>`t.name || ' on ' || o.name || '/' || w.name`.as('label'))
      .orderBy('label').execute()
    this.removed.teamAccess.push(...removed.map((r) => r.label))
  }

  /**
   * One statement: the memberships, tokens and rows of `removal`, each with its events (all CTEs
   * read the snapshot the statement started from, so the events name the rows they remove); the
   * rows it names must all be there (they are locked): else it throws, and the transaction with it.
   */
  private async remove (removal: Removal): Promise<string[]> {
    const ctes: Array<RawBuilder<unknown>> = []
    const answers: Array<RawBuilder<unknown>> = []
    // every event of the removal, recorded by one insert
    const events: Array<RawBuilder<unknown>> = []
    const eventsOf = (rows: RawBuilder<unknown>, resource: 'team' | 'authentication-token' | 'team-project' | 'workspace' | 'organization-membership', action: 'remove_member' | 'destroy') =>
      sql`select e.*, ${resource}::text as resource_type, ${action}::text as action from (${rows}) e`
    if (removal.tokenScope !== undefined) ctes.push(removal.tokenScope.with)
    if (removal.memberships !== undefined) {
      ctes.push(sql`gone_members as (delete from ${table.team_memberships} m where ${removal.memberships} returning m.team_id, m.user_id)`)
      events.push(eventsOf(membershipEventRows('gone_members'), 'team', 'remove_member'))
      answers.push(sql`select 'memberships' as kind, o.name || '/' || t.name || ': ' || u.username as label, null::text as digest
        from gone_members g join ${table.teams} t on t.id = g.team_id join ${table.organizations} o on o.id = t.organization_id join ${table.users} u on u.id = g.user_id`)
    }
    if (removal.tokens !== undefined) {
      ctes.push(sql`gone_tokens as (delete from ${table.tokens} tk ${removal.tokenScope?.using ?? sql``} where ${removal.tokens}
          returning tk.id, tk.kind, tk.organization_id, tk.team_id, tk.user_id, tk.digest)`,
      sql`revoked as (insert into ${table.revoked_tokens} (digest) select digest from gone_tokens on conflict do nothing)`)
      events.push(eventsOf(sql`select * from ${tokenEvents('gone_tokens')} e`, 'authentication-token', 'destroy'))
      answers.push(sql`select 'tokens' as kind, case g.kind when 'user' then 'user ' || u.username when 'team' then 'team ' || tor.name || '/' || t.name
          else 'organization ' || o.name end as label, g.digest
        from gone_tokens g left join ${table.organizations} o on o.id = g.organization_id left join ${table.teams} t on t.id = g.team_id
          left join ${table.organizations} tor on tor.id = t.organization_id left join ${table.users} u on u.id = g.user_id`)
    }
    const rows = removal.rows
    if (rows !== undefined) {
      // a team's or workspace's remembered seed grants go with it (a user has none)
      if (rows.table !== 'users') ctes.push(sql`forgotten as (delete from ${table.seed_grants} where ${sql.id(rows.table === 'teams' ? 'team_id' : 'workspace_id')} = any(${rows.ids}::text[]))`)
      if (rows.table === 'users') {
        // a user's organization memberships go with it, each with its destroy event (DESIGN §14.2)
        ctes.push(sql`gone_organization_memberships as (delete from ${table.organization_memberships} where user_id = any(${rows.ids}::text[]) returning id, organization_id, user_id)`)
        events.push(eventsOf(organizationMembershipEventRows('gone_organization_memberships'), 'organization-membership', 'destroy'))
      }
      ctes.push(sql`gone as (delete from ${table[rows.table]} where id = any(${rows.ids}::text[])
        returning id, ${rows.table === 'users' ? sql`null::text as organization_id, username as name` : sql`organization_id, name`})`)
      if (rows.table === 'teams') {
        // a team's project access goes with it, each row with its event (DESIGN §11.4)
        ctes.push(sql`gone_project_access as (delete from ${table.team_projects} where team_id = any(${rows.ids}::text[]) returning *)`)
        events.push(eventsOf(teamProjectEventRows('gone_project_access', false), 'team-project', 'destroy'), eventsOf(teamEventRows('gone'), 'team', 'destroy'))
      }
      // a workspace's own destroy event (DESIGN §14.1), after its team access's remove_team events
      if (rows.table === 'workspaces') events.push(eventsOf(workspaceEventRows('gone'), 'workspace', 'destroy'))
      answers.push(sql`select 'rows' as kind, id as label, null::text as digest from gone`)
    }
    if (events.length > 0) {
      ctes.push(sql`events as (${sql.join(events, sql` union all `)})`,
        sql`audit as (${recordDirectoryEvents(this.db, 'events', { resourceType: 'rows', action: 'rows', accessor: accessorOf(this.source), requestId: this.source.requestId })})`)
    }
    const result = await sql<{ kind: 'memberships' | 'tokens' | 'rows', label: string, digest: string | null }>`with ${sql.join(ctes)}
      ${sql.join(answers, sql` union all `)} order by kind, label`.execute(this.db)
    const of = (kind: string) => result.rows.filter((row) => row.kind === kind)
    this.removed.memberships.push(...of('memberships').map((row) => row.label))
    this.removed.tokens.push(...of('tokens').map((row) => row.label))
    if (rows !== undefined && of('rows').length !== rows.ids.length) throw new Error(`${rows.table} went while locked`)
    return of('tokens').map((row) => row.digest!)
  }
}
