import { sql, type AliasedRawBuilder, type Kysely, type QueryCreator } from 'kysely'
import type { Visibility } from '../../schemas/common.js'
import type { Database, ManagedBy } from '../db/database.js'
import { QueryShapes } from '../db/query-shapes.js'
import { ORGANIZATION_ACCESS_COLUMN_NAMES, type OrganizationAccessColumn } from '../access/organization-access.js'
import { callerOfKind, callerValues, withGrants } from '../access/grants.js'
import { actsThrough, isMemberOf, readsTeam } from '../access/predicates.js'
import { teamPermissions } from '../access/escalation.js'
import type { Caller } from '../auth/caller.js'
import type { PageRequest } from '../jsonapi/pagination.js'
import { table } from '../db/tables.js'
import { apiSource } from '../directory/source.js'
import { changeTeam, createTeam, removeTeam, type TeamRefusal, type TeamValues } from '../directory/teams.js'
import { teamMembershipIds } from '../people/memberships-repository.js'

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
  /** The organization memberships of its members and of the invitations given the team (DESIGN §14.3), by id (json from the database). */
  memberships: string[] | string
  /**
   * What this caller may do with the team (DESIGN §9.3 `permissions`), decided by the predicates:
   * [can-update-membership, can-destroy].
   */
  permissions: [boolean, boolean]
}

/** Why a write changed nothing: the caller may not (404, as a missing team), or a rule of DESIGN §9.1/§9.3 refused it (422). */
export type Refusal = TeamRefusal

/** The attributes of a create or an update; an absent member is not given (on update: keeps its value). */
export type TeamChanges = TeamValues

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
    sql`coalesce((select json_agg(om.id order by om.created_at, om.id) from ${teamMembershipIds(`${team}.id`, `${team}.organization_id`)} ids
      join ${table.organization_memberships} om on om.id = ids.id), '[]'::json)`.as('memberships'),
    sql`${teamPermissions(team)}`.as('permissions')
  ]
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
    const query = this.shapes.compile(this.db, `find:${caller.kind}`, [...callerValues(caller), id], ([who, token, teamId]) =>
      this.readable(withGrants(this.db, callerOfKind(caller.kind, [who, token]))).where('t.id', '=', teamId!))
    return (await this.db.executeQuery<TeamView>(query)).rows[0]
  }

  /**
   * A page of the organization's teams the caller may read, by name, and how many there are;
   * `names` keeps only teams of exactly those names, `own` only the teams the caller acts through
   * (its memberships, a team token's team). Undefined when the organization does not
   * exist or the caller is no member of it.
   */
  async list (caller: Caller, organization: string, page: PageRequest, names?: string[], own = false): Promise<{ rows: TeamView[], total: number } | undefined> {
    const values = [...callerValues(caller), organization, page.size, (page.number - 1) * page.size, ...(names === undefined ? [] : [names])]
    const query = this.shapes.compile(this.db, `list:${caller.kind}:${names === undefined ? 'all' : 'names'}:${own ? 'own' : 'readable'}`, values, ([who, token, org, limit, offset, only]) =>
      withGrants(this.db, callerOfKind(caller.kind, [who, token]))
        .with('org', (qc) => qc.selectFrom('organizations').select('id').where('name', '=', org!).where(isMemberOf('organizations.id')))
        .with('matching', (qc) => {
          const inOrganization = qc.selectFrom('teams as t').select(['t.id', 't.name'])
            .where(readsTeam('t.id', 't.visibility', 't.organization_id'))
            .where('t.organization_id', '=', sql<string>`(select id from org)`)
            .where(own ? actsThrough('t.id') : sql<boolean>`true`)
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

  /** Creates a team (DESIGN §9.3), as the caller asks the directory (src/directory/teams.ts); answers its resource for the caller. */
  async create (caller: Caller, organization: string, changes: TeamChanges, requestId: string): Promise<{ team: TeamView } | { refusal: Refusal, name?: string }> {
    return await createTeam<TeamView>(this.db, apiSource(caller, requestId), { name: organization }, { ...changes, name: changes.name! }, answer)
  }

  /** Updates a team (DESIGN §9.3), as the caller asks the directory; answers its resource for the caller. */
  async update (caller: Caller, id: string, changes: TeamChanges, requestId: string): Promise<{ team: TeamView } | { refusal: Refusal, name?: string }> {
    return await changeTeam<TeamView>(this.db, apiSource(caller, requestId), id, changes, answer)
  }

  /** Deletes a team (DESIGN §9.1, §9.3) with what it holds, as the caller asks the directory. */
  async destroy (caller: Caller, id: string, requestId: string): Promise<{ refusal?: Refusal, revoked?: string[] }> {
    return await removeTeam(this.db, apiSource(caller, requestId), id)
  }
}

/** A team's resource for the caller, from a CTE of team rows. */
const answer = (team: string) => sql.join(viewColumns(team))
