import { sql, type Kysely } from 'kysely'
import type { Access } from '../../schemas/common.js'
import type { Database } from '../db/database.js'
import { PERMISSION_COLUMN_NAMES, permissionsOf, type PermissionRow } from '../access/permission-columns.js'
import { teamGrants, withGrants } from '../access/grants.js'
import { explainsTeam, explainsWorkspace, grantsOrganizationWide } from '../access/predicates.js'
import { explainAccess, ORGANIZATION_GRANTS, type Explanation, type OrganizationGrantFlag, type OrganizationGrantFlags, type TeamGrants } from '../access/effective-access.js'
import { PROJECT_GRANT_COLUMNS, projectGrantOf, type ProjectGrantRow } from '../access/project-permissions.js'
import type { Caller } from '../auth/caller.js'
import type { PageRequest } from '../jsonapi/pagination.js'
import { table } from '../db/tables.js'

/**
 * The answers of DESIGN §10.2 — which teams hold what on a workspace, which workspaces a team
 * reaches, and why — read in one statement each. Who may ask is decided in the statement by the
 * predicates of src/access/predicates.ts (`explainsWorkspace`, `explainsTeam`); what each team
 * holds is its grant row (`teamGrants`, the columns a caller's `grants` CTE has) and its
 * team-access rows, judged by `grantsOrganizationWide` in SQL and combined by `explainAccess`
 * (src/access/effective-access.ts) — the rules effective access is computed by for a caller.
 */

/** Where a workspace is, for its links. */
export interface WorkspaceName { id: string, name: string, organizationName: string }

/** A team's effective access on a workspace. */
export interface TeamExplanation extends Explanation {
  teamId: string
  workspace: WorkspaceName
}

/** A user's effective access on a workspace, through its teams (by name): null access when it holds none. */
export interface UserExplanation extends Explanation {
  userId: string | null
  username: string
  teamIds: string[]
  workspace: WorkspaceName
}

/** A team's grants on one workspace as a statement selects them: its flags, its row there, its row on the project. */
export type GrantRow = PermissionRow & ProjectGrantRow & { [F in OrganizationGrantFlag]: boolean | null } & {
  team_id: string | null
  row_id: string | null
  access: Access | null
}

/** The flag columns of a team's grant row, under their own names (ORGANIZATION_GRANTS). */
export const GRANT_FLAGS = ORGANIZATION_GRANTS.map((grant) => grant.flag)

/** A team's grants on one workspace, from a row of the statements below. */
export const teamGrantsOf = (row: GrantRow): TeamGrants => ({
  teamId: row.team_id!,
  flags: Object.fromEntries(GRANT_FLAGS.map((flag) => [flag, row[flag] === true])) as OrganizationGrantFlags,
  row: row.row_id === null ? null : { id: row.row_id, access: row.access!, permissions: permissionsOf(row) },
  projectRow: projectGrantOf(row)
})

export class EffectiveAccessRepository {
  constructor (private readonly db: Kysely<Database>) {}

