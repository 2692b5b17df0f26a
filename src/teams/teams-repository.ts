import { sql, type AliasedRawBuilder, type Kysely, type QueryCreator } from 'kysely'
import type { Visibility } from '../../schemas/common.js'
import type { Database, ManagedBy } from '../db/database.js'
import { newId } from '../db/ids.js'
import { QueryShapes } from '../db/query-shapes.js'
import { ORGANIZATION_ACCESS_COLUMN_NAMES, ORGANIZATION_ACCESS_COLUMNS, ORGANIZATION_ACCESS_FLAGS, type OrganizationAccess, type OrganizationAccessColumn } from '../access/organization-access.js'
import { callerGrants, callerOfKind, callerValues, withGrants } from '../access/grants.js'
import { isMemberOf, managesTeam, managesTeamsOf, readsTeam, setsOrganizationAccessOf, teamPermissions } from '../access/predicates.js'
import { accessorOf, recordDirectoryEvents, recordEvents } from '../audit/audit-record.js'
import type { Caller } from '../auth/caller.js'
import type { PageRequest } from '../jsonapi/pagination.js'
import { table } from '../db/tables.js'
import { isGoneWhileWaiting } from '../db/write-races.js'

/** A member of a team, as its resource and `included` need it. */
export interface TeamMember { id: string, username: string }

/** A team with what its resource needs, for this caller. */
export type TeamView = Record<OrganizationAccessColumn, boolean> & {
  id: string
  name: string
  visibility: Visibility
  is_owners: boolean
  sso_team_id: string | null
  allow_member_token_management: boolean
  managed_by: ManagedBy
  organization_name: string
  /** The members, by username (json from the database). */
  users: TeamMember[] | string
  /**
   * What this caller may do with the team (DESIGN §9.3 `permissions`), decided by the predicates:
   * [can-update-membership, can-destroy].
   */
  permissions: [boolean, boolean]
}

/** Why a write changed nothing: the caller may not (404, as a missing team), or a rule of DESIGN §9.1/§9.3 refused it (422). */
export type Refusal = 'hidden' | 'seed' | 'owners' | 'taken'

/** The attributes of a create or an update; an absent member is not given (on update: keeps its value). */
export interface TeamChanges {
  name?: string
  visibility?: Visibility
  organizationAccess: Partial<OrganizationAccess>
  /** Kept and answered (the Terraform provider reads them back); an empty `sso-team-id` clears it (null). */
  ssoTeamId?: string | null
  allowMemberTokenManagement?: boolean
}

/**
 * The columns of a team's resource, for this caller, from `team` — the alias of a row of `teams`
 * (a table, or a CTE that returned its columns): its members and the caller's permissions on it
 * are decided in the statement, by the predicates.
 */
function viewColumns (team: string): Array<AliasedRawBuilder<unknown, string>> {
  const c = (column: string) => sql.ref(`${team}.${column}`)
  return [
    ...(['id', 'name', 'visibility', 'is_owners', 'sso_team_id', 'allow_member_token_management', 'managed_by', ...ORGANIZATION_ACCESS_COLUMN_NAMES] as const).map((column) => sql`${c(column)}`.as(column)),
    sql`(select o.name from ${table.organizations} o where o.id = ${c('organization_id')})`.as('organization_name'),
    sql`coalesce((select json_agg(json_build_object('id', u.id, 'username', u.username) order by u.username, u.id)
      from ${table.team_memberships} m join ${table.users} u on u.id = m.user_id where m.team_id = ${c('id')}), '[]'::json)`.as('users'),
    sql`${teamPermissions(team)}`.as('permissions')
  ]
}

/** A unique violation of the team's name in its organization (a create or rename that lost to another). */
function isNameTaken (err: unknown): boolean {
  const e = err as { code?: unknown, constraint?: unknown, message?: unknown } | null
  if (e === null || typeof e !== 'object' || e.code !== '23505') return false
  return e.constraint === undefined || e.constraint === 'teams_organization_name_key' ||
    (typeof e.message === 'string' && e.message.includes('teams_organization_name_key'))
}

/**
 * Teams: the reads the Terraform provider makes (DESIGN §7) and the writes of HCP Terraform's
 * Teams API (§9.3), each a statement that starts with the caller's `grants` and decides who may
 * by the predicates of src/access/predicates.ts; every write records its audit event in the same
 * statement (a delete: in the same transaction). Reads are built once per shape.
 */
export class TeamsRepository {
  private readonly shapes = new QueryShapes()

  constructor (private readonly db: Kysely<Database>) {}

  /** The teams the caller may read, with what a resource needs. */
  private readable (qc: QueryCreator<Database>) {
    return qc.selectFrom('teams as t')
      .select(viewColumns('t'))
      .where(readsTeam('t.id', 't.visibility', 't.organization_id'))
  }

  /** One team, if the caller may read it. */
  async find (caller: Caller, id: string): Promise<TeamView | undefined> {
    const query = this.shapes.compile(`find:${caller.kind}`, [...callerValues(caller), id], ([who, token, teamId]) =>
      this.readable(withGrants(this.db, callerOfKind(caller.kind, [who, token]))).where('t.id', '=', teamId!))
    return (await this.db.executeQuery<TeamView>(query)).rows[0]
  }

