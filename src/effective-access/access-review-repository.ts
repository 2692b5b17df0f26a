import { sql, type ExpressionBuilder, type Kysely, type QueryCreator, type RawBuilder, type SelectQueryBuilder } from 'kysely'
import type { Database } from '../db/database.js'
import { PERMISSION_COLUMN_NAMES } from '../access/permission-columns.js'
import { callerOfKind, callerValues, teamGrants, withGrants } from '../access/grants.js'
import { grantsOrganizationWide, isOwnerOf } from '../access/predicates.js'
import { explainAccess, ORGANIZATION_GRANTS, type Explanation } from '../access/effective-access.js'
import { PROJECT_GRANT_COLUMNS } from '../access/project-permissions.js'
import type { Caller } from '../auth/caller.js'
import type { PageRequest } from '../jsonapi/pagination.js'
import { ApiError } from '../jsonapi/errors.js'
import { table } from '../db/tables.js'
import { QueryShapes } from '../db/query-shapes.js'
import { teamGrantsOf, type GrantRow } from './effective-access-repository.js'

/**
 * The access review (DESIGN §12.1): every team of an organization with every workspace it holds
 * effective access on, and why — the grants of §10.2 and §11.3 (organization flags, team-access
 * rows, team-project rows on the workspace's project), combined by `explainAccess` as everywhere
 * else. Owners only: the statement finds the organization only for them.
 */

/** One team's effective access on one workspace, with what a reviewer reads beside it. */
export interface ReviewEntry extends Explanation {
  team: ReviewTeam
  workspace: { id: string, name: string, projectId: string, projectName: string }
}

type PairRow = GrantRow & {
  team_id: string
  team_name: string
  visibility: 'secret' | 'organization'
  workspace_id: string
  workspace_name: string
  project_id: string
  project_name: string
}

const FLAGS = ORGANIZATION_GRANTS.map((grant) => grant.flag)

/** A team as the review lists it. */
export interface ReviewTeam { id: string, name: string, visibility: 'secret' | 'organization', members: string[] }

/** A workspace a team reaches, and the ids of its grants there (its flags are the team's). */
type ReachedRow = Pick<PairRow, 'workspace_id' | 'workspace_name' | 'project_id' | 'project_name' | 'row_id' | 'tp_id'>

/** The columns of `pairs` that `teamGrantsOf` reads: the team's flags, its row, its project row. */
const GRANT_COLUMNS = ['team_id', ...FLAGS, 'row_id', 'access', ...PERMISSION_COLUMN_NAMES, ...PROJECT_GRANT_COLUMNS.map((c) => `tp_${c}`)]

/** The columns of `pairs` a slice of a team's workspaces reads: the workspace, and the ids of its grants. */
const REACHED_COLUMNS = ['workspace_id', 'workspace_name', 'project_id', 'project_name', 'row_id', 'tp_id'] as const

/**
 * A query's rows as one value, a JSON array of arrays of `columns` (in the order of `order`): the
 * streamed review reads each team's rows so — one string for the driver to read instead of a row
 * object of strings per workspace (a third less allocated), and one statement can answer two
 * lists (a slice and its grants). `rowsOf` reads it back.
 */
const jsonArrayOf = (rows: RawBuilder<unknown>, columns: readonly string[], order: readonly string[] = []): RawBuilder<string> =>
  sql<string>`(select coalesce(json_agg(json_build_array(${sql.join(columns.map((c) => sql.ref(`s.${c}`)))})${
    order.length === 0 ? sql`` : sql` order by ${sql.join(order.map((c) => sql.ref(`s.${c}`)))}`}), '[]')::text from ${rows} as s)`

/** The rows of a `jsonArrayOf`, as objects of its `columns`. */
function rowsOf<T> (text: string, columns: readonly string[]): T[] {
  return (JSON.parse(text) as unknown[][]).map((values) => {
    const row: Record<string, unknown> = {}
    for (let i = 0; i < columns.length; i++) row[columns[i]!] = values[i]
    return row as T
  })
}

/** Which of a team's grants a workspace holds: its row there and its project row, if any. */
const grantKey = (row: Pick<PairRow, 'row_id' | 'tp_id'>): string => `${row.row_id ?? ''} ${row.tp_id ?? ''}`

