import { sql, type RawBuilder } from 'kysely'
import { ORGANIZATION_ACCESS_COLUMN_NAMES, ORGANIZATION_ACCESS_COLUMNS, ORGANIZATION_ACCESS_FLAGS } from '../access/organization-access.js'
import type { MirrorSnapshot } from './mirror-snapshot.js'

/**
 * A mirror's snapshot (DESIGN §13) as the rows it declares, table by table, in the columns of the
 * directory's tables: what the apply's statements take as one jsonb parameter each
 * (`jsonb_to_recordset`), so that a difference of any size is one statement. Also the snapshot's
 * own rules (ids, names and references unique and whole), checked before anything is read, and the
 * run's failure, MirrorError, which names every problem it found.
 */

/** A mirror run that changed nothing: the snapshot breaks a rule, or rows another source holds stand in its way. */
export class MirrorError extends Error {
  constructor (readonly problems: string[]) {
    super(`the mirror changed nothing: ${problems.join('; ')}`)
    this.name = 'MirrorError'
  }
}

/** The SQL type of a column a snapshot row carries. */
export type ColumnType = 'text' | 'boolean'

/** Rows of one table as the snapshot declares them, and the columns they carry. */
export interface Declared {
  rows: Array<Record<string, unknown>>
  columns: Record<string, ColumnType>
}

/**
 * How many rows one statement of the apply writes at most: a first run's 40,000 team-workspace rows
 * are written 5,000 at a time, so that no statement outlasts a statement timeout (each row has its
 * triggers: its workspace's counts, its team's visibility, the guard, its references).
 */
export const ROWS_PER_STATEMENT = 5000

/** A list in slices of ROWS_PER_STATEMENT (one empty slice for an empty list: its statement finds nothing). */
export function slices<T> (items: T[], size = ROWS_PER_STATEMENT): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out.length === 0 ? [[]] : out
}

/** The snapshot's rows as a relation, for a CTE: `d as (select * from ${recordset(declared)})`. */
export const recordset = (declared: Declared): RawBuilder<unknown> =>
  sql`jsonb_to_recordset(${JSON.stringify(declared.rows)}::jsonb) as x(${sql.join(Object.entries(declared.columns).map(([name, type]) => sql`${sql.id(name)} ${sql.raw(type)}`))})`

const TEAM_WORKSPACE: Record<string, ColumnType> = {
  id: 'text',
  team_id: 'text',
  workspace_id: 'text',
  access: 'text',
  runs: 'text',
  variables: 'text',
  state_versions: 'text',
  sentinel_mocks: 'text',
  workspace_locking: 'boolean',
  run_tasks: 'boolean',
  policy_overrides: 'boolean'
}
const TEAM_PROJECT: Record<string, ColumnType> = {
  id: 'text',
  team_id: 'text',
  project_id: 'text',
  access: 'text',
  project_settings: 'text',
  project_teams: 'text',
  project_variable_sets: 'text',
  runs: 'text',
  sentinel_mocks: 'text',
  state_versions: 'text',
  variables: 'text',
  workspace_create: 'boolean',
  workspace_locking: 'boolean',
  workspace_move: 'boolean',
  workspace_delete: 'boolean',
  run_tasks: 'boolean'
}

/** Every table the snapshot declares rows of. */
export interface DeclaredRows {
  users: Declared
  teams: Declared
  teamMembers: Declared
  projects: Declared
  workspaces: Declared
  /** Organization memberships; `teams`: an invitation's teams, sorted and joined by commas ('' for none). */
  memberships: Declared
  /** The teams of an invitation (organization_membership_teams). */
  invitationTeams: Declared
  teamWorkspaces: Declared
  teamProjects: Declared
}

/**
 * The snapshot's rows. `memberships` may carry more than the snapshot read: a team member the
 * snapshot gives no organization membership holds an active one here (every team member does),
 * which the caller passes in with its id.
 */
