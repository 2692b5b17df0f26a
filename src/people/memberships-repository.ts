import { mirrorOf, organizationPermissions } from '../access/organization-permissions.js'
import { sql, type Kysely, type RawBuilder } from 'kysely'
import { callerGrants, tokenStillNamesCaller } from '../access/grants.js'
import { isMemberOf, readsEmailOf, readsTeam } from '../access/predicates.js'
import type { Caller } from '../auth/caller.js'
import type { Database } from '../db/database.js'
import { table } from '../db/tables.js'
import type { PageRequest } from '../jsonapi/pagination.js'
import { addTeamMemberships, createMembership, removeMembership, removeTeamMemberships, type MembershipRefusal } from '../directory/organization-memberships.js'
import { apiSource } from '../directory/source.js'

export type { MembershipRefusal }

/** A team of a membership, as its resource and `include=teams` need it. */
export interface MemberTeam { id: string, name: string, visibility: 'secret' | 'organization' }

/** A membership with what its resource needs, for this caller: its email only where the caller reads it. */
export interface MembershipView {
  id: string
  status: 'active' | 'invited'
  created_at: Date | string
  organization_name: string
  user_id: string
  username: string | null
  email: string | null
  /** The person's teams there (an invitation's: those it was given) that the caller reads (json from the database). */
  teams: MemberTeam[] | string
}

/** An organization as `GET /organizations` lists it. */
/** An organization as a member reads it: its id (answered as `external-id`), its default project, and what the caller may do with it. */
export interface OrganizationView {
  id: string
  name: string
  created_at: Date | string
  default_project_id: string
  permissions: Record<string, boolean>
  /** Where a mirrored organization is read from, and when a run last succeeded (DESIGN §13, §12.2); null for any other. */
  mirror: { host: string, succeeded_at: string } | null
}

/** What a list of an organization's memberships keeps: emails (lower-cased), a status, a substring of the username or email. */
export interface MembershipFilter { emails?: string[] | undefined, status?: 'active' | 'invited' | undefined, q?: string | undefined }

/** A page of rows and how many there are in all. */
export interface Page<T> { rows: T[], total: number }

/**
 * Organization memberships (DESIGN §14.2, §14.3) as the API reads them — each a statement that
 * starts with the caller's `grants`, so that who reads (members of the organization) and whose
 * email (those who manage its memberships, and the person) are decided by the predicates of
 * src/access/predicates.ts — and the caller's organizations. Writes ask the directory
 * (src/directory/organization-memberships.ts).
 */
export class MembershipsRepository {
  constructor (private readonly db: Kysely<Database>) {}

  /** One membership, for a member of its organization. */
  async find (caller: Caller, id: string): Promise<MembershipView | undefined> {
    const result = await sql<MembershipView>`with grants as (${callerGrants(this.db, caller)})
      select ${viewColumns(caller)} ${viewFrom} where m.id = ${id} and ${isMemberOf('m.organization_id')}`.execute(this.db)
    return result.rows[0]
  }

  /**
   * A page of the organization's memberships, oldest first, and how many match; undefined when the
   * organization does not exist or the caller is no member of it. An email filter or substring
   * finds a person by email only where the caller reads that email.
   */
  async list (caller: Caller, organization: string, page: PageRequest, filter: MembershipFilter): Promise<Page<MembershipView> | undefined> {
    const self = selfOf(caller)
    const readable = readsEmailOf('m.organization_id', 'm.user_id', self)
    const conditions: Array<RawBuilder<boolean>> = [sql`m.organization_id = (select id from org)`]
    if (filter.status !== undefined) conditions.push(sql`m.status = ${filter.status}`)
    if (filter.emails !== undefined) conditions.push(sql`lower(u.email) = any(${filter.emails}::text[]) and ${readable}`)
    if (filter.q !== undefined) {
      conditions.push(sql`(strpos(lower(coalesce(u.username, '')), lower(${filter.q})) > 0
        or (${readable} and strpos(lower(coalesce(u.email, '')), lower(${filter.q})) > 0))`)
    }
    return await this.paged(caller, sql`org as (select o.id from ${table.organizations} o where o.name = ${organization} and ${isMemberOf('o.id')}),
      matching as (select m.id, m.created_at from ${table.organization_memberships} m join ${table.users} u on u.id = m.user_id
        where ${sql.join(conditions, sql` and `)})`, sql`org`, page)
  }

