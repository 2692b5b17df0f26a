import { sql, type RawBuilder } from 'kysely'
import { table } from '../db/tables.js'
import { ORGANIZATION_GRANTS } from './effective-access.js'
import { WORKSPACE_LEVEL_OF } from './project-permissions.js'
import { administersProject, deletesWorkspacesIn, readsProject } from './project-predicates.js'

/**
 * The rules of DESIGN §3 — membership, workspace admin, visibility — stated once, as SQL
 * predicates that every statement composes. Each reads the `grants` CTE (./grants.ts) that the
 * statement starts with; the arguments name the columns of the row being judged, so one rule
 * serves a row of any table. Nothing else in src/ restates them.
 */

/**
 * The caller acts as anyone at all: it has grants. None when its token no longer names it
 * (./grants.ts), which every statement must then answer as "nothing".
 */
export const hasGrants = (): RawBuilder<boolean> => sql<boolean>`exists (select 1 from grants)`

/** The caller acts in the organization: it is a member, or holds its organization token. */
export const isMemberOf = (organization: string): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from grants g where g.organization_id = ${sql.ref(organization)})`

/** The caller is an owner of the organization, or acts through a team with manage-workspaces: admin on all its workspaces. */
const administersWorkspacesOf = (organization: string): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from grants g where g.organization_id = ${sql.ref(organization)} and ${grantsOrganizationWide('g', 'admin')})`

/**
 * Whether one grant row (`grant`: the alias of a row of the `grants` CTE, or of `teamGrants` —
 * any row with its flag columns) grants access on every workspace of its organization: at the
 * given level, or at any. The flags and their levels are those of ORGANIZATION_GRANTS
 * (./effective-access.ts): ownership and manage-workspaces admin, read-workspaces read.
 */
export const grantsOrganizationWide = (grant: string, level?: 'admin' | 'read'): RawBuilder<boolean> =>
  sql<boolean>`(${sql.join(ORGANIZATION_GRANTS.filter((g) => level === undefined || g.access === level).map((g) => sql.ref(`${grant}.${g.flag}`)), sql` or `)})`

/** The caller is an owner of the organization (its organization token, or the owners team). */
export const isOwnerOf = (organization: string): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from grants g where g.organization_id = ${sql.ref(organization)} and g.is_owner)`

/** The caller is an owner of the organization of this id (a value, not a column: evaluated once per statement). */
export const ownsOrganization = (organizationId: string): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from grants g where g.organization_id = ${organizationId}::text and g.is_owner)`

/** The caller manages the organization's teams (DESIGN §9.3): an owner, or through a team with manage-teams. Tokens of teams and organizations included. */
export const managesTeamsOf = (organization: string): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from grants g where g.organization_id = ${sql.ref(organization)} and (g.is_owner or g.manage_teams))`

/** The caller manages the organization's team memberships (DESIGN §9.3): owners, manage-teams, manage-membership. */
export const managesMembershipOf = (organization: string): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from grants g where g.organization_id = ${sql.ref(organization)} and (g.is_owner or g.manage_teams or g.manage_membership))`

/**
 * Whether the caller reads a person's email in the organization (DESIGN §14.2): those who manage its
 * memberships (owners, manage-teams, manage-membership) read everyone's; a user reads its own.
 * `user` names the person's id column; `self` is the caller's user id (null: a team's or an
 * organization's token).
 */
export const readsEmailOf = (organization: string, user: string, self: string | null): RawBuilder<boolean> =>
  sql<boolean>`(${managesMembershipOf(organization)} or ${sql.ref(user)} = ${self}::text)`