  /**
   * A page of the organization's teams the caller may read, by name, and how many there are;
   * `names` keeps only teams of exactly those names. Undefined when the organization does not
   * exist or the caller is no member of it.
   */
  async list (caller: Caller, organization: string, page: PageRequest, names?: string[]): Promise<{ rows: TeamView[], total: number } | undefined> {
    const values = [...callerValues(caller), organization, page.size, (page.number - 1) * page.size, ...(names === undefined ? [] : [names])]
    const query = this.shapes.compile(`list:${caller.kind}:${names === undefined ? 'all' : 'names'}`, values, ([who, token, org, limit, offset, only]) =>
      withGrants(this.db, callerOfKind(caller.kind, [who, token]))
        .with('org', (qc) => qc.selectFrom('organizations').select('id').where('name', '=', org!).where(isMemberOf('organizations.id')))
        .with('matching', (qc) => {
          const inOrganization = qc.selectFrom('teams as t').select(['t.id', 't.name'])
            .where(readsTeam('t.id', 't.visibility', 't.organization_id'))
            .where('t.organization_id', '=', sql<string>`(select id from org)`)
          return only === undefined ? inOrganization : inOrganization.where(sql<boolean>`t.name = any(${only}::text[])`)
        })
        .selectFrom('org')
        .leftJoinLateral((eb) => eb.selectFrom('matching').innerJoin('teams as t', 't.id', 'matching.id').select(viewColumns('t'))
          .orderBy('matching.name').orderBy('matching.id')
          .limit(limit as unknown as number).offset(offset as unknown as number).as('p'), (join) => join.onTrue())
        .selectAll('p')
        .select(sql<number>`(select count(*) from matching)`.as('total'))
        .orderBy('p.name').orderBy('p.id'))
    const result = (await this.db.executeQuery<TeamView & { total: number | string }>(query)).rows
    if (result.length === 0) return undefined
    return { rows: result.filter((r) => r.id !== null), total: Number(result[0]!.total) }
  }

  /**
   * Creates a team (DESIGN §9.3) if the caller manages the organization's teams and — unless it is
   * an owner — gives it no organization-access flag. Managed by the API; absent flags false.
   * Refused `hidden`: no such organization, or the caller may not; `taken`: the name is.
   */
  async create (caller: Caller, organization: string, changes: TeamChanges, requestId: string): Promise<{ team: TeamView } | { refusal: Refusal }> {
    const flags = ORGANIZATION_ACCESS_FLAGS.map((flag) => changes.organizationAccess[flag] ?? false)
    const setsFlags = flags.some((value) => value)
    const columns = ORGANIZATION_ACCESS_FLAGS.map((flag) => sql.id(ORGANIZATION_ACCESS_COLUMNS[flag]))
    const query = sql<TeamView>`with grants as (${callerGrants(this.db, caller)}),
      org as (select o.id from ${table.organizations} o where o.name = ${organization}
        and ${managesTeamsOf('o.id')} and (${setsOrganizationAccessOf('o.id')} or not ${setsFlags}::boolean)),
      inserted as (insert into ${table.teams} (id, organization_id, name, visibility, sso_team_id, allow_member_token_management, managed_by, ${sql.join(columns)})
        select ${newId('team')}::text, org.id, ${changes.name}::text, ${changes.visibility ?? 'secret'}::text,
          ${changes.ssoTeamId ?? null}::text, ${changes.allowMemberTokenManagement ?? true}::boolean, 'api',
          ${sql.join(flags.map((value) => sql`${value}::boolean`))}
        from org returning *),
      events as (select organization_id, id as resource_id, jsonb_build_object('team', name) as meta from inserted),
      audit as (${this.directoryEvents('events', 'create', caller, requestId)})
      select ${sql.join(viewColumns('inserted'))} from inserted`
    try {
      const team = (await query.execute(this.db)).rows[0]
      return team === undefined ? { refusal: 'hidden' } : { team }
    } catch (err) {
      if (isNameTaken(err)) return { refusal: 'taken' }
      // the organization was removed while the insert waited for it: not there (404), never a 500
      if (isGoneWhileWaiting(err)) return { refusal: 'hidden' }
      throw err
    }
  }

