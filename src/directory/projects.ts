import { sql, type Kysely, type RawBuilder } from 'kysely'
import { destroysProject, managesProjectsOf, updatesProject } from '../access/project-predicates.js'
import type { Database } from '../db/database.js'
import { impossibleId, newId } from '../db/ids.js'
import { table } from '../db/tables.js'
import { violates } from './errors.js'
import { projectEventRows, recordChange, teamProjectEventRows } from './events.js'
import { createInOrganization } from './organizations.js'
import { grantsOf, managedBy, mayIf, type ChangeSource } from './source.js'

/**
 * Projects created, changed and removed, and workspaces placed in them (DESIGN §11), whoever asks:
 * one function per change, with its audit events (`project` create/update/destroy; a removal's
 * team-project rows `team-project` destroy). An API caller's permission is decided in the change's
 * statement (`managesProjectsOf`, `updatesProject`, `destroysProject`); the seed and the host are
 * trusted. The rules every source meets: a name is unique in its organization, case-insensitively;
 * the default project is never removed; a project that holds workspaces is not removed. The API
 * does not change or remove what the seed manages (§9.1). Workspaces are placed by the seed and
 * the host only (§9.6: the API writes no workspaces).
 */

/** Why a change changed nothing: `hidden` (404), `seed`, `default`, `holds` (it holds workspaces), `taken` (the name). */
export type ProjectRefusal = 'hidden' | 'seed' | 'default' | 'holds' | 'taken'
export type ProjectResult<T> = { project: T } | { refusal: ProjectRefusal, name?: string, workspaces?: number }

/** What the statement answers of the project, over a CTE of project rows. */
export type ProjectAnswer = (project: string) => RawBuilder<unknown>

/** Every column of a project row, as the host's answer. */
export const PROJECT_ROW: ProjectAnswer = (project) => sql`${sql.table(project)}.*`

/** What keeps a project's name unique in its organization, case-insensitively. */
const PROJECT_NAME = 'projects_organization_name_key'

/**
 * Creates a project in the organization named (the API) or given by id (the host, the seed), with
 * its `create` event, managed by the source. Refused `hidden`: no such organization, or an API
 * caller who is neither an owner nor has manage-projects there; `taken`: the name is.
 */
export async function createProject<T> (db: Kysely<Database>, source: ChangeSource, organization: { name: string } | { id: string },
  project: { name: string, description?: string | null | undefined, id?: string | undefined }, answer: ProjectAnswer): Promise<ProjectResult<T>> {
  const created = await createInOrganization<T>(db, source, organization, managesProjectsOf('o.id'),
    sql`insert into ${table.projects} (id, organization_id, name, description, managed_by)
      select ${project.id ?? newId('prj')}::text, org.id, ${project.name}::text, ${project.description ?? null}::text, ${managedBy(source)}::text
      from org returning *`,
    projectEventRows('inserted'), 'project', answer, PROJECT_NAME)
  return 'row' in created ? { project: created.row } : created
}

/**
 * Renames a project or changes its description in one statement, written (with its `update`
 * event) only when a value differs: a change that changes nothing answers the project as it is.
 * The seed's change makes the project the seed's (it adopts what it names, DESIGN §9.1).
 * Refused `hidden`: no such project, or an API caller who may not (`updatesProject`); `seed`: an
 * API change of a project the seed manages; `taken`: the name is.
 */