/** A row of `pairs` as its entry; `members` the team's usernames. */
export function reviewEntryOf (row: PairRow, members: string[]): ReviewEntry {
  return { team: { id: row.team_id, name: row.team_name, visibility: row.visibility, members }, workspace: workspaceOf(row), ...explanationOf(row) }
}

/** The workspace of a row of `pairs`, as an entry names it. */
const workspaceOf = (row: ReachedRow): ReviewEntry['workspace'] =>
  ({ id: row.workspace_id, name: row.workspace_name, projectId: row.project_id, projectName: row.project_name })

/** What a team's grants on a workspace (a row of `pairs`) give, and why. */
const explanationOf = (row: GrantRow): Explanation => explainAccess([teamGrantsOf(row)])

/** The usernames of a team's members, sorted (null: none); `team` names the team id's column. */
const membersOf = (team: string): RawBuilder<string[] | null> =>
  sql<string[] | null>`(select array_agg(u.username order by u.username) from ${table.team_memberships} m join ${table.users} u on u.id = m.user_id where m.team_id = ${sql.ref(team)})`

/**
 * The (team, workspace) pairs of the organization in the statement's `org` CTE that hold any grant,
 * from the grants themselves: a team with an organization-wide flag (owners among them) on every
 * workspace, a team-access row on its workspace, a team-project row on each workspace of its
 * project. Never every team against every workspace: the pairs cost what the grants are.
 */
const candidates = sql`(
  select tg.team_id, w.id as workspace_id from team_grants tg join ${table.workspaces} w on w.organization_id = tg.organization_id
    where tg.organization_id = (select id from org) and ${grantsOrganizationWide('tg')}
  union
  select tw.team_id, tw.workspace_id from team_grants tg join ${table.team_workspaces} tw on tw.team_id = tg.team_id
    where tg.organization_id = (select id from org)
  union
  select tp.team_id, w.id from team_grants tg join ${table.team_projects} tp on tp.team_id = tg.team_id join ${table.workspaces} w on w.project_id = tp.project_id
    where tg.organization_id = (select id from org))`

/** A pair's columns, from its joins `tg` (the team's grant row), `t`, `w`, `p`, `tw` (its row) and `tp` (its project row): what `explainAccess` combines. */
// typed loosely: the statements that use it add their own CTEs (org, team_grants, slice) to the database type
const pairColumns = (pairs: SelectQueryBuilder<any, any, any>) => pairs
  .select(['tg.team_id', 't.name as team_name', 't.visibility', 'w.id as workspace_id', 'w.name as workspace_name', 'p.id as project_id', 'p.name as project_name', 'tw.id as row_id', 'tw.access'])
  .select(FLAGS.map((flag) => `tg.${flag}` as const))
  .select(PERMISSION_COLUMN_NAMES.map((c) => `tw.${c}` as const))
  .select(PROJECT_GRANT_COLUMNS.map((c) => `tp.${c} as tp_${c}` as const))

/**
 * A stream's slice of `candidates`: at most `limit` of them after the workspace (`name`, `id`), by
 * workspace name and id — taken before the pairs are joined to their grants, so that a slice joins
 * its own pairs only (a team with an organization-wide flag reaches every workspace: its slices, each
 * joined whole, cost the square of its size).
 */
const sliceOfCandidates = (limit: unknown, after: [unknown, unknown] | undefined) => sql`(
  select c.team_id, c.workspace_id from ${candidates} c join ${table.workspaces} w on w.id = c.workspace_id
  ${after === undefined ? sql`` : sql`where (w.name, w.id) > (${after[0]}, ${after[1]})`}
  order by w.name, w.id limit ${limit})`

/**
 * The pairs of a slice (`sliceOfCandidates`) with the team's grant row, its row on the workspace and
 * its row on the workspace's project, joined whole, where a lookup by key per pair costs more on the
 * embedded database.
 */
const pairs = (qc: QueryCreator<any>, slice: RawBuilder<unknown>) => pairColumns(qc.selectFrom(slice.as('c'))
  .innerJoin('team_grants as tg', 'tg.team_id', 'c.team_id')
  .innerJoin('teams as t', 't.id', 'c.team_id')
  .innerJoin('workspaces as w', 'w.id', 'c.workspace_id')
  .innerJoin('projects as p', 'p.id', 'w.project_id')
  .leftJoin('team_workspaces as tw', (join) => join.onRef('tw.workspace_id', '=', 'c.workspace_id').onRef('tw.team_id', '=', 'c.team_id'))
  .leftJoin('team_projects as tp', (join) => join.onRef('tp.project_id', '=', 'w.project_id').onRef('tp.team_id', '=', 'c.team_id')))

