import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Selectable } from 'kysely'
import type { ProjectAccess } from '../../schemas/projects.js'
import type { Database } from '../db/database.js'
import { newId } from '../db/ids.js'
import { table } from '../db/tables.js'
import { callerGrants, withGrants } from '../access/grants.js'
import { isOwnerOf, readsTeam, readsTeamProjectRow } from '../access/predicates.js'
import { administersProject, grantsProjectRow, readsProject } from '../access/project-predicates.js'
import { PROJECT_PERMISSION_COLUMNS, type ProjectPermissionColumns } from '../access/project-permissions.js'
import type { Caller } from '../auth/caller.js'
import type { PageRequest } from '../jsonapi/pagination.js'
import { recordChange, teamProjectEventRows } from '../directory/events.js'
import { apiSource } from '../directory/source.js'

/** A team-project row, as its resource needs it. */
export type TeamProjectView = Selectable<Database['team_projects']>

/**
 * Team-project rows (DESIGN §11.4), read and written with the caller's visibility and permission
 * applied in SQL, one statement per operation, each write with its `team-project` audit event in
 * the same statement. Who may write: project admins (`administersProject`); a non-owner only for a
 * team it reads, never the owners team; and the row written must be one the caller holds
 * (`grantsProjectRow`: nobody hands out more than they hold).
 */
export class TeamProjectsRepository {
  constructor (private readonly db: Kysely<Database>) {}

  /** The caller manages rows of this team on this project (`p`, `t` the aliases of the project and team rows). */
  private managesRowsOf (project: string, team: string): RawBuilder<boolean> {
    return sql<boolean>`(${administersProject(`${project}.id`, `${project}.organization_id`)}
      and (${isOwnerOf(`${project}.organization_id`)} or (${readsTeam(`${team}.id`, `${team}.visibility`, `${team}.organization_id`)} and not ${sql.ref(`${team}.is_owners`)})))`
  }

  /** One row, if the caller may see it. */
  async find (caller: Caller, id: string): Promise<TeamProjectView | undefined> {
    return await withGrants(this.db, caller)
      .selectFrom('team_projects as tp')
      .innerJoin('teams as t', 't.id', 'tp.team_id')
      .selectAll('tp')
      .where('tp.id', '=', id)
      .where(readsTeamProjectRow('tp.project_id', 'tp.organization_id', 'tp.team_id', 't.visibility'))
      .executeTakeFirst()
  }

  /**
   * The project's rows the caller may see (one team's, with `teamId`), oldest first: a page and how
   * many, or (no page) all. Undefined when the caller does not read the project (or it does not exist).
   */
  async list (caller: Caller, projectId: string, teamId: string | undefined, page: PageRequest | undefined): Promise<{ rows: TeamProjectView[], total: number } | undefined> {
    const rows = await withGrants(this.db, caller)
      .with('project', (qc) => qc.selectFrom('projects as p').select(['p.id', 'p.organization_id']).where('p.id', '=', projectId).where(readsProject('p.id', 'p.organization_id')))
      .with('visible', (qc) => {
        const visible = qc.selectFrom('team_projects as tp')
          .innerJoin('teams as t', 't.id', 'tp.team_id')
          .selectAll('tp')
          .where('tp.project_id', '=', sql<string>`(select id from project)`)
          .where(readsTeamProjectRow('tp.project_id', 'tp.organization_id', 'tp.team_id', 't.visibility'))
        return teamId === undefined ? visible : visible.where('tp.team_id', '=', teamId)
      })
      .selectFrom('project')
      .leftJoinLateral((eb) => {
        const ordered = eb.selectFrom('visible as v').selectAll('v').orderBy('v.created_at').orderBy('v.id')
        return (page === undefined ? ordered : ordered.limit(page.size).offset((page.number - 1) * page.size)).as('x')
      }, (join) => join.onTrue())
      .selectAll('x')
      .select(sql<number>`(select count(*) from visible)`.as('total'))
      .orderBy('x.created_at').orderBy('x.id')
      .execute() as Array<TeamProjectView & { total: number | string }>
    if (rows.length === 0) return undefined
    return { rows: rows.filter((row) => row.id !== null).map(({ total: _, ...row }) => row as TeamProjectView), total: Number(rows[0]!.total) }
  }

