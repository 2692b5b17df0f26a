import { sql, type RawBuilder } from 'kysely'
import { table } from '../db/tables.js'
import { IMPLICIT_PERMISSIONS, PERMISSION_NAMES, PERMISSION_VALUES } from './permissions.js'
import { PERMISSION_COLUMNS } from './permission-columns.js'
import { ACCESS_RANK, ORGANIZATION_GRANTS } from './effective-access.js'
import { coveredProjectRow } from './project-predicates.js'
import { byRank, rankOf } from './ranks.js'
import { grantsOrganizationWide, managesMembershipOf, managesTeamsOf, readsTeam, workspaceLevelOf } from './predicates.js'

// Who may act on a team (`holdsGrantsOf` below): DESIGN §3's rules of ./predicates.ts, one step on.

/**
 * Nobody hands out more than they hold (docs/CONTRACT.md, the directory's escalation rules): the
 * caller's own effective access already covers every grant of the team, so that joining the team,
 * or holding a token of it, gives nobody more than the caller has. A team grants
 * - ownership: held only by those who act through the owners team (an organization token is an
 *   owner, but may not manage the organization's tokens, which the owners team's members may);
 * - its organization-access flags that grant something here — `manage_workspaces`,
 *   `read_workspaces` (held through manage-workspaces too), `manage_projects`, `read_projects`
 *   (held through manage-projects too), `manage_teams`, `manage_membership` (held through
 *   manage-teams too) — each held through one of the caller's teams there;
 * - each of its team-access rows: held when the caller administers the row's workspace, or its own
 *   grants there reach the row's level and each of its permissions (`rowsCovered`);
 * - each of its team-project rows (DESIGN §11): held through manage-projects, or when the caller's
 *   own rows on that project reach the row's level and each of its permissions (`projectRowsCovered`).
 * Owners hold every other team's grants; a caller with no grants in the organization holds
 * nothing. `team` is the alias of a row of `teams` (any row with its columns: a CTE that returned
 * them will do). This is the rule for acting on a team — updating, deleting, changing its members,
 * making its tokens — beside who may act at all (`managesTeam`, `managesMembersOf`).
 */
export const holdsGrantsOf = (team: string): RawBuilder<boolean> => {
  const c = (column: string) => sql.ref(`${team}.${column}`)
  const inOrganization = sql`g.organization_id = ${c('organization_id')}`
  // owners through the owners team hold every team, other owners every team but that one; anyone
  // else its flags, its rows unless it is admin on every workspace there, its project rows unless
  // it manages every project there
  return sql<boolean>`(case
    when ${c('is_owners')} then exists (select 1 from grants g where ${inOrganization} and g.is_owner and g.team_id is not null)
    when exists (select 1 from grants g where ${inOrganization} and g.is_owner) then true
    else coalesce((select count(*) > 0
        and (not ${c('manage_workspaces')} or bool_or(g.manage_workspaces))
        and (not ${c('read_workspaces')} or bool_or(g.manage_workspaces or g.read_workspaces))
        and (not ${c('manage_projects')} or bool_or(g.manage_projects))
        and (not ${c('read_projects')} or bool_or(g.manage_projects or g.read_projects))
        and (not ${c('manage_teams')} or bool_or(g.manage_teams))
        and (not ${c('manage_membership')} or bool_or(g.manage_teams or g.manage_membership))
        and (bool_or(${grantsOrganizationWide('g', 'admin')}) or ${rowsCovered(team)})
        and (bool_or(g.manage_projects) or ${projectRowsCovered(team)})
      from grants g where ${inOrganization}), false)
  end)`
}

/**
 * Every team-access row of the team is covered by what the caller — not an owner, without an
 * organization-wide admin flag (`holdsGrantsOf` decided those) — holds on the row's workspace: an
 * admin grant of its teams there (an admin may grant any row there: a row, or a project row of
 * maintain or admin), or its teams' rows and project rows there and its read flags (with the
 * permissions read implies) reaching the row's level (ACCESS_RANK: any level reaches custom) and,
 * attribute by attribute, each of its permissions (PERMISSION_VALUES' order). Nothing held there (no
 * row, no flag) compares as null: not covered. Written as few subqueries as it can be: every
 * statement that acts on a team plans it.
 */