/** How a stream runs each of its statements: by default at once; the routes, each in a turn of admission's (`inTurn`). */
export type ReadInTurn = <T>(read: () => Promise<T>) => Promise<T>

/**
 * A stream's caller is no longer an owner of the organization (its token revoked, its membership
 * removed): the stream stops where it is, and its answer ends unfinished, never as if it were whole.
 */
export class NoLongerOwner extends ApiError {
  constructor () { super(404, 'not found', 'The caller no longer reads this organization\'s access review.') }
}

/** The organization of this id, as the `org` CTE, when the statement's caller (its `grants`) owns it; no row otherwise. */
const ownedOrganization = (qc: QueryCreator<any>, organizationId: string) =>
  qc.selectFrom('organizations as o').where('o.id', '=', organizationId).where(isOwnerOf('o.id')).select('o.id')

/**
 * Each team of the organization in the statement's `org` CTE, with how many workspaces it reaches
 * — its pairs in `candidates`, counted without being listed, for every team at once by grouping
 * (not a count per team): a team with an organization-wide flag every workspace of the
 * organization (its rows and project rows are on workspaces and projects of its own organization:
 * the foreign keys say so); any other the workspaces of its team-project rows' projects (a
 * workspace is in one project, a team has one row a project: their sum) and those of its
 * team-access rows (one a workspace) less those of its rows inside those projects.
 */
const teamCounts = sql<{ team_id: string, team_name: string, wide: boolean, n: number | string }>`(
  select tg.team_id, t.name as team_name, ${grantsOrganizationWide('tg')} as wide,
    case when ${grantsOrganizationWide('tg')}
      then (select count(*) from ${table.workspaces} w where w.organization_id = (select id from org))
      else coalesce(pc.n, 0) + coalesce(rc.n, 0) - coalesce(oc.n, 0)
    end as n
  from team_grants tg join ${table.teams} t on t.id = tg.team_id
  left join (
    select tp.team_id, sum(pw.n) as n from team_grants g join ${table.team_projects} tp on tp.team_id = g.team_id
      join (select w.project_id, count(*) as n from ${table.workspaces} w where w.organization_id = (select id from org) group by w.project_id) pw
        on pw.project_id = tp.project_id
      where g.organization_id = (select id from org)
      group by tp.team_id) pc on pc.team_id = tg.team_id
  left join (
    select tw.team_id, count(*) as n from team_grants g join ${table.team_workspaces} tw on tw.team_id = g.team_id
      where g.organization_id = (select id from org)
      group by tw.team_id) rc on rc.team_id = tg.team_id
  left join (
    select tw.team_id, count(*) as n from team_grants g join ${table.team_projects} tp on tp.team_id = g.team_id
      join ${table.team_workspaces} tw on tw.team_id = tp.team_id
      join ${table.workspaces} w on w.id = tw.workspace_id and w.project_id = tp.project_id
      where g.organization_id = (select id from org)
      group by tw.team_id) oc on oc.team_id = tg.team_id
  where tg.organization_id = (select id from org))`

/** A team a page overlaps: its slice of workspaces (`take` after the first `skip`), and its members. */
interface ChosenTeam { team_id: string, wide: boolean, skip: number, take: number, members: string[] | null }

/**
 * The pairs of a page: for each team of the statement's `chosen` CTE, `take` of the workspaces it
 * reaches (as `candidates` has them) after its first `skip`, by workspace name and id — for a team
 * with an organization-wide flag the organization's workspaces, read in that order by their index.
 */
const pageSlices = sql<{ team_id: string, workspace_id: string, members: string[] | null }>`(
  select c.team_id, s.workspace_id, c.members from chosen c cross join lateral (
    select w.id as workspace_id from ${table.workspaces} w where w.organization_id = (select id from org)
    order by w.name, w.id offset c.skip limit c.take) s
  where c.wide
  union all
  select c.team_id, s.workspace_id, c.members from chosen c cross join lateral (
    select u.workspace_id from (
      select w.id as workspace_id, w.name from ${table.team_workspaces} tw join ${table.workspaces} w on w.id = tw.workspace_id where tw.team_id = c.team_id
      union
      select w.id, w.name from ${table.team_projects} tp join ${table.workspaces} w on w.project_id = tp.project_id where tp.team_id = c.team_id) u
    order by u.name, u.workspace_id offset c.skip limit c.take) s
  where not c.wide)`

