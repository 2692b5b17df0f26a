import { sql, type RawBuilder } from 'kysely'
import { table } from '../db/tables.js'
import { PROJECT_PERMISSION_COLUMNS, PROJECT_RANK, PROJECT_VALUES } from './project-permissions.js'
import { byRank, rankOf } from './ranks.js'

/**
 * The rules of DESIGN §11.3–11.4 about projects — who reads a project, who administers it, who may
 * change or delete it, and who may give a team-project row — stated once, as SQL predicates over the
 * `grants` CTE (./grants.ts), as ./predicates.ts states §3's (which builds on these: a project row
 * on a workspace's project is a workspace grant there).
 */

/**
 * The caller reads the project (DESIGN §11.3): an owner, a team of its with manage-projects or
 * read-projects, or one of its teams holds a team-project row on it. `project` and `organization`
 * name the project row's columns.
 */
export const readsProject = (project: string, organization: string): RawBuilder<boolean> => sql<boolean>`(
  exists (select 1 from grants g where g.organization_id = ${sql.ref(organization)} and (g.is_owner or g.manage_projects or g.read_projects))
  or exists (select 1 from ${table.team_projects} tp join grants g on g.team_id = tp.team_id where tp.project_id = ${sql.ref(project)}))`

/**
 * What the caller's own team-project rows on the project give, at least (`where` on the row `tp`):
 * e.g. `project_teams = 'manage'`.
 */
const holdsOnProject = (project: string, where: RawBuilder<boolean>): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from ${table.team_projects} tp join grants g on g.team_id = tp.team_id where tp.project_id = ${sql.ref(project)} and ${where})`

/** An owner of the organization, or a team of the caller's with manage-projects there. */
export const managesProjectsOf = (organization: string): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from grants g where g.organization_id = ${sql.ref(organization)} and (g.is_owner or g.manage_projects))`

/**
 * A project admin (DESIGN §11.3): an owner, manage-projects, or a row of its teams on the project
 * whose project-access teams is `manage` (admin, or custom so set). Who manages the project's team access.
 */
export const administersProject = (project: string, organization: string): RawBuilder<boolean> =>
  sql<boolean>`(${managesProjectsOf(organization)} or ${holdsOnProject(project, sql<boolean>`tp.project_teams = 'manage'`)})`

/** Who may rename the project or change its description (§11.4): project admins, and a row whose settings are update or delete. */
export const updatesProject = (project: string, organization: string): RawBuilder<boolean> =>
  sql<boolean>`(${administersProject(project, organization)} or ${holdsOnProject(project, sql<boolean>`tp.project_settings in ('update', 'delete')`)})`

/** Who may delete the project (§11.4): project admins, and a row whose settings are delete. */
export const destroysProject = (project: string, organization: string): RawBuilder<boolean> =>
  sql<boolean>`(${administersProject(project, organization)} or ${holdsOnProject(project, sql<boolean>`tp.project_settings = 'delete'`)})`

/**
 * Who may read the project's team access (`can-read-teams`): project admins, and a row whose
 * project-access teams is read or manage. Anyone else who reads the project sees the rows of
 * organization-visible teams and of its own teams (`readsTeamProjectRow`).
 */
export const readsProjectTeams = (project: string, organization: string): RawBuilder<boolean> =>
  sql<boolean>`(${administersProject(project, organization)} or ${holdsOnProject(project, sql<boolean>`tp.project_teams in ('read', 'manage')`)})`

/**
 * A team-project row (`row`: the alias of any row with project_id, access and the permission
 * columns of team_projects — a stored row, or one about to be written) is covered by the caller's
 * own rows on the same project: an admin row there, or its rows reaching the row's level
 * (PROJECT_RANK: any level reaches custom) and, attribute by attribute, each of its permissions
 * (PROJECT_VALUES' order). No row there: not covered. Owners and manage-projects are decided by
 * whoever asks (`holdsGrantsOf`, `grantsProjectRow`).
 */
export const coveredProjectRow = (row: string): RawBuilder<boolean> => {
  const ranked = [
    { column: 'access', values: byRank(PROJECT_RANK) as readonly unknown[] },
    ...PROJECT_PERMISSION_COLUMNS.map((column) => ({ column, values: PROJECT_VALUES[column] }))
  ]
  return sql<boolean>`coalesce((select held.access = ${PROJECT_RANK.admin + 1} or (${sql.join(ranked.map(({ column, values }) =>
      sql`held.${sql.ref(column)} >= ${rankOf(sql.ref(`${row}.${column}`), values)}`), sql` and `)})
    from (select ${sql.join(ranked.map(({ column, values }) => sql`max(${rankOf(sql.ref(`held_row.${column}`), values)}) as ${sql.ref(column)}`))}
      from ${table.team_projects} held_row join grants gc on gc.team_id = held_row.team_id where held_row.project_id = ${sql.ref(`${row}.project_id`)}) held), false)`
}

/**
 * The caller may give (or leave) this team-project row (DESIGN §11.4 with "nobody hands out more
 * than they hold"): an owner or manage-projects, or its own rows on the project cover it. `row`
 * as `coveredProjectRow`, with organization_id.
 */
export const grantsProjectRow = (row: string): RawBuilder<boolean> =>
  sql<boolean>`(${managesProjectsOf(`${row}.organization_id`)} or ${coveredProjectRow(row)})`

/**
 * Who may create a workspace in the project (DESIGN §14.1): an owner, a team of the caller's with
 * manage-workspaces, or a row of its teams on the project with workspace-access create.
 */
export const createsWorkspaceIn = (project: string, organization: string): RawBuilder<boolean> => sql<boolean>`(
  exists (select 1 from grants g where g.organization_id = ${sql.ref(organization)} and (g.is_owner or g.manage_workspaces))
  or ${holdsOnProject(project, sql<boolean>`tp.workspace_create`)})`

/**
 * Who may move a workspace from project `from` to project `to` (DESIGN §14.1, HCP Terraform's
 * rule): an owner, manage-projects, or workspace-access move on both projects through the
 * caller's rows (one on each will do).
 */
export const movesWorkspace = (from: string, to: string, organization: string): RawBuilder<boolean> => sql<boolean>`(
  ${managesProjectsOf(organization)}
  or (${holdsOnProject(from, sql<boolean>`tp.workspace_move`)} and ${holdsOnProject(to, sql<boolean>`tp.workspace_move`)}))`

/** A row of the caller's teams on the project lets it delete the project's workspaces (workspace-access delete, DESIGN §14.1). */
export const deletesWorkspacesIn = (project: string): RawBuilder<boolean> => holdsOnProject(project, sql<boolean>`tp.workspace_delete`)