  /**
   * The statement of a workspace's answers: for a caller who may ask (else no row at all), one row
   * per team of its organization that holds any grant on it — organization-wide, or a row there —
   * by team name, or one row of nulls when none does; only the teams of `username`, when given.
   */
  private async grantsOnWorkspace (caller: Caller, workspaceId: string, username?: string) {
    return await withGrants(this.db, caller)
      // not materialized: read twice below, each time for a few teams by key, never as a whole
      .with((cte) => cte('team_grants').notMaterialized(), (qc) => teamGrants(qc))
      .with('ws', (qc) => qc.selectFrom('workspaces as w')
        .innerJoin('organizations as o', 'o.id', 'w.organization_id')
        .where('w.id', '=', workspaceId)
        .where(explainsWorkspace('w.id', 'w.organization_id', 'w.project_id', 'one'))
        .select(['w.id', 'w.name', 'w.organization_id', 'w.project_id', 'o.name as organization_name']))
      .selectFrom('ws')
      .leftJoinLateral((eb) => {
        // the teams that may hold anything there, each found by an index — an organization-wide flag
        // (the few such teams: migration 0014's partial index), a row there, a row on its project —
        // not every team of the organization; what each holds is then judged as ever, below
        const holders = eb.selectFrom('team_grants as f').whereRef('f.organization_id', '=', 'ws.organization_id')
          .where(grantsOrganizationWide('f')).select('f.team_id')
          .union(eb.selectFrom('team_workspaces as r').whereRef('r.workspace_id', '=', 'ws.id').select('r.team_id'))
          .union(eb.selectFrom('team_projects as p').whereRef('p.project_id', '=', 'ws.project_id').select('p.team_id'))
        let teams = eb.selectFrom(holders.as('h'))
          .innerJoin('team_grants as tg', 'tg.team_id', 'h.team_id')
          .innerJoin('teams as t', 't.id', 'tg.team_id')
          .leftJoin('team_workspaces as tw', (join) => join.onRef('tw.team_id', '=', 'tg.team_id').onRef('tw.workspace_id', '=', 'ws.id'))
          .leftJoin('team_projects as tp', (join) => join.onRef('tp.team_id', '=', 'tg.team_id').onRef('tp.project_id', '=', 'ws.project_id'))
          .whereRef('tg.organization_id', '=', 'ws.organization_id')
          .where(sql<boolean>`(${grantsOrganizationWide('tg')} or tw.id is not null or tp.id is not null)`)
          .select(['tg.team_id', 't.name as team_name', 'tw.id as row_id', 'tw.access'])
          .select(GRANT_FLAGS.map((flag) => `tg.${flag}` as const))
          .select(PERMISSION_COLUMN_NAMES.map((c) => `tw.${c}` as const))
          .select(PROJECT_GRANT_COLUMNS.map((c) => `tp.${c} as tp_${c}` as const))
        if (username !== undefined) {
          teams = teams.where('tg.team_id', 'in', (sub) => sub.selectFrom('team_memberships as m')
            .innerJoin('users as u', 'u.id', 'm.user_id')
            .where('u.username', '=', username)
            .select('m.team_id'))
        }
        return teams.as('x')
      }, (join) => join.onTrue())
      .select(['ws.id as workspace_id', 'ws.name as workspace_name', 'ws.organization_name'])
      .selectAll('x')
      // the user, when it is a member of the workspace's organization (anyone else is no one here: nothing of another organization is told)
      .select(username === undefined
        ? sql<string | null>`null::text`.as('user_id')
        : sql<string | null>`(select u.id from ${table.users} u where u.username = ${username} and exists (select 1 from ${table.team_memberships} om
            join ${table.teams} ot on ot.id = om.team_id where om.user_id = u.id and ot.organization_id = ws.organization_id))`.as('user_id'))
      .orderBy('x.team_name').orderBy('x.team_id')
      .execute()
  }

  /**
   * Every team that holds any effective access on the workspace, by team name, with its grants;
   * undefined when the workspace does not exist or the caller may not ask (owners and workspace
   * admins may).
   */
  async ofWorkspace (caller: Caller, workspaceId: string): Promise<TeamExplanation[] | undefined> {
    const rows = await this.grantsOnWorkspace(caller, workspaceId)
    if (rows.length === 0) return undefined
    return rows.filter((row) => row.team_id !== null).map((row) => ({
      teamId: row.team_id!,
      workspace: { id: row.workspace_id, name: row.workspace_name, organizationName: row.organization_name },
      ...explainAccess([teamGrantsOf(row as GrantRow)])
    }))
  }