/**
 * The pairs of the statement's `slice` CTE (a page's) as `pairs` gives them, with the team's
 * members: the team's row on each workspace and its row on the workspace's project each looked up
 * by its unique key (a lateral LIMIT 1), not hashed whole.
 */
const slicePairs = (qc: QueryCreator<any>) => pairColumns(qc.selectFrom('slice as c')
  .innerJoin('team_grants as tg', 'tg.team_id', 'c.team_id')
  .innerJoin('teams as t', 't.id', 'c.team_id')
  .innerJoin('workspaces as w', 'w.id', 'c.workspace_id')
  .innerJoin('projects as p', 'p.id', 'w.project_id')
  .leftJoinLateral((eb: ExpressionBuilder<any, any>) => eb.selectFrom('team_workspaces as r').selectAll('r')
    .whereRef('r.team_id', '=', 'c.team_id').whereRef('r.workspace_id', '=', 'c.workspace_id').limit(1).as('tw'), (join) => join.onTrue())
  .leftJoinLateral((eb: ExpressionBuilder<any, any>) => eb.selectFrom('team_projects as r').selectAll('r')
    .whereRef('r.team_id', '=', 'c.team_id').whereRef('r.project_id', '=', 'w.project_id').limit(1).as('tp'), (join) => join.onTrue()))
  .select('c.members')

export class AccessReviewRepository {
  private readonly shapes = new QueryShapes()

  constructor (private readonly db: Kysely<Database>) {}

  /** The organization of this name when the caller is one of its owners; undefined otherwise (404). */
  async organization (caller: Caller, name: string): Promise<{ id: string, name: string } | undefined> {
    return await withGrants(this.db, caller).selectFrom('organizations as o')
      .where('o.name', '=', name).where(isOwnerOf('o.id'))
      .select(['o.id', 'o.name']).executeTakeFirst()
  }

  /**
   * A page of the organization's entries, by team name, then workspace name, and how many there
   * are; undefined when there is no such organization or the caller is not its owner.
   *
   * A page costs what it returns, not what the organization holds (issue 43): the teams, each
   * with how many workspaces it reaches (`teamCounts`, counted without being listed), stand end to
   * end in the pages' order; only the teams the page overlaps (`chosen`, at most its size) read
   * their slice of workspaces (`pageSlices`), and only those pairs are joined to their grants. One
   * statement, so the count and the page are one snapshot.
   */
  async page (caller: Caller, organizationName: string, page: PageRequest): Promise<{ entries: ReviewEntry[], total: number } | undefined> {
    const from = (page.number - 1) * page.size
    const to = from + page.size
    const rows = await withGrants(this.db, caller)
      .with('team_grants', (qc) => teamGrants(qc))
      .with('org', (qc) => qc.selectFrom('organizations as o').where('o.name', '=', organizationName).where(isOwnerOf('o.id')).select('o.id'))
      .with('counted', () => teamCounts)
      .with('chosen', () => sql<ChosenTeam>`(select c.team_id, c.wide, greatest(${from} - c.start, 0) as skip,
          least(c.start + c.n, ${to}) - greatest(c.start, ${from}) as take, ${membersOf('c.team_id')} as members
        from (select team_id, wide, n, sum(n) over (order by team_name, team_id) - n as start from counted where n > 0) c
        where c.start < ${to} and c.start + c.n > ${from})`)
      .with('slice', () => pageSlices)
      .with('reached', (qc) => slicePairs(qc as QueryCreator<any>))
      .selectFrom('org')
      .leftJoin('reached as x', (join) => join.onTrue())
      .selectAll('x')
      .select(sql<number | string>`(select coalesce(sum(n), 0) from counted)`.as('total'))
      .orderBy('x.team_name').orderBy('x.team_id').orderBy('x.workspace_name').orderBy('x.workspace_id')
      .execute()
    if (rows.length === 0) return undefined
    return {
      total: Number(rows[0]!.total),
      entries: rows.filter((row) => row.team_id !== null).map((row) => reviewEntryOf(row as unknown as PairRow, row.members ?? []))
    }
  }

