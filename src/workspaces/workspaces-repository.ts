import { sql, type AliasedRawBuilder, type Kysely, type QueryCreator } from 'kysely'
import type { WorkspaceSettings } from '../../schemas/workspaces.js'
import type { Database, ManagedBy } from '../db/database.js'
import { QueryShapes } from '../db/query-shapes.js'
import { table } from '../db/tables.js'
import { callerOfKind, callerValues, withGrants } from '../access/grants.js'
import { isAdminOf, isMemberOf, readsWorkspace, type Judged } from '../access/predicates.js'
import { deletesWorkspacesIn } from '../access/project-predicates.js'
import type { Caller } from '../auth/caller.js'
import { apiSource } from '../directory/source.js'
import {
  changeWorkspace, createWorkspace, removeWorkspace, type WorkspaceAnswer, type WorkspaceKey, type WorkspaceRefusal, type WorkspaceResult, type WorkspaceValues
} from '../directory/workspaces.js'
import type { PageRequest } from '../jsonapi/pagination.js'

/** A workspace with what its resource needs, for this caller. */
export interface WorkspaceView {
  id: string
  name: string
  created_at: Date
  organization_name: string
  /** Its project (DESIGN §11.1). */
  project_id: string
  description: string | null
  /** The settings as sent (DESIGN §14.1). */
  settings: WorkspaceSettings
  managed_by: ManagedBy
  /** What this caller holds (DESIGN §14.1): [workspace admin, may delete] — the API's writes also need the API to manage it. */
  permissions: [boolean, boolean]
}

/** What a list keeps: names that contain `search`, workspaces of one project. */
export interface WorkspaceFilter { search?: string | undefined, projectId?: string | undefined }

/**
 * The columns of a workspace's resource for this caller, from `workspace` (the alias of a row of
 * `workspaces`, or of a CTE that returned its columns): its organization's name and the caller's
 * permissions on it, decided by the predicates (src/access/predicates.ts) — the workspace admin
 * rule once for both. `judged`: whether the statement is about one workspace (src/access/predicates.ts).
 */
function viewColumns (workspace: string, judged: Judged = 'many'): Array<AliasedRawBuilder<unknown, string>> {
  const c = (column: string) => sql.ref(`${workspace}.${column}`)
  return [
    ...(['id', 'name', 'created_at', 'project_id', 'description', 'settings', 'managed_by'] as const).map((column) => sql`${c(column)}`.as(column)),
    sql`(select o.name from ${table.organizations} o where o.id = ${c('organization_id')})`.as('organization_name'),
    sql`(select array[a.admin, a.admin or ${deletesWorkspacesIn(`${workspace}.project_id`)}]
      from (select ${isAdminOf(`${workspace}.id`, `${workspace}.organization_id`, `${workspace}.project_id`, judged)} as admin) a)`.as('permissions')
  ]
}

/** The statement's answer for an API caller, about the one workspace it wrote: the resource's columns (the `grants` CTE is the statement's). */
const apiAnswer: WorkspaceAnswer = (workspace) => sql.join(viewColumns(workspace, 'one').map((column) => sql`${column}`))

/**
 * Workspaces (DESIGN §7, §14.1): the reads, one statement each built once per shape, with the
 * caller's visibility applied in SQL (a workspace the caller may not read is not there); and the
 * writes of the directory (src/directory/workspaces.ts), each deciding who may in its statement.
 */
export class WorkspacesRepository {
  private readonly shapes = new QueryShapes()

  constructor (private readonly db: Kysely<Database>) {}

  /** The workspaces the caller may read, with what a resource needs; `judged` 'one' when the statement names one. */
  private readable (qc: QueryCreator<Database>, judged: Judged) {
    return qc.selectFrom('workspaces as w')
      .select(viewColumns('w', judged))
      .where(readsWorkspace('w.id', 'w.organization_id', 'w.project_id', judged))
  }

  /** One workspace by id, if the caller may read it. */
  async find (caller: Caller, id: string): Promise<WorkspaceView | undefined> {
    const query = this.shapes.compile(this.db, `find:${caller.kind}`, [...callerValues(caller), id], ([who, token, wsId]) =>
      this.readable(withGrants(this.db, callerOfKind(caller.kind, [who, token])), 'one').where('w.id', '=', wsId!))
    return (await this.db.executeQuery<WorkspaceView>(query)).rows[0]
  }

  /** One workspace by organization and workspace name, if the caller may read it. */
  async findByName (caller: Caller, organization: string, name: string): Promise<WorkspaceView | undefined> {
    const query = this.shapes.compile(this.db, `by-name:${caller.kind}`, [...callerValues(caller), organization, name], ([who, token, org, wsName]) =>
      this.readable(withGrants(this.db, callerOfKind(caller.kind, [who, token])), 'one')
        .where('w.organization_id', '=', sql<string>`(select o.id from ${table.organizations} o where o.name = ${org})`).where('w.name', '=', wsName!))
    return (await this.db.executeQuery<WorkspaceView>(query)).rows[0]
  }

