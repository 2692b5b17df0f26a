import { sql, type ExpressionBuilder, type QueryCreator, type RawBuilder, type SelectQueryBuilder } from 'kysely'
import { PERMISSION_COLUMN_NAMES } from '../access/permission-columns.js'
import { grantsOrganizationWide, isOwnerOf } from '../access/predicates.js'
import { PROJECT_GRANT_COLUMNS } from '../access/project-permissions.js'
import { table } from '../db/tables.js'
import { GRANT_FLAGS } from './effective-access-repository.js'

/**
 * The access review's statements, in parts (DESIGN §12.1): the pairs of an organization that hold
 * a grant (`candidates`), how many each team has (`teamCounts`), a page's slices of them
 * (`pageSlices`, `slicePairs`) and a stream's (`sliceOfCandidates`, `pairs`), each pair with the
 * grants `explainAccess` combines. ./access-review-repository.ts puts them together.
 */

/**
 * A query's rows as one value, a JSON array of arrays of `columns` (in the order of `order`): the
 * streamed review reads each slice's rows so — one string for the driver to read instead of a row
 * object of strings per workspace (a third less allocated), and one statement can answer two
 * lists (a slice and its grants). `rowsOf` reads it back.
 */
export const jsonArrayOf = (rows: RawBuilder<unknown>, columns: readonly string[], order: readonly string[] = []): RawBuilder<string> =>
  sql<string>`(select coalesce(json_agg(json_build_array(${sql.join(columns.map((c) => sql.ref(`s.${c}`)))})${
    order.length === 0 ? sql`` : sql` order by ${sql.join(order.map((c) => sql.ref(`s.${c}`)))}`}), '[]')::text from ${rows} as s)`

/** The usernames of a team's members, sorted (null: none); `team` names the team id's column. */
export const membersOf = (team: string): RawBuilder<string[] | null> =>
  sql<string[] | null>`(select array_agg(u.username order by u.username) from ${table.team_memberships} m join ${table.users} u on u.id = m.user_id where m.team_id = ${sql.ref(team)})`

/**
 * The (team, workspace) pairs of the organization in the statement's `org` CTE that hold any grant,
 * from the grants themselves: a team with an organization-wide flag (owners among them) on every
 * workspace, a team-access row on its workspace, a team-project row on each workspace of its
 * project. Never every team against every workspace: the pairs cost what the grants are.
 */
export const candidates = sql`(
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
export const pairColumns = (pairs: SelectQueryBuilder<any, any, any>) => pairs
  .select(['tg.team_id', 't.name as team_name', 't.visibility', 'w.id as workspace_id', 'w.name as workspace_name', 'p.id as project_id', 'p.name as project_name', 'tw.id as row_id', 'tw.access'])
  .select(GRANT_FLAGS.map((flag) => `tg.${flag}` as const))
  .select(PERMISSION_COLUMN_NAMES.map((c) => `tw.${c}` as const))
  .select(PROJECT_GRANT_COLUMNS.map((c) => `tp.${c} as tp_${c}` as const))

/**
 * A stream's slice of `candidates` (the pairs of a batch of teams, `teams` in the pages' order): at
 * most `limit` of them after (`position`, `name`, `id`) — the team's place in the batch, then the
 * workspace's name and id — taken before the pairs are joined to their grants, so that a slice
 * joins its own pairs only (a team with an organization-wide flag reaches every workspace: its
 * slices, each joined whole, cost the square of its size).
 */
export const sliceOfCandidates = (teams: unknown, limit: unknown, after: [unknown, unknown, unknown] | undefined) => sql`(
  select c.team_id, c.workspace_id, c.position from (
    select c.team_id, c.workspace_id, array_position(${teams}::text[], c.team_id) as position, w.name, w.id
    from ${candidates} c join ${table.workspaces} w on w.id = c.workspace_id) c
  ${after === undefined ? sql`` : sql`where (c.position, c.name, c.id) > (${after[0]}::int, ${after[1]}::text, ${after[2]}::text)`}
  order by c.position, c.name, c.id limit ${limit})`

/**
 * The pairs of a slice (`sliceOfCandidates`) with the team's grant row, its row on the workspace and
 * its row on the workspace's project, joined whole, where a lookup by key per pair costs more on the
 * embedded database.
 */
export const pairs = (qc: QueryCreator<any>, slice: RawBuilder<unknown>) => pairColumns(qc.selectFrom(slice.as('c')).select('c.position')
  .innerJoin('team_grants as tg', 'tg.team_id', 'c.team_id')
  .innerJoin('teams as t', 't.id', 'c.team_id')
  .innerJoin('workspaces as w', 'w.id', 'c.workspace_id')
  .innerJoin('projects as p', 'p.id', 'w.project_id')
  .leftJoin('team_workspaces as tw', (join) => join.onRef('tw.workspace_id', '=', 'c.workspace_id').onRef('tw.team_id', '=', 'c.team_id'))
  .leftJoin('team_projects as tp', (join) => join.onRef('tp.project_id', '=', 'w.project_id').onRef('tp.team_id', '=', 'c.team_id')))

/** The organization of this id, as the `org` CTE, when the statement's caller (its `grants`) owns it; no row otherwise. */
export const ownedOrganization = (qc: QueryCreator<any>, organizationId: string) =>
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
export const teamCounts = sql<{ team_id: string, team_name: string, wide: boolean, n: number | string }>`(
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
export interface ChosenTeam { team_id: string, wide: boolean, skip: number, take: number, members: string[] | null }

/**
 * The pairs of a page: for each team of the statement's `chosen` CTE, `take` of the workspaces it
 * reaches (as `candidates` has them) after its first `skip`, by workspace name and id — for a team
 * with an organization-wide flag the organization's workspaces, read in that order by their index.
 */
export const pageSlices = sql<{ team_id: string, workspace_id: string, members: string[] | null }>`(
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
export const slicePairs = (qc: QueryCreator<any>) => pairColumns(qc.selectFrom('slice as c')
  .innerJoin('team_grants as tg', 'tg.team_id', 'c.team_id')
  .innerJoin('teams as t', 't.id', 'c.team_id')
  .innerJoin('workspaces as w', 'w.id', 'c.workspace_id')
  .innerJoin('projects as p', 'p.id', 'w.project_id')
  .leftJoinLateral((eb: ExpressionBuilder<any, any>) => eb.selectFrom('team_workspaces as r').selectAll('r')
    .whereRef('r.team_id', '=', 'c.team_id').whereRef('r.workspace_id', '=', 'c.workspace_id').limit(1).as('tw'), (join) => join.onTrue())
  .leftJoinLateral((eb: ExpressionBuilder<any, any>) => eb.selectFrom('team_projects as r').selectAll('r')
    .whereRef('r.team_id', '=', 'c.team_id').whereRef('r.project_id', '=', 'w.project_id').limit(1).as('tp'), (join) => join.onTrue()))
  .select('c.members')
