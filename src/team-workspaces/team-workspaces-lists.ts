import { sql, type QueryCreator } from 'kysely'
import type { Database } from '../db/database.js'
import { actsThrough, isAdminOf, readsRow, readsTeam, readsWorkspace, visibleRowKeys } from '../access/predicates.js'
import { PERMISSION_COLUMN_NAMES } from '../access/permission-columns.js'
import { table } from '../db/tables.js'

/**
 * The list statements of team-workspaces (DESIGN §4), for the repository to build once per shape.
 * Each takes a query creator whose `grants` CTE is the caller's, and the values (or the shape's
 * placeholders) of its filter and page; each answers one row per listed row with the total, or
 * no row at all when the workspace or team is not there for the caller (404). A row is listed
 * and counted only when the caller reads it (DESIGN §3: it reads the row's workspace, and sees its
 * team there), whichever filter reached it.
 */

interface PageOf { limit: string, offset: string }

/** The columns of a row that its resource needs. */
export const ROW_COLUMNS = ['id', 'team_id', 'workspace_id', 'access', ...PERMISSION_COLUMN_NAMES] as const

/**
 * The names a row's links need, for a statement of one row: each an index lookup by primary key
 * (a join lets the planner hash a whole small table for one row).
 */
export const linkNames = (workspaceId: string, organizationId: string) => [
  sql<string>`(select w.name from ${table.workspaces} w where w.id = ${sql.ref(workspaceId)})`.as('workspace_name'),
  organizationName(organizationId)
] as const

/** The organization's name for a row's links, by primary key. */
export const organizationName = (organizationId: string) =>
  sql<string>`(select o.name from ${table.organizations} o where o.id = ${sql.ref(organizationId)})`.as('organization_name')

/**
 * The rows of a workspace the caller reads, optionally only those of one team: none, and no
 * answer at all (404), when the caller cannot read the workspace.
 */
export function rowsOfWorkspace (grants: QueryCreator<Database>, workspaceId: string, teamId: string | undefined, page: PageOf | undefined) {
  return grants
    .with('ws', (qc) => qc.selectFrom('workspaces as w')
      .innerJoin('organizations as o', 'o.id', 'w.organization_id')
      .where('w.id', '=', workspaceId)
      .where(readsWorkspace('w.id', 'w.organization_id', 'w.project_id', 'one'))
      .select(['w.id', 'w.name as workspace_name', 'o.name as organization_name', isAdminOf('w.id', 'w.organization_id', 'w.project_id', 'one').as('is_admin')]))
    // O(1) for a whole workspace: the trigger-kept counts (migration 0002), plus for a member
    // the rows of the secret teams it acts through; materialized so it runs once
    .with((cte) => cte('total').materialized(), (qc) => qc.selectFrom('ws')
      .select(page === undefined
        ? sql<number>`0`.as('count')
        : teamId !== undefined
          ? sql<number>`(select count(*) from ${visibleRowKeys('ws.id', 'ws.is_admin')} k where k.team_id = ${teamId})`.as('count')
          : sql<number>`coalesce((select case when ws.is_admin then c.total else c.organization_visible end
              from ${table.workspace_access_counts} c where c.workspace_id = ws.id), 0)
            + case when ws.is_admin then 0 else (
              select count(*) from ${table.team_workspaces} x
              where x.workspace_id = ws.id and x.team_visibility = 'secret' and ${actsThrough('x.team_id')}) end`.as('count')))
    // the page's keys first, from the indexes alone; then only its rows are read
    .selectFrom(['ws', 'total'])
    .leftJoinLateral((eb) => {
      const upTo = page === undefined || teamId !== undefined ? undefined : sql<number>`${page.limit}::bigint + ${page.offset}::bigint`
      let keys = eb.selectFrom(visibleRowKeys('ws.id', 'ws.is_admin', upTo).as('k'))
        .select(['k.id', 'k.created_at'])
        .orderBy('k.created_at').orderBy('k.id')
      if (teamId !== undefined) keys = keys.where('k.team_id', '=', teamId)
      return (page === undefined ? keys : keys.limit(page.limit as unknown as number).offset(page.offset as unknown as number)).as('p')
    }, (join) => join.onTrue())
    .leftJoin('team_workspaces as tw', 'tw.id', 'p.id')
    .select(ROW_COLUMNS.map((c) => `tw.${c}` as const))
    .select(['ws.workspace_name', 'ws.organization_name', 'total.count as total'])
    .orderBy('p.created_at').orderBy('p.id')
}

/**
 * The rows of a team across its organization's workspaces, for a caller who may read the team
 * (DESIGN §7), and of those only the rows it reads (`readsRow`): a row on a workspace the caller
 * cannot read is neither listed nor counted, as if it did not exist. The rows it reads are
 * judged once (`visible`), for the page and for its count.
 */
export function rowsOfTeam (grants: QueryCreator<Database>, teamId: string, page: PageOf | undefined) {
  return grants
    .with('team', (qc) => qc.selectFrom('teams as t')
      .where('t.id', '=', teamId)
      .where(readsTeam('t.id', 't.visibility', 't.organization_id'))
      .select('t.id'))
    .with('visible', (qc) => qc.selectFrom('team')
      .innerJoin('team_workspaces as x', 'x.team_id', 'team.id')
      .where(readsRow('x.workspace_id', 'x.organization_id', 'x.team_id', 'x.team_visibility'))
      .select(['x.id', 'x.created_at']))
    .selectFrom('team')
    .leftJoinLateral((eb) => {
      const rows = eb.selectFrom('visible as v')
        .select(['v.id', 'v.created_at'])
        .orderBy('v.created_at').orderBy('v.id')
      return (page === undefined ? rows : rows.limit(page.limit as unknown as number).offset(page.offset as unknown as number)).as('p')
    }, (join) => join.onTrue())
    .leftJoin('team_workspaces as tw', 'tw.id', 'p.id')
    .leftJoin('workspaces as w', 'w.id', 'tw.workspace_id')
    .leftJoin('organizations as o', 'o.id', 'tw.organization_id')
    .select(ROW_COLUMNS.map((c) => `tw.${c}` as const))
    .select(['w.name as workspace_name', 'o.name as organization_name'])
    .select(page === undefined ? sql<number>`0`.as('total') : sql<number>`(select count(*) from visible)`.as('total'))
    .orderBy('p.created_at').orderBy('p.id')
}