/** The caller acts through this team. */
export const actsThrough = (team: string): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from grants g where g.team_id = ${sql.ref(team)})`

/**
 * A team-project row's level as the level it grants on each workspace of its project (DESIGN
 * §11.2: maintain and admin are a workspace's admin). `access` names the row's access column.
 */
export const workspaceLevelOf = (access: string): RawBuilder<string> =>
  sql<string>`(case ${sql.ref(access)} ${sql.join(Object.entries(WORKSPACE_LEVEL_OF).map(([from, to]) => sql`when ${sql.lit(from)} then ${sql.lit(to)}`), sql` `)} end)`

/** The project levels that make a team a workspace admin on the project's workspaces. */
const ADMIN_PROJECT_LEVELS = Object.entries(WORKSPACE_LEVEL_OF).filter(([, to]) => to === 'admin').map(([from]) => sql.lit(from))

/**
 * The caller's team-project rows on the workspace's project (DESIGN §11.3), as a join: `tp` the
 * row, `g` the caller's grant it comes through. `where` narrows (a level, say). `project` names the
 * workspace's project column when the statement has the workspace row at hand (`w.project_id`):
 * then no lookup of the workspace.
 */
const callerProjectRowsOn = (workspace: string, where: RawBuilder<boolean> = sql<boolean>`true`, project?: string): RawBuilder<boolean> => project === undefined
  ? sql<boolean>`exists (select 1 from ${table.workspaces} pw join ${table.team_projects} tp on tp.project_id = pw.project_id
             join grants g on g.team_id = tp.team_id where pw.id = ${sql.ref(workspace)} and ${where})`
  : sql<boolean>`exists (select 1 from ${table.team_projects} tp join grants g on g.team_id = tp.team_id where tp.project_id = ${sql.ref(project)} and ${where})`

/**
 * How many workspaces a statement judges: `many` (a list) or `one` (a show, a write of one row).
 * Neither changes an answer, only how it is read. For `many`, each rule is its own tests of the
 * caller's grant rows, which PostgreSQL may turn into hashes built once and probed per workspace.
 * For `one`, a rule is one pass over the caller's grant rows in the workspace's organization, each
 * team's row on the workspace and its row on the project probed by key (`oneWorkspace`): a test
 * per branch, each with its own subplan, cost more to set up on every execution than to run.
 *
 * `owner` is `one` for a statement built for an organization's token alone (`judgedAs`): its only
 * grant row is its ownership of its organization (./grants.ts), so every rule of a workspace, a
 * row or a team on it is that row's — the other branches could not change the answer, and
 * PostgreSQL sets each up on every execution (a third of an owner's show). Built so for any other
 * caller, a statement would refuse more, never grant more: ownership implies every rule.
 */
export type Judged = 'one' | 'many' | 'owner'

/** How a statement about one workspace, built once per caller kind, judges a caller of `kind`. */
export const judgedAs = (kind: 'organization' | 'team' | 'user'): Judged => kind === 'organization' ? 'owner' : 'one'

/**
 * A rule of a workspace in `organization`, judged `judged`: ownership alone for `owner`, its
 * one-pass form for `one` when it has one (`oneWorkspace`), else the rule.
 */
const unlessOwner = (judged: Judged, organization: string, rule: () => RawBuilder<boolean>, onePass: () => RawBuilder<boolean> = rule): RawBuilder<boolean> =>
  judged === 'owner' ? isOwnerOf(organization) : judged === 'one' ? onePass() : rule()

/** The caller's teams' rows on the workspace (`a`, with `g` the grant it comes through), narrowed by `where`. */
const callerRowsOn = (workspace: string, where: RawBuilder<boolean>): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from ${table.team_workspaces} a join grants g on g.team_id = a.team_id
             where a.workspace_id = ${sql.ref(workspace)} and ${where})`

/** What one grant row (`g`) gives on the workspace of `oneWorkspace`: any access, or admin. */
const GIVES = {
  // a flag of the organization, the team's row there (`r`), its row on the project (`p`)
  reads: sql<boolean>`(${grantsOrganizationWide('g')} or r.access is not null or p.access is not null)`,
  admin: sql<boolean>`(${grantsOrganizationWide('g', 'admin')} or r.access = 'admin' or p.access in (${sql.join(ADMIN_PROJECT_LEVELS)}))`
}

/**
 * A rule of one workspace (`judged` 'one') as one pass over the caller's grant rows in its
 * organization: `answer` aggregates them (`bool_or` of GIVES' tests), with each team's row on the
 * workspace as `r` and its row on the workspace's project as `p`, each probed by its unique key.
 * No grant row there: false. `project` names the workspace's project column when the statement has
 * the workspace row at hand; else the workspace is looked up.
 */
const oneWorkspace = (workspace: string, organization: string, project: string | undefined, answer: RawBuilder<boolean>): RawBuilder<boolean> => sql<boolean>`coalesce((select ${answer} from grants g
    left join lateral (select a.access from ${table.team_workspaces} a where a.team_id = g.team_id and a.workspace_id = ${sql.ref(workspace)} limit 1) r on true
    left join lateral (select tp.access from ${project === undefined
      ? sql`${table.workspaces} pw join ${table.team_projects} tp on tp.project_id = pw.project_id where pw.id = ${sql.ref(workspace)} and`
      : sql`${table.team_projects} tp where tp.project_id = ${sql.ref(project)} and`} tp.team_id = g.team_id limit 1) p on true
    where g.organization_id = ${sql.ref(organization)}), false)`

