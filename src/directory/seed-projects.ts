import { createHash } from 'node:crypto'
import { sql, type Selectable, type Transaction } from 'kysely'
import type { SeedDocument, SeedProject, SeedProjectAccess } from '../../schemas/seed.js'
import { PROJECT_PERMISSION_COLUMNS, projectColumnsOnAdd, projectCustomOnlyViolations } from '../access/project-permissions.js'
import { recordDirectoryEvents } from '../audit/audit-record.js'
import type { Database } from '../db/database.js'
import { newId } from '../db/ids.js'
import { table } from '../db/tables.js'
import { recordChange, teamProjectEventRows } from './events.js'
import { changeProject, createProject, PROJECT_ROW, placeWorkspace, removeProject } from './projects.js'
import { entry, SeedError, type SeedSummary } from './seed-entries.js'
import { madeBy, makeRoom } from './seed-names.js'
import type { ChangeSource } from './source.js'

type Organization = NonNullable<SeedDocument['organizations']>[number]
type ProjectRow = Selectable<Database['projects']>

/**
 * The projects of a seed's organization (DESIGN §11.5), through the directory's project changes
 * (src/directory/projects.ts) with the seed as who asks: declared projects are created or adopted
 * (the seed is the whole truth for what it manages), each declared workspace is placed in its
 * project (absent: the default project), then seed-managed projects the document no longer declares
 * are removed — refused, failing the apply whole, while a workspace the seed does not place is
 * still in one. `project-access` entries are grants made once, as `team-access` entries.
 */
export class SeedProjects {
  constructor (private readonly trx: Transaction<Database>, private readonly source: ChangeSource, private readonly summary: SeedSummary) {}

  /**
   * Creates or adopts the organization's declared projects; their ids by lower-cased name, the
   * default project's among them. `teamId` finds a team by name: a project adopted now keeps the
   * team-project rows of the teams its `project-access` entries name, and only those.
   */
  async declare (organizationId: string, org: Organization, where: string, teamId: (name: string) => Promise<string | undefined>): Promise<Map<string, string>> {
    const [organization, projects] = [org.name, org.projects ?? []]
    const declaredOn = async (project: string): Promise<string[]> => (await Promise.all((org['project-access'] ?? [])
      .filter((grant) => grant.project.toLowerCase() === project.toLowerCase()).map(async (grant) => await teamId(grant.team))))
      .filter((id) => id !== undefined)
    for (const [i, project] of projects.entries()) {
      const at = entry('projects', i, project, where)
      // a name the document gives a project by id, held by another project (one the API renamed, say), is the seed's
      if (project.id !== undefined) await makeRoom(this.trx, this.source, this.summary, 'projects', { id: organizationId, name: organization }, { id: project.id, name: project.name }, projects.map((x) => x.name))
      const previous = await this.trx.selectFrom('projects').selectAll()
        .where('organization_id', '=', organizationId)
        .$call((q) => project.id === undefined ? q.where(sql<boolean>`lower(name) = lower(${project.name})`) : q.where('id', '=', project.id))
        .executeTakeFirst()
      const label = `${organization}/${project.name}`
      if (previous === undefined) {
        const created = await createProject<ProjectRow>(this.trx, this.source, { id: organizationId }, { id: project.id, name: project.name, description: project.description ?? null }, PROJECT_ROW)
        if ('refusal' in created) throw new SeedError(at, created.refusal === 'taken' ? `a project named "${project.name}" exists already` : 'the organization is gone')
        this.summary.created.projects.push(label)
      } else {
        const changed = await changeProject<ProjectRow>(this.trx, this.source, previous.id, { name: project.name, description: project.description ?? null }, PROJECT_ROW)
        if ('refusal' in changed) throw new SeedError(at, `a project named "${project.name}" exists already`)
        if (changed.project.name !== previous.name || changed.project.description !== previous.description || previous.managed_by !== 'seed') this.summary.changed.projects.push(label)
        if (previous.managed_by !== 'seed') await this.adopt(previous, label, await declaredOn(project.name))
      }
    }
    const rows = await this.trx.selectFrom('projects').select(['id', 'name']).where('organization_id', '=', organizationId).execute()
    return new Map(rows.map((row) => [row.name.toLowerCase(), row.id]))
  }

