import { sql, type Kysely, type QueryCreator } from 'kysely'
import type { Database } from '../db/database.js'
import { QueryShapes } from '../db/query-shapes.js'
import { callerOfKind, callerValues, withGrants } from '../access/grants.js'
import { isMemberOf, readsWorkspace } from '../access/predicates.js'
import type { Caller } from '../auth/caller.js'
import type { PageRequest } from '../jsonapi/pagination.js'

/** A workspace with what its resource needs. */
export interface WorkspaceView {
  id: string
  name: string
  created_at: Date
  organization_name: string
  /** Its project (DESIGN §11.1). */
  project_id: string
}

/** What a list keeps: names that contain `search`, workspaces of one project. */
export interface WorkspaceFilter { search?: string | undefined, projectId?: string | undefined }

/** Workspaces the caller may read (DESIGN §7), in one statement each, built once per shape. */
export class WorkspacesRepository {
  private readonly shapes = new QueryShapes()

  constructor (private readonly db: Kysely<Database>) {}

  /** The workspaces the caller may read, with what a resource needs. */
  private readable (qc: QueryCreator<Database>) {
    return qc.selectFrom('workspaces as w')
      .innerJoin('organizations as o', 'o.id', 'w.organization_id')
      .select(['w.id', 'w.name', 'w.created_at', 'o.name as organization_name', 'w.project_id'])
      .where(readsWorkspace('w.id', 'w.organization_id', 'w.project_id'))
  }

  /** One workspace by id, if the caller may read it. */
  async find (caller: Caller, id: string): Promise<WorkspaceView | undefined> {
    const query = this.shapes.compile(`find:${caller.kind}`, [...callerValues(caller), id], ([who, token, wsId]) =>
      this.readable(withGrants(this.db, callerOfKind(caller.kind, [who, token]))).where('w.id', '=', wsId!))
    return (await this.db.executeQuery<WorkspaceView>(query)).rows[0]
  }

  /** One workspace by organization and workspace name, if the caller may read it. */
  async findByName (caller: Caller, organization: string, name: string): Promise<WorkspaceView | undefined> {
    const query = this.shapes.compile(`by-name:${caller.kind}`, [...callerValues(caller), organization, name], ([who, token, org, wsName]) =>
      this.readable(withGrants(this.db, callerOfKind(caller.kind, [who, token]))).where('o.name', '=', org!).where('w.name', '=', wsName!))
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
    const query = this.shapes.compile(shape, values, ([who, token, org, limit, offset, ...filters]) => {
      const term = search === undefined ? undefined : filters.shift()
      const project = projectId === undefined ? undefined : filters.shift()
      return withGrants(this.db, callerOfKind(caller.kind, [who, token]))
        .with('org', (qc) => qc.selectFrom('organizations').select('id').where('name', '=', org!).where(isMemberOf('organizations.id')))
        .with('matching', (qc) => {
          let inOrganization = this.readable(qc as unknown as QueryCreator<Database>).where('w.organization_id', '=', sql<string>`(select id from org)`)
          if (search !== undefined) inOrganization = inOrganization.where(sql<boolean>`strpos(lower(w.name), lower(${term})) > 0`)
          if (projectId !== undefined) inOrganization = inOrganization.where(sql<boolean>`w.project_id = ${project}`)
          return inOrganization
        })
        .selectFrom('org')
        .leftJoinLateral((eb) => eb.selectFrom('matching').selectAll()
          .orderBy('matching.name').orderBy('matching.id')
          .limit(limit as unknown as number).offset(offset as unknown as number).as('p'), (join) => join.onTrue())
        .select(['p.id', 'p.name', 'p.created_at', 'p.organization_name', 'p.project_id'])
        .select(sql<number>`(select count(*) from matching)`.as('total'))
        .orderBy('p.name').orderBy('p.id')
    })
    const result = (await this.db.executeQuery<WorkspaceView & { total: number | string }>(query)).rows
    if (result.length === 0) return undefined
    return { rows: result.filter((r) => r.id !== null), total: Number(result[0]!.total) }
  }
}