/**
 * A workspace admin: effective access `admin` — organization-wide, through a team row with access
 * admin, or through a team-project row on its project of level maintain or admin (DESIGN §11.3).
 */
export const isAdminOf = (workspace: string, organization: string, project?: string, judged: Judged = 'many'): RawBuilder<boolean> => unlessOwner(judged, organization, () => sql<boolean>`(
  ${administersWorkspacesOf(organization)}
  or ${callerRowsOn(workspace, sql<boolean>`a.access = 'admin'`)}
  or ${callerProjectRowsOn(workspace, sql<boolean>`tp.access in (${sql.join(ADMIN_PROJECT_LEVELS)})`, project)})`,
() => oneWorkspace(workspace, organization, project, sql<boolean>`bool_or(${GIVES.admin})`))

/**
 * Who may delete the workspace (DESIGN §14.1): owners, manage-workspaces, its admins (`isAdminOf`),
 * and a row of the caller's teams on its project with workspace-access delete. `project` names the
 * workspace's project column.
 */
export const destroysWorkspace = (workspace: string, organization: string, project: string, judged: Judged = 'many'): RawBuilder<boolean> =>
  unlessOwner(judged, organization, () => sql<boolean>`(${isAdminOf(workspace, organization, project, judged)} or ${deletesWorkspacesIn(project)})`)

/**
 * Who may ask why teams hold what they hold on a workspace (DESIGN §10.2): owners and workspace
 * admins — as it names every team, secret ones included, the rule of who sees every row.
 */
export const explainsWorkspace = (workspace: string, organization: string, project?: string, judged: Judged = 'many'): RawBuilder<boolean> => isAdminOf(workspace, organization, project, judged)

/**
 * Who may ask which workspaces a team reaches (DESIGN §10.2): owners of its organization, and
 * those who act through the team — its members, and its own token.
 */
export const explainsTeam = (teamId: string, organization: string): RawBuilder<boolean> =>
  sql<boolean>`(${isOwnerOf(organization)} or ${actsThrough(teamId)})`

/**
 * Effective access at least read on the workspace (DESIGN §7, who may read a workspace): owners,
 * the teams with an organization-wide flag (manage/read-workspaces, manage/read-projects), the
 * teams with a row on it, any level, and the teams with a row on its project (DESIGN §11.3).
 */
export const readsWorkspace = (workspace: string, organization: string, project?: string, judged: Judged = 'many'): RawBuilder<boolean> => unlessOwner(judged, organization, () => sql<boolean>`(
  exists (select 1 from grants g where g.organization_id = ${sql.ref(organization)} and ${grantsOrganizationWide('g')})
  or ${callerRowsOn(workspace, sql<boolean>`true`)}
  or ${callerProjectRowsOn(workspace, undefined, project)})`,
() => oneWorkspace(workspace, organization, project, sql<boolean>`bool_or(${GIVES.reads})`))

/**
 * Whether a member sees a team without being an admin: the team is visible to the organization,
 * or is one the caller acts through. (Owners and workspace admins see every team on top.)
 */
export const seesTeam = (teamId: string, visibility: string | RawBuilder<string>): RawBuilder<boolean> =>
  sql<boolean>`(${typeof visibility === 'string' ? sql.ref(visibility) : visibility} = 'organization' or ${actsThrough(teamId)})`

/**
 * Whether the caller may read a team (DESIGN §7, §9.3): owners and those who manage teams (they
 * made its secret teams) every team of theirs; members the teams they see.
 */
export const readsTeam = (teamId: string, visibility: string, organization: string): RawBuilder<boolean> =>
  sql<boolean>`(${isMemberOf(organization)} and (${managesTeamsOf(organization)} or ${seesTeam(teamId, visibility)}))`

/**
 * Whether a workspace admin may name this team in the workspace's access set (DESIGN §10.1): it
 * reads the team (`readsTeam`), or the team already holds a row on the workspace, which an admin
 * sees there (DESIGN §3). Any other team — a secret team the caller cannot see — is answered as a
 * team that does not exist.
 */