  /**
   * A page of the organization's workspaces the caller may read, by name, and how many there are;
   * undefined when the organization does not exist or the caller is no member of it.
   */
  async list (caller: Caller, organization: string, page: PageRequest, filter: WorkspaceFilter = {}): Promise<{ rows: WorkspaceView[], total: number } | undefined> {
    const { search, projectId } = filter
    // a value only for each filter given: every value of a shape is one of its parameters
    const values = [...callerValues(caller), organization, page.size, (page.number - 1) * page.size, ...(search === undefined ? [] : [search]), ...(projectId === undefined ? [] : [projectId])]
    const shape = `list:${caller.kind}:${search === undefined ? 'all' : 'search'}:${projectId === undefined ? 'all' : 'project'}`
    const query = this.shapes.compile(this.db, shape, values, ([who, token, org, limit, offset, ...filters]) => {
      const term = search === undefined ? undefined : filters.shift()
      const project = projectId === undefined ? undefined : filters.shift()
      return withGrants(this.db, callerOfKind(caller.kind, [who, token]))
        .with('org', (qc) => qc.selectFrom('organizations').select('id').where('name', '=', org!).where(isMemberOf('organizations.id')))
        .with('matching', (qc) => {
          let inOrganization = (qc as unknown as QueryCreator<Database>).selectFrom('workspaces as w').selectAll('w')
            .where(readsWorkspace('w.id', 'w.organization_id', 'w.project_id'))
            .where('w.organization_id', '=', sql<string>`(select id from org)`)
          if (search !== undefined) inOrganization = inOrganization.where(sql<boolean>`strpos(lower(w.name), lower(${term})) > 0`)
          if (projectId !== undefined) inOrganization = inOrganization.where(sql<boolean>`w.project_id = ${project}`)
          return inOrganization
        })
        .selectFrom('org')
        .leftJoinLateral((eb) => eb.selectFrom('matching as m').select(viewColumns('m'))
          .orderBy('m.name').orderBy('m.id')
          .limit(limit as unknown as number).offset(offset as unknown as number).as('p'), (join) => join.onTrue())
        .selectAll('p')
        .select(sql<number>`(select count(*) from matching)`.as('total'))
        .orderBy('p.name').orderBy('p.id')
    })
    const result = (await this.db.executeQuery<WorkspaceView & { total: number | string }>(query)).rows
    if (result.length === 0) return undefined
    return { rows: result.filter((r) => r.id !== null).map(({ total: _, ...row }) => row), total: Number(result[0]!.total) }
  }

  /**
   * Creates a workspace (owners, manage-workspaces, a project row with workspace-access create),
   * with its event. A name taken by a workspace the caller does not read is refused as `hidden`
   * (the 404 of a caller who may not, DESIGN §3), never as `taken`: nobody learns, by creating, that
   * a workspace it cannot see holds a name.
   */
  async create (caller: Caller, organization: string, values: WorkspaceValues & { name: string }, requestId: string): Promise<WorkspaceResult<WorkspaceView>> {
    const result = await createWorkspace<WorkspaceView>(this.db, apiSource(caller, requestId), { name: organization }, values, apiAnswer)
    if ('refusal' in result && result.refusal === 'taken' && !(await this.readsNamed(caller, { organization }, values.name))) return { refusal: 'hidden' }
    return result
  }

  /** Renames, re-describes, re-sets or moves a workspace (DESIGN §14.1's who may), with its event; a name taken out of the caller's sight as `create`. */
  async update (caller: Caller, key: WorkspaceKey, changes: WorkspaceValues, requestId: string): Promise<WorkspaceResult<WorkspaceView>> {
    const result = await changeWorkspace<WorkspaceView>(this.db, apiSource(caller, requestId), key, changes, apiAnswer)
    if ('refusal' in result && result.refusal === 'taken' && !(await this.readsNamed(caller, key, changes.name!))) return { refusal: 'hidden' }
    return result
  }

  /** Deletes a workspace with its team access (owners, manage-workspaces, workspace admins, a project row with workspace-access delete). */
  async destroy (caller: Caller, key: WorkspaceKey, requestId: string): Promise<{ refusal?: WorkspaceRefusal, id?: string }> {
    return await removeWorkspace(this.db, apiSource(caller, requestId), key)
  }

  /** Whether the caller reads the workspace named `name` in the organization named, or in that of the workspace `beside`. */
  private async readsNamed (caller: Caller, where: { organization: string } | WorkspaceKey, name: string): Promise<boolean> {
    const organization = 'id' in where
      ? sql<string>`(select organization_id from ${table.workspaces} where id = ${where.id})`
      : sql<string>`(select id from ${table.organizations} where name = ${where.organization})`
    const found = await withGrants(this.db, caller)
      .selectFrom('workspaces as w')
      .where('w.organization_id', '=', organization)
      .where('w.name', '=', name)
      .where(readsWorkspace('w.id', 'w.organization_id', 'w.project_id', 'one'))
      .select('w.id')
      .executeTakeFirst()
    return found !== undefined
  }
}