  /**
   * A team's memberships (DESIGN §14.3), oldest first — its members' and the invitations it was
   * given — for a caller who reads the team; undefined: no such team, or one it may not read. A
   * page, or (none) every one.
   */
  async ofTeam (caller: Caller, teamId: string, page?: PageRequest): Promise<Page<MembershipView> | undefined> {
    return await this.paged(caller, sql`team as (select t.id, t.organization_id from ${table.teams} t
        where t.id = ${teamId} and ${readsTeam('t.id', 't.visibility', 't.organization_id')}),
      matching as (select m.id, m.created_at from ${table.organization_memberships} m
        where m.id in (select ids.id from team, ${teamMembershipIds('team.id', 'team.organization_id')} ids))`, sql`team`, page)
  }

  /** The memberships of the teams (each the caller reads), once each, oldest first: a team's `include=organization-memberships`. */
  async ofTeams (caller: Caller, teamIds: string[]): Promise<MembershipView[]> {
    if (teamIds.length === 0) return []
    const result = await sql<MembershipView>`with grants as (${callerGrants(this.db, caller)}),
      readable as (select t.id, t.organization_id from ${table.teams} t where t.id = any(${teamIds}::text[]) and ${readsTeam('t.id', 't.visibility', 't.organization_id')})
      select ${viewColumns(caller)} ${viewFrom}
      where m.id in (select ids.id from readable, ${teamMembershipIds('readable.id', 'readable.organization_id')} ids)
      order by m.created_at, m.id`.execute(this.db)
    return result.rows
  }

  /**
   * A page of the organizations the caller belongs to (DESIGN §14.3), by name: a user's each of its
   * active memberships, a team's or an organization's token its own. Undefined: the caller's token
   * no longer names it (a refusal, which authentication answers 401).
   */
  async organizations (caller: Caller, page: PageRequest, q?: string): Promise<Page<OrganizationView> | undefined> {
    const result = await sql<OrganizationView & { total: number | string, usable: boolean }>`with grants as (${callerGrants(this.db, caller)}),
      matching as (select o.id, o.name from ${table.organizations} o
        where o.id in (select g.organization_id from grants g)${q === undefined ? sql`` : sql` and strpos(lower(o.name), lower(${q})) > 0`})
      select ${tokenStillNamesCaller(caller)} as usable, (select count(*) from matching) as total, p.*
      from (select 1) one left join lateral (select o.id, o.name, o.created_at, pr.id as default_project_id, ${organizationPermissions('o.id')} as permissions, ${mirrorOf('o.id')} as mirror
        from matching x join ${table.organizations} o on o.id = x.id
          join ${table.projects} pr on pr.organization_id = o.id and pr.is_default
        order by o.name limit ${page.size} offset ${(page.number - 1) * page.size}) p on true`.execute(this.db)
    const first = result.rows[0]
    if (first === undefined || !first.usable) return undefined
    return { rows: result.rows.filter((row) => row.name !== null), total: Number(first.total) }
  }

  /** The page of `matching` (a CTE of membership ids and times, after the `scope` CTE that must be there for anything to be). */
  private async paged (caller: Caller, ctes: RawBuilder<unknown>, scope: RawBuilder<unknown>, page?: PageRequest): Promise<Page<MembershipView> | undefined> {
    const slice = page === undefined ? sql`` : sql`limit ${page.size} offset ${(page.number - 1) * page.size}`
    const result = await sql<MembershipView & { total: number | string }>`with grants as (${callerGrants(this.db, caller)}), ${ctes}
      select (select count(*) from matching) as total, p.* from ${scope} left join lateral (
        select ${viewColumns(caller)} from (select x.id from matching x order by x.created_at, x.id ${slice}) x
          join ${table.organization_memberships} m on m.id = x.id
          join ${table.users} u on u.id = m.user_id join ${table.organizations} o on o.id = m.organization_id
        order by m.created_at, m.id) p on true`.execute(this.db)
    const first = result.rows[0]
    if (first === undefined) return undefined
    return { rows: result.rows.filter((row) => row.id !== null), total: Number(first.total) }
  }