export const namesTeamOn = (teamId: string, visibility: string, organization: string, workspace: string): RawBuilder<boolean> => sql<boolean>`(
  ${readsTeam(teamId, visibility, organization)}
  or exists (select 1 from ${table.team_workspaces} a where a.workspace_id = ${sql.ref(workspace)} and a.team_id = ${sql.ref(teamId)}))`

/**
 * Whether the caller reads one team-access row (DESIGN §3 list, show): it reads the row's workspace
 * (`readsWorkspace`, the rule of `GET /workspaces/:id`), and there it sees the row's team — one
 * visible to the organization or its own — or administers the workspace (every row). A row on a
 * workspace the caller cannot read is not there for it, whatever the team. `project` names the
 * workspace's project column when the statement has joined the workspace (as `readsWorkspace`).
 */
export const readsRow = (workspace: string, organization: string, teamId: string, visibility: string, project?: string, judged: Judged = 'many'): RawBuilder<boolean> => unlessOwner(judged, organization, () => sql<boolean>`(
  ${readsWorkspace(workspace, organization, project, judged)}
  and (${seesTeam(teamId, visibility)} or ${isAdminOf(workspace, organization, project, judged)}))`,
// the team seen through the grant rows of the one pass: the team is one the caller acts through
// when one of them is its (a team is of one organization, so the pass's filter keeps it)
() => oneWorkspace(workspace, organization, project, sql<boolean>`bool_or(${GIVES.reads})
  and (${sql.ref(visibility)} = 'organization' or bool_or(g.team_id = ${sql.ref(teamId)}) or bool_or(${GIVES.admin}))`))

/**
 * The team part of `readsRow` as a set, for a workspace the statement has already found the
 * caller reads (`readsWorkspace`): the keys (id, created_at) of the workspace's rows the caller
 * sees — every row for an admin; for any other reader the rows of organization-visible teams and
 * of the secret teams it acts through. Each branch reads an index in (created_at, id) order or looks rows up by the
 * caller's teams, so a page costs its offset and size, never the rows the caller may not see.
 * `isAdmin` is computed once per statement (a one-time filter switches branches on or off).
 */
export const visibleRowKeys = (workspace: string, isAdmin: string, upTo?: RawBuilder<number>): RawBuilder<{ id: string, created_at: Date, team_id: string }> => {
  // a page needs at most offset + size keys of each branch: each stops there, in index order
  const first = upTo === undefined ? sql`` : sql` order by tw.created_at, tw.id limit ${upTo}`
  return sql`(
  (select tw.id, tw.created_at, tw.team_id from ${table.team_workspaces} tw
    where ${sql.ref(isAdmin)} and tw.workspace_id = ${sql.ref(workspace)}${first})
  union all
  (select tw.id, tw.created_at, tw.team_id from ${table.team_workspaces} tw
    where not ${sql.ref(isAdmin)} and tw.workspace_id = ${sql.ref(workspace)} and tw.team_visibility = 'organization'${first})
  union all
  (select tw.id, tw.created_at, tw.team_id from ${table.team_workspaces} tw
    where not ${sql.ref(isAdmin)} and tw.workspace_id = ${sql.ref(workspace)} and tw.team_visibility = 'secret'
      and tw.team_id in (select g.team_id from grants g where g.team_id is not null)${first}))`
}

/**
 * The caller may set or change a team's organization-access flags (docs/CONTRACT.md §9, rule c):
 * only owners. Anyone else who manages teams may send a team's flags as they are.
 */
export const setsOrganizationAccessOf = (organization: string): RawBuilder<boolean> => isOwnerOf(organization)

/**
 * The caller is an owner of the organization acting through its owners team — a member's user
 * token or the owners team's token, not an organization token: who manages the organization's
 * token (DESIGN §9.5).
 */
export const ownsThroughTeam = (organization: string): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from grants g where g.organization_id = ${sql.ref(organization)} and g.is_owner and g.team_id is not null)`

/**
 * Whether the caller reads one team-project row (§11.4: §3's rule one level up): it reads the
 * row's project, and sees the row's team — one visible to the organization or its own — or
 * administers the project (every row, secret teams included).
 */
export const readsTeamProjectRow = (project: string, organization: string, teamId: string, visibility: string): RawBuilder<boolean> => sql<boolean>`(
  ${readsProject(project, organization)}
  and (${seesTeam(teamId, visibility)} or ${administersProject(project, organization)}))`