  /**
   * Places every declared workspace in its project, then removes the projects the document no
   * longer declares: workspaces move first, as a dropped project may hold one the document moves out.
   */
  async placeAndPrune (organizationId: string, org: Organization, workspaceIds: Map<string, string>, projects: Map<string, string>, where: string): Promise<void> {
    const defaultProject = (await this.trx.selectFrom('projects').select('id').where('organization_id', '=', organizationId).where('is_default', '=', true).executeTakeFirstOrThrow()).id
    await this.place(org.name, (org.workspaces ?? []).map((ws, j) => ({ ...ws, id: workspaceIds.get(ws.name)!, at: entry('workspaces', j, ws, where) })), projects, defaultProject)
    await this.removeUndeclared(organizationId, org.name, org.projects ?? [], where)
  }

  /** The organization's `project-access` entries, each a grant made once (`grant`); `teamId` finds a team by name. */
  async grants (organizationId: string, org: Organization, projects: Map<string, string>, teamId: (name: string, at: string) => Promise<string | undefined>, where: string): Promise<void> {
    for (const [j, grant] of (org['project-access'] ?? []).entries()) {
      const at = entry('project-access', j, grant, where)
      const team = await teamId(grant.team, at)
      if (team === undefined) throw new SeedError(at, `no team named "${grant.team}" in organization "${org.name}"`)
      const project = projects.get(grant.project.toLowerCase())
      if (project === undefined) throw new SeedError(at, `no project named "${grant.project}" in organization "${org.name}"`)
      await this.grant(grant, { organizationId, teamId: team, projectId: project }, `${grant.team} on ${org.name}/${grant.project}`, at)
    }
  }

  /**
   * A project the API or the host made, which the document names (by id, or by name: one an API
   * caller may have renamed into it), becomes the seed's whole, as an adopted team does (DESIGN
   * §9.1): its team-project rows of teams the document's `project-access` entries do not name go,
   * each with its `team-project` destroy event, before any workspace of the seed is placed in it,
   * and the apply warns naming the project and what went. Whoever the API gave the project to
   * reaches none of the seed's workspaces through it.
   */
  private async adopt (project: ProjectRow, label: string, keep: string[]): Promise<void> {
    const { rows } = await sql<{ team: string }>`with removed as (delete from ${table.team_projects} tp
        where tp.project_id = ${project.id} and not tp.team_id = any(${keep}::text[]) returning tp.*),
      events as (${teamProjectEventRows('removed', false)}),
      audit as (${recordChange(this.trx, 'events', 'team-project', 'destroy', this.source)})
      select t.name as team from removed r join ${table.teams} t on t.id = r.team_id order by t.name`.execute(this.trx)
    this.summary.removed.projectAccess.push(...rows.map((row) => `${row.team} on ${label}`))
    const removed = `${rows.length} team-project row${rows.length === 1 ? '' : 's'}`
    this.summary.warnings.push(`project ${label}: made ${madeBy(project)}, now the seed's — ${removed} it does not declare removed${rows.length === 0 ? '' : ` (${rows.map((row) => row.team).join(', ')})`}`)
  }

  /** Places each declared workspace (by id) in its project; a move is a change of the workspace. */
  private async place (organization: string, workspaces: Array<{ id: string, name: string, project?: string | undefined, at: string }>, projects: Map<string, string>, defaultProject: string): Promise<void> {
    // where each sits now, in one read
    const current = new Map(workspaces.length === 0
      ? []
      : (await this.trx.selectFrom('workspaces').select(['id', 'project_id'])
          .where('id', 'in', workspaces.map((ws) => ws.id)).execute()).map((row) => [row.id, row.project_id]))
    // a workspace this apply created is a creation only: its placement is part of it, not a change
    const created = new Set(this.summary.created.workspaces)
    for (const ws of workspaces) {
      const projectId = ws.project === undefined ? defaultProject : projects.get(ws.project.toLowerCase())
      if (projectId === undefined) throw new SeedError(`${ws.at} › project`, `no project named "${ws.project!}" in organization "${organization}"`)
      if (current.get(ws.id) === projectId) continue
      await placeWorkspace(this.trx, ws.id, projectId)
      if (created.has(`${organization}/${ws.name}`)) continue
      this.summary.changed.workspaces.push(`${organization}/${ws.name} (moved to project ${[...projects].find(([, id]) => id === projectId)?.[0] ?? projectId})`)
    }
  }