  /**
   * One user's effective access on the workspace, through the teams it belongs to there (by team
   * name), with the grants; `access` null when it holds none, and `userId` null too when no member of
   * the organization has that name (an unknown user and one of another organization alike).
   * Undefined when the workspace does not exist or the caller may not ask.
   */
  async ofUser (caller: Caller, workspaceId: string, username: string): Promise<UserExplanation | undefined> {
    const rows = await this.grantsOnWorkspace(caller, workspaceId, username)
    if (rows.length === 0) return undefined
    const teams = rows.filter((row) => row.team_id !== null).map((row) => teamGrantsOf(row as GrantRow))
    const first = rows[0]!
    return {
      userId: first.user_id,
      username,
      teamIds: teams.map((team) => team.teamId),
      workspace: { id: first.workspace_id, name: first.workspace_name, organizationName: first.organization_name },
      ...explainAccess(teams)
    }
  }

  /**
   * A page (none: all) of the workspaces of its organization the team reaches (any grant: organization-wide,
   * or a row there), by workspace name, with its grants on each, and how many there are; undefined
   * when the team does not exist or the caller may not ask (owners, and who acts through the team).
   */
  async ofTeam (caller: Caller, teamId: string, page?: PageRequest): Promise<{ rows: TeamExplanation[], total: number } | undefined> {
    const rows = await withGrants(this.db, caller)
      .with('team_grants', (qc) => teamGrants(qc))
      .with('team', (qc) => qc.selectFrom('team_grants as tg')
        .where('tg.team_id', '=', teamId)
        .where(explainsTeam('tg.team_id', 'tg.organization_id'))
        .selectAll('tg'))
      // each workspace of the organization, with the team's row there and its row on the
      // workspace's project, each looked up by its unique key (a lateral LIMIT 1): as plain joins,
      // the planner hashed the whole of team_workspaces and team_projects for the one team
      .with('reached', (qc) => qc.selectFrom('team')
        .innerJoin('workspaces as w', 'w.organization_id', 'team.organization_id')
        .leftJoinLateral((eb) => eb.selectFrom('team_workspaces as r')
          .select(['r.id', 'r.access', ...PERMISSION_COLUMN_NAMES.map((c) => `r.${c}` as const)])
          .whereRef('r.team_id', '=', 'team.team_id')
          .whereRef('r.workspace_id', '=', 'w.id')
          .limit(1)
          .as('tw'), (join) => join.onTrue())
        .leftJoinLateral((eb) => eb.selectFrom('team_projects as p')
          .select(PROJECT_GRANT_COLUMNS.map((c) => `p.${c}` as const))
          .whereRef('p.team_id', '=', 'team.team_id')
          .whereRef('p.project_id', '=', 'w.project_id')
          .limit(1)
          .as('tp'), (join) => join.onTrue())
        .where(sql<boolean>`(${grantsOrganizationWide('team')} or tw.id is not null or tp.id is not null)`)
        .select(['w.id as workspace_id', 'w.name as workspace_name', 'tw.id as row_id', 'tw.access'])
        .select(PERMISSION_COLUMN_NAMES.map((c) => `tw.${c}` as const))
        .select(PROJECT_GRANT_COLUMNS.map((c) => `tp.${c} as tp_${c}` as const)))
      .selectFrom('team')
      .innerJoin('organizations as o', 'o.id', 'team.organization_id')
      .leftJoinLateral((eb) => {
        const reached = eb.selectFrom('reached as r').selectAll('r').orderBy('r.workspace_name').orderBy('r.workspace_id')
        return (page === undefined ? reached : reached.limit(page.size).offset((page.number - 1) * page.size)).as('p')
      }, (join) => join.onTrue())
      .select(['team.team_id', 'o.name as organization_name'])
      .select(GRANT_FLAGS.map((flag) => `team.${flag}` as const))
      .selectAll('p')
      .select(sql<number | string>`(select count(*) from reached)`.as('total'))
      .orderBy('p.workspace_name').orderBy('p.workspace_id')
      .execute()
    if (rows.length === 0) return undefined
    return {
      total: Number(rows[0]!.total),
      rows: rows.filter((row) => row.workspace_id !== null).map((row) => ({
        teamId: row.team_id!,
        workspace: { id: row.workspace_id!, name: row.workspace_name!, organizationName: row.organization_name },
        ...explainAccess([teamGrantsOf(row as GrantRow)])
      }))
    }
  }
}