  /**
   * Gives a team access to a project, with its `create` event. `added` undefined: `taken` when the
   * team already has a row there (422), else hidden — no such team or project in one organization,
   * or the caller may not (404).
   */
  async add (caller: Caller, input: { teamId: string, projectId: string, access: ProjectAccess, columns: ProjectPermissionColumns }, requestId: string): Promise<{ added?: TeamProjectView, taken: boolean }> {
    const source = apiSource(caller, requestId)
    const columns = PROJECT_PERMISSION_COLUMNS
    const values = columns.map((column) => sql`${input.columns[column]}::${sql.raw(typeof input.columns[column] === 'boolean' ? 'boolean' : 'text')} as ${sql.ref(column)}`)
    const result = await sql<{ added: TeamProjectView | null, taken: boolean }>`with grants as (${callerGrants(this.db, caller)}),
      target as (select p.id as project_id, p.organization_id, t.id as team_id from ${table.projects} p join ${table.teams} t on t.organization_id = p.organization_id
        where p.id = ${input.projectId} and t.id = ${input.teamId} and ${this.managesRowsOf('p', 't')} for key share of p, t),
      candidate as (select ${newId('tprj')}::text as id, target.organization_id, target.team_id, target.project_id, ${input.access}::text as access, ${sql.join(values)} from target),
      inserted as (insert into ${table.team_projects} (id, organization_id, team_id, project_id, access, ${sql.join(columns.map((column) => sql.ref(column)))})
        select * from candidate c where ${grantsProjectRow('c')} on conflict (team_id, project_id) do nothing returning *),
      events as (${teamProjectEventRows('inserted', true)}),
      audit as (${recordChange(this.db, 'events', 'team-project', 'create', source)})
      select (select row_to_json(i) from inserted i) as added,
        exists (select 1 from ${table.team_projects} x join target on x.team_id = target.team_id and x.project_id = target.project_id) as taken`.execute(this.db)
    const row = result.rows[0]!
    return row.added === null ? { taken: row.taken } : { added: reviveDates(row.added), taken: false }
  }

  /**
   * Changes a row in one statement, written (with its `update` event) only when a value differs;
   * `columns` are those to write (the rest keep theirs). `updated` undefined: `current` names the
   * row's level when the caller manages it (the route tells why: a key set under a fixed level, or
   * more than the caller holds), else the row is hidden (404).
   */
  async update (caller: Caller, id: string, change: { access?: ProjectAccess | undefined, columns: Partial<ProjectPermissionColumns>, setsKeys: boolean }, requestId: string): Promise<{ updated?: TeamProjectView, current?: ProjectAccess, exceeds?: boolean }> {
    const source = apiSource(caller, requestId)
    const merged = PROJECT_PERMISSION_COLUMNS.map((column) => {
      const value = change.columns[column]
      return value === undefined ? sql`c.${sql.ref(column)}` : sql`${value}::${sql.raw(typeof value === 'boolean' ? 'boolean' : 'text')} as ${sql.ref(column)}`
    })
    const differs = sql.join(['access', ...PROJECT_PERMISSION_COLUMNS].map((column) => sql`m.${sql.ref(column)} is distinct from c.${sql.ref(column)}`), sql` or `)
    const result = await sql<{ updated: TeamProjectView | null, current: ProjectAccess | null, allowed: boolean | null }>`with grants as (${callerGrants(this.db, caller)}),
      current as (select tp.* from ${table.team_projects} tp join ${table.projects} p on p.id = tp.project_id join ${table.teams} t on t.id = tp.team_id
        where tp.id = ${id} and ${this.managesRowsOf('p', 't')} for update of tp),
      merged as (select c.id, c.organization_id, c.team_id, c.project_id, coalesce(${change.access ?? null}::text, c.access) as access, ${sql.join(merged)} from current c),
      verdict as (select (m.access = 'custom' or not ${change.setsKeys}::boolean) and ${grantsProjectRow('m')} as allowed, (${differs}) as differs
        from merged m join current c on c.id = m.id),
      updated as (update ${table.team_projects} tp set access = m.access, ${sql.join(PROJECT_PERMISSION_COLUMNS.map((column) => sql`${sql.ref(column)} = m.${sql.ref(column)}`))}
        from merged m, verdict v where tp.id = m.id and v.allowed and v.differs returning tp.*),
      events as (${teamProjectEventRows('updated', true)}),
      audit as (${recordChange(this.db, 'events', 'team-project', 'update', source)})
      select (select row_to_json(u) from updated u) as updated, (select c.access from current c) as current, (select v.allowed from verdict v) as allowed,
        (select row_to_json(c) from current c) as unchanged, (select v.differs from verdict v) as differs`.execute(this.db)
    const row = result.rows[0]! as { updated: TeamProjectView | null, current: ProjectAccess | null, allowed: boolean | null, unchanged: TeamProjectView | null, differs: boolean | null }
    if (row.updated !== null) return { updated: reviveDates(row.updated) }
    if (row.current === null) return {}
    // nothing to change, and allowed: the row as it is
    if (row.allowed === true && row.differs === false) return { updated: reviveDates(row.unchanged!) }
    return { current: row.current, exceeds: row.allowed === false }
  }

  /** Removes a row with its `destroy` event; false: hidden (no such row, or the caller may not). */
  async remove (caller: Caller, id: string, requestId: string): Promise<boolean> {
    const source = apiSource(caller, requestId)
    const result = await sql<{ count: number | string }>`with grants as (${callerGrants(this.db, caller)}),
      target as (select tp.id from ${table.team_projects} tp join ${table.projects} p on p.id = tp.project_id join ${table.teams} t on t.id = tp.team_id
        where tp.id = ${id} and ${this.managesRowsOf('p', 't')} for update of tp),
      removed as (delete from ${table.team_projects} tp using target where tp.id = target.id returning tp.*),
      events as (${teamProjectEventRows('removed', false)}),
      audit as (${recordChange(this.db, 'events', 'team-project', 'destroy', source)})
      select count(*) as count from removed`.execute(this.db)
    return Number(result.rows[0]!.count) > 0
  }
}

/** A row that came back as JSON: its time a Date again. */
function reviveDates (row: TeamProjectView): TeamProjectView {
  return { ...row, created_at: new Date(row.created_at) }
}