export function declaredRows (snapshot: MirrorSnapshot, defaultProjectId: string, implied: Array<{ id: string, userId: string }> = []): DeclaredRows {
  return {
    users: { rows: snapshot.users.map((u) => ({ id: u.id, username: u.username, email: u.email })), columns: { id: 'text', username: 'text', email: 'text' } },
    teams: {
      rows: snapshot.teams.map((t) => ({
        id: t.id,
        name: t.name,
        visibility: t.visibility,
        is_owners: t.isOwners,
        ...Object.fromEntries(ORGANIZATION_ACCESS_FLAGS.map((flag) => [ORGANIZATION_ACCESS_COLUMNS[flag], t.organizationAccess[flag] === true]))
      })),
      columns: { id: 'text', name: 'text', visibility: 'text', is_owners: 'boolean', ...Object.fromEntries(ORGANIZATION_ACCESS_COLUMN_NAMES.map((c) => [c, 'boolean' as const])) }
    },
    teamMembers: { rows: snapshot.teams.flatMap((t) => t.userIds.map((userId) => ({ team_id: t.id, user_id: userId }))), columns: { team_id: 'text', user_id: 'text' } },
    projects: {
      rows: snapshot.projects.map((p) => ({ id: p.id, name: p.name, description: p.description, is_default: p.id === defaultProjectId })),
      columns: { id: 'text', name: 'text', description: 'text', is_default: 'boolean' }
    },
    workspaces: {
      rows: snapshot.workspaces.map((w) => ({ id: w.id, name: w.name, project_id: w.projectId, description: w.description })),
      columns: { id: 'text', name: 'text', project_id: 'text', description: 'text' }
    },
    memberships: {
      rows: [...snapshot.memberships.map((m) => ({ id: m.id, user_id: m.userId, status: m.status, teams: m.status === 'invited' ? [...m.teamIds].sort().join(',') : '' })),
        ...implied.map((m) => ({ id: m.id, user_id: m.userId, status: 'active', teams: '' }))],
      columns: { id: 'text', user_id: 'text', status: 'text', teams: 'text' }
    },
    invitationTeams: {
      rows: snapshot.memberships.filter((m) => m.status === 'invited').flatMap((m) => m.teamIds.map((teamId) => ({ membership_id: m.id, team_id: teamId }))),
      columns: { membership_id: 'text', team_id: 'text' }
    },
    teamWorkspaces: {
      rows: snapshot.teamWorkspaces.map((r) => ({
        id: r.id,
        team_id: r.teamId,
        workspace_id: r.workspaceId,
        access: r.access,
        runs: r.runs,
        variables: r.variables,
        state_versions: r.stateVersions,
        sentinel_mocks: r.sentinelMocks,
        workspace_locking: r.workspaceLocking,
        run_tasks: r.runTasks,
        policy_overrides: r.policyOverrides === true
      })),
      columns: TEAM_WORKSPACE
    },
    teamProjects: {
      rows: snapshot.teamProjects.map((r) => ({
        id: r.id,
        team_id: r.teamId,
        project_id: r.projectId,
        access: r.access,
        project_settings: r.projectAccess.settings,
        project_teams: r.projectAccess.teams,
        project_variable_sets: r.projectAccess.variableSets,
        runs: r.workspaceAccess.runs,
        sentinel_mocks: r.workspaceAccess.sentinelMocks,
        state_versions: r.workspaceAccess.stateVersions,
        variables: r.workspaceAccess.variables,
        workspace_create: r.workspaceAccess.create,
        workspace_locking: r.workspaceAccess.locking,
        workspace_move: r.workspaceAccess.move,
        workspace_delete: r.workspaceAccess.delete,
        run_tasks: r.workspaceAccess.runTasks
      })),
      columns: TEAM_PROJECT
    }
  }
}

/** The snapshot's default project: the organization's `default-project`, else the project marked default. */
export const defaultProjectOf = (snapshot: MirrorSnapshot): string | undefined =>
  snapshot.organization.defaultProjectId ?? snapshot.projects.find((p) => p.isDefault)?.id