const rowsCovered = (team: string): RawBuilder<boolean> => {
  const read = IMPLICIT_PERMISSIONS.read
  const ranked: Array<{ column: string, values: readonly unknown[], read: unknown }> = [
    { column: 'access', values: byRank(ACCESS_RANK), read: 'read' },
    ...PERMISSION_NAMES.map((name) => ({ column: PERMISSION_COLUMNS[name], values: PERMISSION_VALUES[name] as readonly unknown[], read: read[name] }))
  ]
  const readFlags = ORGANIZATION_GRANTS.filter((g) => g.access === 'read').map((g) => sql`gr.${sql.ref(g.flag)}`)
  // a project row as the workspace grant it gives (its policy overrides: never)
  const asWorkspaceGrant = ranked.map(({ column }) => column === 'access'
    ? sql`${workspaceLevelOf('cp.access')} as access`
    : column === PERMISSION_COLUMNS['policy-overrides'] ? sql`false as ${sql.ref(column)}` : sql.ref(`cp.${column}`))
  return sql<boolean>`not exists (select 1 from ${table.team_workspaces} r
    left join lateral (select ${sql.join(ranked.map(({ column, values }) => sql`max(${rankOf(sql.ref(`c.${column}`), values)}) as ${sql.ref(column)}`))}
      from (select ${sql.join(ranked.map(({ column }) => sql.ref(`cw.${column}`)))} from ${table.team_workspaces} cw join grants gc on gc.team_id = cw.team_id where cw.workspace_id = r.workspace_id
        union all
        select ${sql.join(asWorkspaceGrant)} from ${table.workspaces} pw join ${table.team_projects} cp on cp.project_id = pw.project_id
          join grants gp on gp.team_id = cp.team_id where pw.id = r.workspace_id) c) m on true
    left join lateral (select coalesce(bool_or(${sql.join(readFlags, sql` or `)}), false) as reads
      from grants gr where gr.organization_id = r.organization_id) o on true
    where r.team_id = ${sql.ref(`${team}.id`)} and not coalesce(m.access = ${ACCESS_RANK.admin + 1} or (${sql.join(ranked.map(({ column, values, read: given }) =>
      sql`greatest(m.${sql.ref(column)}, case when o.reads then ${sql.lit(typeof given === 'boolean' ? Number(given) : values.indexOf(given) + 1)} end) >= ${rankOf(sql.ref(`r.${column}`), values)}`), sql` and `)}), false))`
}

/** Every team-project row of the team is covered by the caller's own rows (`coveredProjectRow`). */
const projectRowsCovered = (team: string): RawBuilder<boolean> =>
  sql<boolean>`not exists (select 1 from ${table.team_projects} r where r.team_id = ${sql.ref(`${team}.id`)} and not ${coveredProjectRow('r')})`

/**
 * The caller may update or delete this team (and make its tokens) — DESIGN §9.3 with the
 * escalation rule: it manages the organization's teams (an owner, or through manage-teams) and
 * holds every grant of the team (`holdsGrantsOf`): only owners acting through the owners team
 * manage it. `team` is the alias of a row of `teams`.
 */
export const managesTeam = (team: string, holds: RawBuilder<boolean> = holdsGrantsOf(team)): RawBuilder<boolean> =>
  sql<boolean>`(${managesTeamsOf(`${team}.organization_id`)} and ${holds})`

/**
 * The caller may add and remove this team's members (DESIGN §9.4): it manages the organization's
 * memberships (owners, manage-teams, manage-membership), sees the team (`readsTeam`: a
 * manage-membership member changes the members of the teams it sees), and holds every
 * grant of the team (`holdsGrantsOf`). `team` is the alias of a row of `teams`.
 */
export const managesMembersOf = (team: string, holds: RawBuilder<boolean> = holdsGrantsOf(team)): RawBuilder<boolean> =>
  sql<boolean>`(${managesMembershipOf(`${team}.organization_id`)} and ${readsTeam(`${team}.id`, `${team}.visibility`, `${team}.organization_id`)} and ${holds})`

/**
 * A team's `permissions` for the caller (DESIGN §9.3), as [can-update-membership, can-destroy]:
 * `managesMembersOf`, and `managesTeam` on a team that is neither the owners team nor the seed
 * file's — the same rules, with `holdsGrantsOf` (the costliest to plan and to run) stated once for
 * both, and run only for a caller who manages memberships at all (managing teams implies it).
 */
export const teamPermissions = (team: string): RawBuilder<[boolean, boolean]> => {
  const holds = sql<boolean>`h.holds`
  return sql<[boolean, boolean]>`(select array[${managesMembersOf(team, holds)},
      ${managesTeam(team, holds)} and not ${sql.ref(`${team}.is_owners`)} and ${sql.ref(`${team}.managed_by`)} <> 'seed']
    from (select ${managesMembershipOf(`${team}.organization_id`)} and ${holdsGrantsOf(team)} as holds) h)`
}
