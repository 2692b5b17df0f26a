import { sql, type QueryCreator, type RawBuilder } from 'kysely'
import { recordDirectoryEvents, type DirectoryChange } from '../audit/audit-record.js'
import type { Database } from '../db/database.js'
import { table } from '../db/tables.js'
import { accessorOf, type ChangeSource } from './source.js'
import { PROJECT_COLUMNS } from '../access/project-permissions.js'

/**
 * The audit events of directory changes (DESIGN §9.5), one fragment per kind of row, for the CTE
 * beside the change that writes them (src/audit/audit-record.ts): every change of src/directory/,
 * whoever asks, records the same events, with the source's accessor and request id.
 */
export function recordChange (qc: QueryCreator<Database>, rows: string, resourceType: DirectoryChange['resourceType'], action: DirectoryChange['action'], source: ChangeSource) {
  return recordDirectoryEvents(qc, rows, { resourceType, action, accessor: accessorOf(source), requestId: source.requestId })
}

/** The event rows of teams created, updated or destroyed, from a CTE of team rows. */
export const teamEventRows = (teams: string): RawBuilder<unknown> => {
  const t = sql.table(teams)
  return sql`select ${t}.organization_id, ${t}.id as resource_id, jsonb_build_object('team', ${t}.name) as meta from ${t}`
}

/** The event rows of projects created, updated or destroyed, from a CTE of project rows: the project's name. */
export const projectEventRows = (projects: string): RawBuilder<unknown> => {
  const p = sql.table(projects)
  return sql`select ${p}.organization_id, ${p}.id as resource_id, jsonb_build_object('project', ${p}.name) as meta from ${p}`
}

/**
 * The event rows of workspaces created, updated or destroyed (DESIGN §14.1), from a CTE of workspace
 * rows: the workspace's name (after the change). With `before` — a CTE of the same workspaces'
 * rows before the change — a move adds `project`: `<from> -> <to>`, the projects' names.
 */
export const workspaceEventRows = (workspaces: string, before?: string): RawBuilder<unknown> => {
  const w = sql.table(workspaces)
  if (before === undefined) return sql`select ${w}.organization_id, ${w}.id as resource_id, jsonb_build_object('workspace', ${w}.name) as meta from ${w}`
  return sql`select ${w}.organization_id, ${w}.id as resource_id, jsonb_build_object('workspace', ${w}.name)
      || case when ${w}.project_id <> b.project_id then jsonb_build_object('project', fp.name || ' -> ' || tp.name) else '{}'::jsonb end as meta
    from ${w} join ${sql.table(before)} b on b.id = ${w}.id
      join ${table.projects} fp on fp.id = b.project_id join ${table.projects} tp on tp.id = ${w}.project_id`
}

/** The event rows of memberships added or removed, from a CTE of (team_id, user_id) rows: the team and the username. */
export const membershipEventRows = (memberships: string): RawBuilder<unknown> => {
  const m = sql.table(memberships)
  return sql`select t.organization_id, t.id as resource_id, jsonb_build_object('team', t.name, 'user', u.username) as meta
    from ${m} join ${table.teams} t on t.id = ${m}.team_id join ${table.users} u on u.id = ${m}.user_id`
}

/**
 * The event rows of organization memberships created or destroyed (DESIGN §14.2), from a CTE of
 * (id, organization_id, user_id) rows: the person's email and, once they have one, username.
 */
export const organizationMembershipEventRows = (memberships: string): RawBuilder<unknown> => {
  const m = sql.table(memberships)
  return sql`select ${m}.organization_id, ${m}.id as resource_id, jsonb_strip_nulls(jsonb_build_object('email', u.email, 'user', u.username)) as meta
    from ${m} join ${table.users} u on u.id = ${m}.user_id`
}

/**
 * The event rows of team-project rows created, updated or destroyed (DESIGN §11.4), from a CTE of
 * team_projects rows: meta names the team and the project, and (not for a removal) the
 * permissions after the change, wire names: `access=custom settings=read teams=none … run-tasks=false`.
 */
export const teamProjectEventRows = (rows: string, permissions: boolean): RawBuilder<unknown> => {
  const r = sql.table(rows)
  const text = sql.join([
    sql`'access=' || ${r}.access`,
    ...(['project-access', 'workspace-access'] as const).flatMap((part) => Object.entries(PROJECT_COLUMNS[part]).map(([name, column]) =>
      sql`${sql.lit(`${name}=`)} || ${sql.ref(`${rows}.${column}`)}::text`))
  ], sql` || ' ' || `)
  return sql`select ${r}.organization_id, ${r}.id as resource_id,
      ${permissions ? sql`jsonb_build_object('team', t.name, 'project', p.name, 'permissions', ${text})` : sql`jsonb_build_object('team', t.name, 'project', p.name)`} as meta
    from ${r} join ${table.teams} t on t.id = ${r}.team_id join ${table.projects} p on p.id = ${r}.project_id`
}