/**
 * The snapshot's own rules, every one broken named: ids unique in their kind, usernames, emails
 * (case-insensitively) and names unique as the tables keep them, at most one owners team, a default
 * project among the projects, and every reference to a row the snapshot gives.
 */
export function checkSnapshot (snapshot: MirrorSnapshot): void {
  const problems: string[] = []
  const unique = <T>(items: T[], what: string, key: (item: T) => string | null | undefined) => {
    const seen = new Set<string>()
    for (const item of items) {
      const k = key(item)
      if (k === null || k === undefined) continue
      if (seen.has(k)) problems.push(`${what} "${k}" is given twice`)
      seen.add(k)
    }
  }
  const ids = <T extends { id: string }>(items: T[]) => new Set(items.map((item) => item.id))
  const [users, teams, projects, workspaces] = [ids(snapshot.users), ids(snapshot.teams), ids(snapshot.projects), ids(snapshot.workspaces)]
  const refer = (from: string, what: string, id: string, among: Set<string>) => {
    if (!among.has(id)) problems.push(`${from} names ${what} "${id}", which was not read`)
  }
  unique(snapshot.users, 'user id', (u) => u.id)
  unique(snapshot.users, 'username', (u) => u.username)
  unique(snapshot.users, 'email', (u) => u.email?.toLowerCase())
  for (const u of snapshot.users) if (u.username === null && u.email === null) problems.push(`user ${u.id} has neither a username nor an email`)
  unique(snapshot.teams, 'team id', (t) => t.id)
  unique(snapshot.teams, 'team name', (t) => t.name)
  if (snapshot.teams.filter((t) => t.isOwners).length > 1) problems.push('more than one owners team')
  for (const t of snapshot.teams) {
    unique(t.userIds, `member of team ${t.name}`, (id) => id)
    for (const id of t.userIds) refer(`team ${t.name}`, 'user', id, users)
  }
  unique(snapshot.projects, 'project id', (p) => p.id)
  unique(snapshot.projects, 'project name', (p) => p.name.toLowerCase())
  const defaultProject = defaultProjectOf(snapshot)
  if (defaultProject === undefined) problems.push('no default project was read')
  else refer('the organization', 'default project', defaultProject, projects)
  unique(snapshot.workspaces, 'workspace id', (w) => w.id)
  unique(snapshot.workspaces, 'workspace name', (w) => w.name)
  for (const w of snapshot.workspaces) refer(`workspace ${w.name}`, 'project', w.projectId, projects)
  unique(snapshot.memberships, 'organization membership id', (m) => m.id)
  unique(snapshot.memberships, 'organization membership of user', (m) => m.userId)
  for (const m of snapshot.memberships) {
    refer(`organization membership ${m.id}`, 'user', m.userId, users)
    for (const id of m.teamIds) refer(`organization membership ${m.id}`, 'team', id, teams)
  }
  unique(snapshot.teamWorkspaces, 'team-workspace id', (r) => r.id)
  unique(snapshot.teamWorkspaces, 'team-workspace of team and workspace', (r) => `${r.teamId} ${r.workspaceId}`)
  for (const r of snapshot.teamWorkspaces) {
    refer(`team-workspace ${r.id}`, 'team', r.teamId, teams)
    refer(`team-workspace ${r.id}`, 'workspace', r.workspaceId, workspaces)
  }
  unique(snapshot.teamProjects, 'team-project id', (r) => r.id)
  unique(snapshot.teamProjects, 'team-project of team and project', (r) => `${r.teamId} ${r.projectId}`)
  for (const r of snapshot.teamProjects) {
    refer(`team-project ${r.id}`, 'team', r.teamId, teams)
    refer(`team-project ${r.id}`, 'project', r.projectId, projects)
  }
  if (problems.length > 0) throw new MirrorError(problems)
}