  /** Removes the organization's seed-managed projects the document no longer declares, with their team access; a project still holding a workspace fails the apply. */
  private async removeUndeclared (organizationId: string, organization: string, declared: SeedProject[], where: string): Promise<void> {
    const names = declared.map((project) => project.name.toLowerCase())
    const ids = declared.flatMap((project) => project.id === undefined ? [] : [project.id])
    const doomed = await this.trx.selectFrom('projects').select(['id', 'name'])
      .where('organization_id', '=', organizationId).where('managed_by', '=', 'seed').where('is_default', '=', false)
      .where(sql<boolean>`not (lower(name) = any(${names}::text[]) or id = any(${ids}::text[]))`)
      .orderBy('name').execute()
    for (const project of doomed) {
      const held = await this.trx.selectFrom('workspaces').select('name').where('project_id', '=', project.id).orderBy('name').execute()
      if (held.length > 0) {
        throw new SeedError(`${where} › projects`, `project "${project.name}" is no longer declared but still holds ${held.map((w) => `"${organization}/${w.name}"`).join(', ')}, which the document does not place elsewhere: place ${held.length === 1 ? 'it' : 'them'}, or keep the project`)
      }
      const removedRows = await this.trx.selectFrom('team_projects as tp').innerJoin('teams as t', 't.id', 'tp.team_id')
        .select(sql<string>`t.name`.as('team')).where('tp.project_id', '=', project.id).orderBy('t.name').execute()
      const result = await removeProject(this.trx, this.source, project.id)
      if (result.refusal !== undefined) throw new SeedError(`${where} › projects`, `project "${project.name}" cannot be removed (${result.refusal})`)
      this.summary.removed.projects.push(`${organization}/${project.name}`)
      this.summary.removed.projectAccess.push(...removedRows.map((row) => `${row.team} on ${organization}/${project.name}`))
    }
  }

  /**
   * A `project-access` entry is a grant to make once (as `team-access` entries, DESIGN §6):
   * remembered by its fingerprint and skipped ever after; a new or edited entry sets the (team,
   * project) row to what it says, with its `team-project` create or update event (System, `seed`).
   */
  private async grant (grant: SeedProjectAccess, ids: { organizationId: string, teamId: string, projectId: string }, label: string, at: string): Promise<void> {
    const objects = { 'project-access': grant['project-access'], 'workspace-access': grant['workspace-access'] }
    const violation = projectCustomOnlyViolations(grant.access, Object.fromEntries(Object.entries(objects).filter(([, v]) => v !== undefined)))[0]
    if (violation !== undefined) throw new SeedError(at, violation.detail)
    const columns = projectColumnsOnAdd(grant.access, objects)
    const fingerprint = createHash('sha256')
      .update(JSON.stringify(['project', ids.teamId, ids.projectId, grant.access, PROJECT_PERMISSION_COLUMNS.map((column) => columns[column])]))
      .digest('hex')
    const first = await this.trx.insertInto('seed_grants').values({ fingerprint, team_id: ids.teamId, workspace_id: null })
      .onConflict((oc) => oc.column('fingerprint').doNothing()).returning('fingerprint').executeTakeFirst()
    if (first === undefined) {
      this.summary.teamAccessAlreadyApplied++
      return
    }
    const values = { access: grant.access, ...columns }
    const idTaken = grant.id !== undefined && (await this.trx.selectFrom('team_projects').select('id').where('id', '=', grant.id).executeTakeFirst()) !== undefined
    const id = grant.id === undefined || idTaken ? newId('tprj') : grant.id
    const assigned = ['access', ...PROJECT_PERMISSION_COLUMNS].map((column) => sql`${sql.ref(column)} = excluded.${sql.ref(column)}`)
    const { rows: [applied] } = await sql<{ added: boolean }>`with applied as (
        insert into ${table.team_projects} (id, organization_id, team_id, project_id, ${sql.join(Object.keys(values).map((column) => sql.ref(column)))})
        values (${id}, ${ids.organizationId}, ${ids.teamId}, ${ids.projectId}, ${sql.join(Object.values(values).map((value) => sql`${value}`))})
        on conflict (team_id, project_id) do update set ${sql.join(assigned)}
        returning *, xmax = 0 as added),
      events as (select e.*, 'team-project'::text as resource_type, case when (select added from applied) then 'create' else 'update' end as action
        from (${teamProjectEventRows('applied', true)}) e),
      audit as (${recordDirectoryEvents(this.trx, 'events', { resourceType: 'rows', action: 'rows', accessor: { kind: 'system', description: 'seed' }, requestId: this.source.requestId })})
      select added from applied`.execute(this.trx)
    ;(applied?.added === true ? this.summary.created : this.summary.changed).projectAccess.push(label)
    this.summary.teamAccess++
  }
}