  /** Invites a person by email (DESIGN §14.2), as the caller asks the directory; the new membership's id. */
  async create (caller: Caller, organization: string, email: string, teamIds: string[], requestId: string): Promise<{ id: string } | { refusal: MembershipRefusal }> {
    return await createMembership(this.db, apiSource(caller, requestId), { name: organization }, email, teamIds)
  }

  /** Ends a membership: the person leaves the organization and its teams. */
  async destroy (caller: Caller, id: string, requestId: string): Promise<MembershipRefusal | undefined> {
    const result = await removeMembership(this.db, apiSource(caller, requestId), id)
    return 'refusal' in result ? result.refusal : undefined
  }

  /** Adds (or removes) memberships to a team (DESIGN §14.3). */
  async changeTeam (caller: Caller, teamId: string, ids: string[], add: boolean, requestId: string): Promise<MembershipRefusal | undefined> {
    const result = await (add ? addTeamMemberships : removeTeamMemberships)(this.db, apiSource(caller, requestId), teamId, ids)
    return 'refusal' in result ? result.refusal : undefined
  }
}

/** The caller's own user id, the one email besides those it manages that it reads. */
const selfOf = (caller: Caller): string | null => caller.kind === 'user' ? caller.userId : null

/**
 * The memberships of a team (`team`, `organization`: columns of its row), as a lateral subquery of
 * `id`s: its members' (found from the team's memberships, by user) and those of the invitations
 * given it (DESIGN §14.3) — read from the team's side, so a team costs its own members, never its
 * organization's.
 */
export const teamMembershipIds = (team: string, organization: string): RawBuilder<unknown> => sql`lateral (
  select om.id from ${table.team_memberships} tm join ${table.organization_memberships} om on om.user_id = tm.user_id and om.organization_id = ${sql.ref(organization)}
    where tm.team_id = ${sql.ref(team)}
  union
  select omt.membership_id from ${table.organization_membership_teams} omt where omt.team_id = ${sql.ref(team)})`

/**
 * The teams of a membership (`membership`: its alias), any organization's: its person's (by user)
 * and those its invitation was given — read from the membership's side, so a membership costs its
 * own teams, never every team of its organization.
 */
const teamIdsOf = (membership: string): RawBuilder<unknown> => sql`
  select tm.team_id from ${table.team_memberships} tm where tm.user_id = ${sql.ref(`${membership}.user_id`)}
  union
  select omt.team_id from ${table.organization_membership_teams} omt where omt.membership_id = ${sql.ref(`${membership}.id`)}`

const viewFrom = sql`from ${table.organization_memberships} m join ${table.users} u on u.id = m.user_id join ${table.organizations} o on o.id = m.organization_id`

/** The columns of a membership's resource for the caller, over `m`, its user `u` and its organization `o`. */
function viewColumns (caller: Caller): RawBuilder<unknown> {
  return sql`m.id, m.status, m.created_at, m.user_id, u.username, o.name as organization_name,
    case when ${readsEmailOf('m.organization_id', 'm.user_id', selfOf(caller))} then u.email end as email,
    coalesce((select json_agg(json_build_object('id', t.id, 'name', t.name, 'visibility', t.visibility) order by t.name, t.id)
      from ${table.teams} t where t.id in (${teamIdsOf('m')}) and t.organization_id = m.organization_id
        and ${readsTeam('t.id', 't.visibility', 't.organization_id')}), '[]'::json) as teams`
}