  /**
   * Updates a team (DESIGN §9.3) in one statement: the team is locked as the caller may manage it
   * (`managesTeam`), `organization-access` merged (absent flags keep their value), and the row
   * written only when a value differs, with its `update` event — a PATCH that changes nothing
   * writes nothing, records nothing, and answers the team as it is. Refused `hidden`: the caller
   * may not manage the team, or (not an owner) changes a flag; `seed`: the seed file manages it;
   * `owners`: a rename of the owners team, or a change of its flags; `taken`: the new name is.
   */
  async update (caller: Caller, id: string, changes: TeamChanges, requestId: string): Promise<{ team: TeamView } | { refusal: Refusal }> {
    const given = ORGANIZATION_ACCESS_FLAGS.map((flag) => [ORGANIZATION_ACCESS_COLUMNS[flag], changes.organizationAccess[flag] ?? null] as const)
    const merged = given.map(([column, value]) => sql`coalesce(${value}::boolean, c.${sql.id(column)}) as ${sql.id(column)}`)
    const flagChanges = sql.join(given.map(([column]) => sql`m.${sql.id(column)} is distinct from c.${sql.id(column)}`), sql` or `)
    const assigned = ['name', 'visibility', 'sso_team_id', 'allow_member_token_management', ...given.map(([column]) => column)].map((column) => sql`${sql.id(column)} = m.${sql.id(column)}`)
    const query = sql<TeamView & { refusal: Refusal | null }>`with grants as (${callerGrants(this.db, caller)}),
      current as (select t.*, ${setsOrganizationAccessOf('t.organization_id')} as sets_flags from ${table.teams} t
        where t.id = ${id} and ${managesTeam('t')} for update of t),
      merged as (select c.id, coalesce(${changes.name ?? null}::text, c.name) as name,
          coalesce(${changes.visibility ?? null}::text, c.visibility) as visibility,
          case when ${changes.ssoTeamId !== undefined}::boolean then ${changes.ssoTeamId ?? null}::text else c.sso_team_id end as sso_team_id,
          coalesce(${changes.allowMemberTokenManagement ?? null}::boolean, c.allow_member_token_management) as allow_member_token_management,
          ${sql.join(merged)}
        from current c),
      verdict as (select case
            when not c.sets_flags and (${flagChanges}) then 'hidden'
            when c.managed_by = 'seed' then 'seed'
            when c.is_owners and (m.name <> c.name or ${flagChanges}) then 'owners'
          end as refusal,
          (m.name <> c.name or m.visibility <> c.visibility or m.sso_team_id is distinct from c.sso_team_id
            or m.allow_member_token_management <> c.allow_member_token_management or ${flagChanges}) as differs
        from current c join merged m on m.id = c.id),
      updated as (update ${table.teams} t set ${sql.join(assigned)} from merged m, verdict v
        where t.id = m.id and v.refusal is null and v.differs returning t.*),
      events as (select organization_id, id as resource_id, jsonb_build_object('team', name) as meta from updated),
      audit as (${this.directoryEvents('events', 'update', caller, requestId)})
      select ${sql.join(viewColumns('updated'))}, null::text as refusal from updated
      union all
      select ${sql.join(viewColumns('current'))}, v.refusal from current, verdict v where not exists (select 1 from updated)`
    try {
      const row = (await query.execute(this.db)).rows[0]
      if (row === undefined) return { refusal: 'hidden' }
      if (row.refusal !== null) return { refusal: row.refusal }
      const { refusal: _, ...team } = row
      return { team }
    } catch (err) {
      if (isNameTaken(err)) return { refusal: 'taken' }
      throw err
    }
  }

  /**
   * Deletes a team (DESIGN §9.1, §9.3) in one transaction: the team is locked as the caller may
   * manage it (`managesTeam`) — so no team access can be added to it meanwhile — then its
   * team-access rows are removed, each with its `remove_team` event, and the team goes with its
   * memberships and tokens (foreign keys) and its `destroy` event. The rows go first, in a
   * statement of their own, so that the counters' triggers see the team while they count them out.
   * Refused `hidden`: the caller may not; `seed`: the seed file manages it; `owners`: the owners team.
   */
  async destroy (caller: Caller, id: string, requestId: string): Promise<{ refusal?: Refusal }> {
    return await this.db.transaction().execute(async (trx) => {
      const target = (await sql<{ refusal: Refusal | null }>`with grants as (${callerGrants(trx, caller)})
        select case when t.managed_by = 'seed' then 'seed' when t.is_owners then 'owners' end as refusal
        from ${table.teams} t where t.id = ${id} and ${managesTeam('t')} for update of t`.execute(trx)).rows[0]
      if (target === undefined) return { refusal: 'hidden' }
      if (target.refusal !== null) return { refusal: target.refusal }
      await sql`with removed as (delete from ${table.team_workspaces} where team_id = ${id} returning id, organization_id, team_id, workspace_id),
        audit as (${recordEvents(trx, 'removed', { action: 'remove_team', accessor: accessorOf(caller), requestId, permissions: false })})
        select count(*) from removed`.execute(trx)
      const destroyed = await sql`with destroyed as (delete from ${table.teams} where id = ${id} returning organization_id, id, name),
        forgotten as (delete from ${table.seed_grants} where team_id = ${id}),
        events as (select organization_id, id as resource_id, jsonb_build_object('team', name) as meta from destroyed),
        audit as (${this.directoryEvents('events', 'destroy', caller, requestId)})
        select id from destroyed`.execute(trx)
      // the team is locked: its delete finds it, or nothing of this write stays (its rows' removal included)
      if (destroyed.rows.length !== 1) throw new Error(`team ${id} went while locked`)
      return {}
    })
  }

  private directoryEvents (changed: string, action: 'create' | 'update' | 'destroy', caller: Caller, requestId: string) {
    return recordDirectoryEvents(this.db, changed, { resourceType: 'team', action, accessor: accessorOf(caller), requestId })
  }
}