export async function changeProject<T> (db: Kysely<Database>, source: ChangeSource, id: string,
  changes: { name?: string | undefined, description?: string | null | undefined }, answer: ProjectAnswer): Promise<ProjectResult<T>> {
  if (impossibleId(id)) return { refusal: 'hidden' }
  const query = sql<T & { refusal: ProjectRefusal | null }>`with ${grantsOf(db, source)}
    current as (select p.* from ${table.projects} p where p.id = ${id} and ${mayIf(source, updatesProject('p.id', 'p.organization_id'))} for update of p),
    merged as (select c.id, coalesce(${changes.name ?? null}::text, c.name) as name,
        case when ${changes.description !== undefined}::boolean then ${changes.description ?? null}::text else c.description end as description
      from current c),
    verdict as (select case when c.managed_by = 'seed' and ${source.by === 'api'}::boolean then 'seed' end as refusal,
        (m.name <> c.name or m.description is distinct from c.description or c.managed_by <> ${managedBy(source)} and ${source.by === 'seed'}::boolean) as differs
      from current c join merged m on m.id = c.id),
    updated as (update ${table.projects} p set name = m.name, description = m.description,
        managed_by = case when ${source.by === 'seed'}::boolean then 'seed' else p.managed_by end from merged m, verdict v
      where p.id = m.id and v.refusal is null and v.differs returning p.*),
    events as (${projectEventRows('updated')}),
    audit as (${recordChange(db, 'events', 'project', 'update', source)})
    select ${answer('updated')}, null::text as refusal from updated
    union all
    select ${answer('current')}, v.refusal from current, verdict v where not exists (select 1 from updated)`
  try {
    const row = (await query.execute(db)).rows[0]
    if (row === undefined) return { refusal: 'hidden' }
    if (row.refusal !== null) return { refusal: row.refusal }
    const { refusal: _, ...project } = row
    return { project: project as T }
  } catch (err) {
    if (violates(err, PROJECT_NAME)) return { refusal: 'taken' }
    throw err
  }
}

/**
 * Removes a project in one transaction: the project is locked (for an API caller, as it may delete
 * it: `destroysProject`), then its team-project rows go with their `team-project` destroy events,
 * then the project with its `destroy` event. Refused `hidden`: no such project, or an API caller who
 * may not; `seed`: an API removal of a project the seed manages; `default`: the default project;
 * `holds`: it holds workspaces (how many is answered) — move them first.
 */
export async function removeProject (db: Kysely<Database>, source: ChangeSource, id: string): Promise<{ refusal?: ProjectRefusal, name?: string, workspaces?: number }> {
  if (impossibleId(id)) return { refusal: 'hidden' }
  const remove = async (trx: Kysely<Database>): Promise<{ refusal?: ProjectRefusal, name?: string, workspaces?: number }> => {
    const target = (await sql<{ refusal: ProjectRefusal | null, name: string, workspaces: number }>`with ${grantsOf(trx, source)}
      found as (select p.* from ${table.projects} p where p.id = ${id} and ${mayIf(source, destroysProject('p.id', 'p.organization_id'))} for update of p)
      select f.name, (select count(*)::int from ${table.workspaces} w where w.project_id = f.id) as workspaces,
        case when f.managed_by = 'seed' and ${source.by === 'api'}::boolean then 'seed' when f.is_default then 'default' end as refusal
      from found f`.execute(trx)).rows[0]
    if (target === undefined) return { refusal: 'hidden' }
    if (target.refusal !== null) return { refusal: target.refusal, name: target.name }
    if (target.workspaces > 0) return { refusal: 'holds', name: target.name, workspaces: target.workspaces }
    await sql`with removed as (delete from ${table.team_projects} tp where tp.project_id = ${id} returning tp.*),
      events as (${teamProjectEventRows('removed', false)}),
      audit as (${recordChange(trx, 'events', 'team-project', 'destroy', source)})
      select count(*) from removed`.execute(trx)
    await sql`with removed as (delete from ${table.projects} p where p.id = ${id} returning p.*),
      events as (${projectEventRows('removed')}),
      audit as (${recordChange(trx, 'events', 'project', 'destroy', source)})
      select count(*) from removed`.execute(trx)
    return {}
  }
  return db.isTransaction ? await remove(db) : await db.transaction().execute(remove)
}

/**
 * Places a workspace in a project of its organization (the seed, the host: DESIGN §11.1) — the
 * access it inherits moves with it, from the next request. False: no such workspace, or no such
 * project in its organization. A workspace already there is left as it is.
 */
export async function placeWorkspace (trx: Kysely<Database>, workspaceId: string, projectId: string): Promise<boolean> {
  if (impossibleId(workspaceId) || impossibleId(projectId)) return false
  const placed = await sql<{ id: string }>`update ${table.workspaces} w set project_id = p.id from ${table.projects} p
    where w.id = ${workspaceId} and p.id = ${projectId} and p.organization_id = w.organization_id
    returning w.id`.execute(trx)
  return placed.rows.length > 0
}
