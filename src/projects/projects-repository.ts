import { mirrorOf, organizationPermissions } from '../access/organization-permissions.js'
import type { OrganizationView } from '../people/memberships-repository.js'
import { sql, type AliasedRawBuilder, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { withGrants } from '../access/grants.js'
import { isMemberOf, readsTeamProjectRow } from '../access/predicates.js'
import { administersProject, destroysProject, readsProject, readsProjectTeams, updatesProject } from '../access/project-predicates.js'
import type { Caller } from '../auth/caller.js'
import type { PageRequest } from '../jsonapi/pagination.js'
import { table } from '../db/tables.js'
import { apiSource } from '../directory/source.js'
import { changeProject, createProject, removeProject, type ProjectAnswer, type ProjectRefusal, type ProjectResult } from '../directory/projects.js'

/** A project with what its resource needs, for this caller. */
export interface ProjectView {
  id: string
  name: string
  description: string | null
  created_at: Date
  is_default: boolean
  organization_name: string
  workspace_count: number
  team_count: number
  /** What this caller may do (DESIGN §11.4 `permissions`): [can-update, can-destroy, can-read-teams, can-manage-teams]. */
  permissions: [boolean, boolean, boolean, boolean]
}

/** What a list keeps: names (case-insensitive, exact), a substring, and the order by name. */
export interface ProjectFilter { names?: string[] | undefined, search?: string | undefined, descending?: boolean }

/**
 * The columns of a project's resource for this caller, from `project` (the alias of a row of
 * `projects`, or of a CTE that returned its columns): its counts, and the caller's permissions on
 * it decided by the predicates (src/access/predicates.ts).
 */
function viewColumns (project: string): Array<AliasedRawBuilder<unknown, string>> {
  const c = (column: string) => sql.ref(`${project}.${column}`)
  return [
    ...(['id', 'name', 'description', 'created_at', 'is_default'] as const).map((column) => sql`${c(column)}`.as(column)),
    sql`(select o.name from ${table.organizations} o where o.id = ${c('organization_id')})`.as('organization_name'),
    sql`(select count(*)::int from ${table.workspaces} w where w.project_id = ${c('id')})`.as('workspace_count'),
    // the rows this caller is shown (GET /team-projects): a secret team's only to project admins and its members
    sql`(select count(*)::int from ${table.team_projects} tp join ${table.teams} t on t.id = tp.team_id where tp.project_id = ${c('id')}
      and ${readsTeamProjectRow('tp.project_id', 'tp.organization_id', 'tp.team_id', 't.visibility')})`.as('team_count'),
    sql`array[${updatesProject(`${project}.id`, `${project}.organization_id`)},
      ${destroysProject(`${project}.id`, `${project}.organization_id`)} and not ${c('is_default')},
      ${readsProjectTeams(`${project}.id`, `${project}.organization_id`)},
      ${administersProject(`${project}.id`, `${project}.organization_id`)}]`.as('permissions')
  ]
}

/** The statement's answer for an API caller: the resource's columns (the `grants` CTE is the statement's). */
const apiAnswer: ProjectAnswer = (project) => sql.join(viewColumns(project).map((column) => sql`${column}`))

/**
 * Projects (DESIGN §11.4): reads with the caller's visibility applied in SQL (a project the caller
 * does not read is not there), and the writes of the directory (src/directory/projects.ts), each
 * deciding who may in its own statement.
 */
export class ProjectsRepository {
  constructor (private readonly db: Kysely<Database>) {}

  /** One project, if the caller reads it. */
  async find (caller: Caller, id: string): Promise<ProjectView | undefined> {
    return await withGrants(this.db, caller)
      .selectFrom('projects as p')
      .select(viewColumns('p'))
      .where('p.id', '=', id)
      .where(readsProject('p.id', 'p.organization_id'))
      .executeTakeFirst() as ProjectView | undefined
  }

  /** A page of the organization's projects the caller reads, by name, and how many; undefined: no such organization, or no member of it. */
  async list (caller: Caller, organization: string, page: PageRequest, filter: ProjectFilter): Promise<{ rows: ProjectView[], total: number } | undefined> {
    const rows = await withGrants(this.db, caller)
      .with('org', (qc) => qc.selectFrom('organizations').select('id').where('name', '=', organization).where(isMemberOf('organizations.id')))
      .with('matching', (qc) => {
        let matching = qc.selectFrom('projects as p').selectAll('p')
          .where('p.organization_id', '=', sql<string>`(select id from org)`)
          .where(readsProject('p.id', 'p.organization_id'))
        if (filter.names !== undefined) matching = matching.where(sql<boolean>`lower(p.name) = any(${filter.names.map((name) => name.toLowerCase())}::text[])`)
        if (filter.search !== undefined) matching = matching.where(sql<boolean>`strpos(lower(p.name), lower(${filter.search})) > 0`)
        return matching
      })
      .selectFrom('org')
      .leftJoinLateral((eb) => eb.selectFrom('matching as m').select(viewColumns('m'))
        .orderBy(sql`lower(m.name)`, filter.descending === true ? 'desc' : 'asc').orderBy('m.id')
        .limit(page.size).offset((page.number - 1) * page.size).as('x'), (join) => join.onTrue())
      .selectAll('x')
      .select(sql<number>`(select count(*) from matching)`.as('total'))
      .orderBy(sql`lower(x.name)`, filter.descending === true ? 'desc' : 'asc').orderBy('x.id')
      .execute() as unknown as Array<ProjectView & { total: number | string }>
    if (rows.length === 0) return undefined
    return { rows: rows.filter((row) => row.id !== null), total: Number(rows[0]!.total) }
  }

  /** The organization (by name) for a member of it, with its default project (DESIGN §11.4); undefined: none, or no member. */
  async organization (caller: Caller, name: string): Promise<OrganizationView | undefined> {
    return await withGrants(this.db, caller)
      .selectFrom('organizations as o')
      .innerJoin('projects as p', (join) => join.onRef('p.organization_id', '=', 'o.id').on('p.is_default', '=', true))
      .select(['o.id', 'o.name', 'o.created_at', 'p.id as default_project_id', organizationPermissions('o.id').as('permissions'), mirrorOf('o.id').as('mirror')])
      .where('o.name', '=', name)
      .where(isMemberOf('o.id'))
      .executeTakeFirst()
  }

  /** Creates a project (owners, manage-projects), with its event. */
  async create (caller: Caller, organization: string, values: { name: string, description?: string | null | undefined }, requestId: string): Promise<ProjectResult<ProjectView>> {
    return await createProject<ProjectView>(this.db, apiSource(caller, requestId), { name: organization }, values, apiAnswer)
  }

  /**
   * Renames a project or changes its description (project admins, settings update or delete), with
   * its event. A name taken by a project the caller does not read is refused as `hidden` (the 404 of
   * a caller who may not, DESIGN §3), never as `taken`: a project admin must not learn, by renaming
   * its own, that a project it cannot see holds a name.
   */
  async update (caller: Caller, id: string, changes: { name?: string | undefined, description?: string | null | undefined }, requestId: string): Promise<ProjectResult<ProjectView>> {
    const result = await changeProject<ProjectView>(this.db, apiSource(caller, requestId), id, changes, apiAnswer)
    if ('refusal' in result && result.refusal === 'taken' && !(await this.readsProjectNamed(caller, id, changes.name!))) return { refusal: 'hidden' }
    return result
  }

  /** Whether the caller reads the project named `name` (case-insensitively) in the organization of project `beside`. */
  private async readsProjectNamed (caller: Caller, beside: string, name: string): Promise<boolean> {
    const found = await withGrants(this.db, caller)
      .selectFrom('projects as p')
      .where('p.organization_id', '=', sql<string>`(select organization_id from ${table.projects} where id = ${beside})`)
      .where(sql<boolean>`lower(p.name) = lower(${name})`)
      .where(readsProject('p.id', 'p.organization_id'))
      .select('p.id')
      .executeTakeFirst()
    return found !== undefined
  }

  /** Deletes a project and its team access (project admins, settings delete); refused while it holds workspaces, and for the default project. */
  async destroy (caller: Caller, id: string, requestId: string): Promise<{ refusal?: ProjectRefusal, workspaces?: number }> {
    return await removeProject(this.db, apiSource(caller, requestId), id)
  }
}
