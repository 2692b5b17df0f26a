import { sql, type Kysely, type QueryCreator } from 'kysely'
import type { Visibility } from '../../schemas/common.js'
import type { Database } from '../db/database.js'
import { QueryShapes } from '../db/query-shapes.js'
import { callerOfKind, callerValues, withGrants } from '../access/grants.js'
import { isMemberOf, readsTeam } from '../access/predicates.js'
import type { Caller } from '../auth/caller.js'
import type { PageRequest } from '../jsonapi/pagination.js'

/** A team with what its resource needs. */
export interface TeamView {
  id: string
  name: string
  visibility: Visibility
  manage_workspaces: boolean
  read_workspaces: boolean
  users_count: number | string
  organization_name: string
}

/** Teams the caller may read (DESIGN §7), in one statement each, built once per shape. */
export class TeamsRepository {
  private readonly shapes = new QueryShapes()

  constructor (private readonly db: Kysely<Database>) {}

  /** The teams the caller may read, with what a resource needs. */
  private readable (qc: QueryCreator<Database>) {
    return qc.selectFrom('teams as t')
      .innerJoin('organizations as o', 'o.id', 't.organization_id')
      .select(['t.id', 't.name', 't.visibility', 't.manage_workspaces', 't.read_workspaces', 'o.name as organization_name',
        sql<number>`(select count(*) from team_memberships m where m.team_id = t.id)`.as('users_count')])
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
          const inOrganization = this.readable(qc as unknown as QueryCreator<Database>).where('t.organization_id', '=', sql<string>`(select id from org)`)
          return only === undefined ? inOrganization : inOrganization.where(sql<boolean>`t.name = any(${only}::text[])`)
        })
        .selectFrom('org')
        .leftJoinLateral((eb) => eb.selectFrom('matching').selectAll()
          .orderBy('matching.name').orderBy('matching.id')
          .limit(limit as unknown as number).offset(offset as unknown as number).as('p'), (join) => join.onTrue())
        .select(['p.id', 'p.name', 'p.visibility', 'p.manage_workspaces', 'p.read_workspaces', 'p.users_count', 'p.organization_name'])
        .select(sql<number>`(select count(*) from matching)`.as('total'))
        .orderBy('p.name').orderBy('p.id'))
    const result = (await this.db.executeQuery<TeamView & { total: number | string }>(query)).rows
    if (result.length === 0) return undefined
    return { rows: result.filter((r) => r.id !== null), total: Number(result[0]!.total) }
  }
}