  /** The organization's teams by name, each with its members' usernames, sorted, while `caller` owns it (NoLongerOwner otherwise). */
  private async ownedTeams (caller: Caller, organizationId: string): Promise<ReviewTeam[]> {
    const rows = await withGrants(this.db, caller)
      .with('org', (qc) => ownedOrganization(qc, organizationId))
      .selectFrom('org')
      .leftJoin('teams as t', 't.organization_id', 'org.id')
      .select(['t.id', 't.name', 't.visibility', membersOf('t.id').as('members')])
      .orderBy('t.name').orderBy('t.id')
      .execute()
    if (rows.length === 0) throw new NoLongerOwner()
    return rows.filter((row) => row.id !== null).map((row) => ({ id: row.id!, name: row.name!, visibility: row.visibility!, members: row.members ?? [] }))
  }

  /**
   * Every entry of the organization, in the pages' order, a slice at a time: team after team, its
   * workspaces `slice` at a time (by name, id), each only the workspace and the ids of the grants it
   * holds there, with those grants in the same statement, each combination explained once. So the
   * whole organization streams with one slice of small entries in memory, whatever its size, and
   * each slice as its statement read it (the review is not one snapshot: a team's slices are not).
   * Every statement asks again whether `caller` owns the organization, in the statement itself: a
   * caller who stops being an owner (a token revoked, a membership removed) gets nothing read after
   * that — the stream throws NoLongerOwner. Each statement runs through `inTurn`.
   */
  async * entries (caller: Caller, organizationId: string, slice: number, inTurn: ReadInTurn = async (read) => await read()): AsyncGenerator<ReviewEntry[]> {
    for (const team of await inTurn(async () => await this.ownedTeams(caller, organizationId))) {
      let after: ReachedRow | undefined
      for (;;) {
        const read = await inTurn(async () => await this.sliceOf(caller, organizationId, team.id, slice, after))
        const explanations = new Map(read.grants.map((grant) => [grantKey(grant), explanationOf(grant)]))
        if (read.rows.length > 0) yield read.rows.map((row) => ({ team, workspace: workspaceOf(row), ...explanations.get(grantKey(row))! }))
        if (read.rows.length < slice) break
        after = read.rows[read.rows.length - 1]
      }
    }
  }

  /**
   * At most `limit` of the workspaces a team reaches, after the workspace `after`, by name and id:
   * the workspace and the ids of its grants; and those grants, each combination of them once (the
   * team's flags, with one of its rows or none, with one of its project rows or none).
   */
  private async sliceOf (caller: Caller, organizationId: string, teamId: string, limit: number, after?: ReachedRow): Promise<{ rows: ReachedRow[], grants: PairRow[] }> {
    const values = [...callerValues(caller), teamId, organizationId, limit, ...(after === undefined ? [] : [after.workspace_name, after.workspace_id])]
    const query = this.shapes.compile(this.db, `slice:${after === undefined ? 'first' : 'after'}:${caller.kind}`, values, ([subject, token, team, organization, max, name, id]) =>
      this.reached(callerOfKind(caller.kind, [subject, token]), team!, organization!, sliceOfCandidates(max, name === undefined ? undefined : [name, id]))
        .selectNoFrom([
          sql<boolean>`exists (select 1 from org)`.as('owner'),
          jsonArrayOf(sql`(select * from reached)`, REACHED_COLUMNS, ['workspace_name', 'workspace_id']).as('rows'),
          jsonArrayOf(sql`(select distinct on (row_id, tp_id) * from reached)`, GRANT_COLUMNS).as('grants')
        ]))
    const [read] = (await this.db.executeQuery<{ owner: boolean, rows: string, grants: string }>(query)).rows
    if (read!.owner !== true) throw new NoLongerOwner()
    return { rows: rowsOf<ReachedRow>(read!.rows, REACHED_COLUMNS), grants: rowsOf<PairRow>(read!.grants, GRANT_COLUMNS) }
  }

  /** The `reached` CTE of one team of an organization the caller owns (none otherwise): the pairs of its `slice`, with their grants. */
  private reached (caller: Caller, team: string, organization: string, slice: RawBuilder<unknown>) {
    return withGrants(this.db, caller)
      .with('team_grants', (qc) => teamGrants(qc).where('teams.id', '=', team))
      .with('org', (qc) => ownedOrganization(qc as QueryCreator<any>, organization))
      .with('reached', (qc) => pairs(qc as QueryCreator<any>, slice))
  }
}
