import { sql, type Kysely, type QueryCreator } from 'kysely'
import type { Access } from '../../schemas/common.js'
import type { Database } from '../db/database.js'
import { newId } from '../db/ids.js'
import { QueryShapes } from '../db/query-shapes.js'
import { columnType, PERMISSION_COLUMN_NAMES, PERMISSION_COLUMNS, permissionsOf, type PermissionRow } from '../access/permission-columns.js'
import { callerGrants, callerOfKind, callerValues, withGrants } from '../access/grants.js'
import { grantsOrganizationWide, isAdminOf, judgedAs, readsRow } from '../access/predicates.js'
import { linkNames, organizationName, ROW_COLUMNS, rowsOfTeam, rowsOfWorkspace } from './team-workspaces-lists.js'
import type { Caller } from '../auth/caller.js'
import { PERMISSION_NAMES, type Permissions, type UpdateChanges } from '../access/permissions.js'
import { ORGANIZATION_GRANTS, type OrganizationGrantFlags, type TeamGrants } from '../access/effective-access.js'
import { recordEvents } from '../audit/audit-record.js'
import { PROJECT_GRANT_COLUMNS, projectGrantOf, type ProjectGrantRow } from '../access/project-permissions.js'
import { isGoneWhileWaiting } from '../db/write-races.js'
import { table } from '../db/tables.js'

/**
 * Team-workspace rows, read and written with the caller's visibility and permission applied in
 * SQL (the predicates of src/access/predicates.ts), one statement per operation so that
 * concurrent writes are decided by the database: the unique (team, workspace) key for duplicate
 * adds, row locks for updates of different attributes. Each statement is built once per shape
 * (src/db/query-shapes.ts) and replayed with new values. Each write records its audit event in
 * the same statement (src/audit/audit-record.ts), from the rows it changed: none when it changed none.
 */

/** A row with what its links need. */
export type TeamWorkspaceView = PermissionRow & {
  id: string
  team_id: string
  workspace_id: string
  access: Access
  workspace_name: string
  organization_name: string
}

export interface Page { number: number, size: number }

/** What a list is of: a workspace, a team, or one team on one workspace (at least one of them). */
export interface ListFilter { workspaceId?: string, teamId?: string }

export interface ListResult {
  rows: TeamWorkspaceView[]
  /** Every visible row's count; only computed for a paginated list. */
  total: number
}

export type AddResult = { added: TeamWorkspaceView } | { added: undefined, taken: boolean }
export type UpdateResult = { updated: TeamWorkspaceView } | { updated: undefined, current: Access | undefined }

export class TeamWorkspacesRepository {
  private readonly shapes = new QueryShapes()

  constructor (private readonly db: Kysely<Database>) {}

  /**
   * Everything that grants the caller access on each of the workspaces, in one statement: per
   * workspace, each of the caller's grant rows in its organization that grants anything there (a
   * team it acts through, or an organization token's ownership), with its organization-wide flags
   * and that team's row there. A workspace where nothing is granted, or that does not exist, is
   * absent from the map. Built once per caller kind and replayed (a host asks on every request).
   * One workspace is asked for by `ws.id = $1`, not `= any($1)`: PostgreSQL cannot tell how long a
   * parameter's array is, costs the generic plan of `any` above a custom one, and so planned the
   * host's single check afresh on every call (0.33 ms of planning against 0.06 of execution).
   */
  async grantsOn (caller: Caller, workspaceIds: readonly string[]): Promise<Map<string, Array<Pick<TeamGrants, 'flags' | 'row' | 'projectRow'>>>> {
    const one = workspaceIds.length === 1
    const query = this.shapes.compile(this.db, `grants-on:${caller.kind}:${one ? 'one' : 'many'}`, [...callerValues(caller), one ? workspaceIds[0] : workspaceIds], ([who, token, ids]) =>
      // the caller's grant rows that can grant anything on a workspace (materialized: a handful,
      // found by the caller's key), then, for each, the asked workspaces of its organization, that
      // team's row on each and its row on each one's project, each probed by its key. Left to
      // itself, the planner may start from a workspace and visit every team of its organization
      // (PGlite keeps no statistics to tell it otherwise: 3,000 teams read a check), and a generic
      // plan read the workspaces of a small organization whole to find the one asked for
      (this.db.with((cte) => cte('grants').materialized(), (qc) => callerGrants(qc, callerOfKind(caller.kind, [who, token]), 'granting')) as unknown as QueryCreator<Database>)
        .selectFrom(sql`grants`.as('g'))
        .innerJoinLateral((eb) => eb.selectFrom('workspaces as ws').select(['ws.id', 'ws.project_id'])
          .where(one ? sql<boolean>`ws.id = ${ids}::text` : sql<boolean>`ws.id = any(${ids}::text[])`)
          .where(sql<boolean>`ws.organization_id = g.organization_id`)
          .as('w'), (join) => join.onTrue())
        // that team's row on the workspace, by its unique (team, workspace) key: a lateral probe,
        // where a join read every row of the team for each workspace of several
        .leftJoinLateral((eb) => eb.selectFrom('team_workspaces as r')
          .select(['r.id', 'r.access', ...PERMISSION_COLUMN_NAMES.map((c) => `r.${c}` as const)])
          .where(sql<boolean>`r.team_id = g.team_id`)
          .where(sql<boolean>`r.workspace_id = w.id`)
          .limit(1)
          .as('tw'), (join) => join.onTrue())
        // and that team's row on the workspace's project (DESIGN §11.3), by its unique (team,
        // project) key: as a plain join, a prepared statement's generic plan hashed the whole
        // team_projects table on every call (it cannot tell how many workspaces it will be given)
        .leftJoinLateral((eb) => eb.selectFrom('team_projects as p')
          .select(PROJECT_GRANT_COLUMNS.map((c) => `p.${c}` as const))
          .where(sql<boolean>`p.team_id = g.team_id`)
          .where(sql<boolean>`p.project_id = w.project_id`)
          .limit(1)
          .as('tp'), (join) => join.onTrue())
        .where(sql<boolean>`(${grantsOrganizationWide('g')} or tw.id is not null or tp.id is not null)`)
        .select(['w.id as workspace_id', 'tw.id as row_id', 'tw.access'])
        .select(PROJECT_GRANT_COLUMNS.map((c) => `tp.${c} as tp_${c}` as const))
        // each organization-wide flag ORGANIZATION_GRANTS names, under its own name (combineAccess reads them so)
        .select(ORGANIZATION_GRANTS.map((grant) => sql<boolean>`${sql.ref(`g.${grant.flag}`)}`.as(grant.flag)))
        .select(PERMISSION_COLUMN_NAMES.map((c) => `tw.${c}` as const)))
    const result = await this.db.executeQuery<PermissionRow & OrganizationGrantFlags & ProjectGrantRow & { workspace_id: string, row_id: string | null, access: Access | null }>(query)
    const grants = new Map<string, Array<Pick<TeamGrants, 'flags' | 'row' | 'projectRow'>>>()
    for (const r of result.rows) {
      const grant = { flags: r, row: r.row_id === null ? null : { id: r.row_id, access: r.access!, permissions: permissionsOf(r) }, projectRow: projectGrantOf(r) }
      const teams = grants.get(r.workspace_id)
      if (teams === undefined) grants.set(r.workspace_id, [grant])
      else teams.push(grant)
    }
    return grants
  }

  /** One row, if the caller may see it. */
  async find (caller: Caller, id: string): Promise<TeamWorkspaceView | undefined> {
    const query = this.shapes.compile(this.db, `find:${caller.kind}`, [...callerValues(caller), id], ([who, token, rowId]) =>
      withGrants(this.db, callerOfKind(caller.kind, [who, token]), 'granting')
        .selectFrom('team_workspaces as tw')
        // the row's workspace by primary key: its name for the links, its project for the project
        // grants. A lateral probe, not a join: a generic plan hashed every workspace of a small
        // table to join the one row
        .innerJoinLateral((eb) => eb.selectFrom('workspaces as ws').select(['ws.name', 'ws.project_id'])
          .where(sql<boolean>`ws.id = tw.workspace_id`).limit(1).as('w'), (join) => join.onTrue())
        .select(ROW_COLUMNS.map((c) => `tw.${c}` as const))
        .select(['w.name as workspace_name', organizationName('tw.organization_id')])
        .where('tw.id', '=', rowId!)
        .where(readsRow('tw.workspace_id', 'tw.organization_id', 'tw.team_id', 'tw.team_visibility', 'w.project_id', judgedAs(caller.kind))))
    return (await this.db.executeQuery<TeamWorkspaceView>(query)).rows[0]
  }

  /**
   * The rows the caller may see (DESIGN §4 list), in creation order, in one statement: of a
   * workspace (optionally of one team there), or of a team across its organization's workspaces.
   * Undefined when the workspace does not exist or the caller cannot read it (DESIGN §3: the same
   * rule as GET /workspaces/:id), or when the team does not exist or the caller may not see it; a
   * team's rows on workspaces the caller cannot read are not listed (nor counted).
   */
  async list (caller: Caller, filter: ListFilter, page?: Page): Promise<ListResult | undefined> {
    const by = filter.workspaceId === undefined ? 'team' : filter.teamId === undefined ? 'workspace' : 'pair'
    const values = [...callerValues(caller), ...(by === 'team' ? [filter.teamId] : by === 'workspace' ? [filter.workspaceId] : [filter.workspaceId, filter.teamId]),
      ...(page === undefined ? [] : [page.size, (page.number - 1) * page.size])]
    const query = this.shapes.compile(this.db, `list:${caller.kind}:${by}:${page === undefined ? 'all' : 'page'}`, values, ([who, token, ...rest]) => {
      const grants = withGrants(this.db, callerOfKind(caller.kind, [who, token]))
      const pageOf = page === undefined ? undefined : { limit: rest.at(-2)!, offset: rest.at(-1)! }
      return by === 'team'
        ? rowsOfTeam(grants, rest[0]!, pageOf)
        : rowsOfWorkspace(grants, rest[0]!, by === 'pair' ? rest[1]! : undefined, pageOf)
    })
    const result = (await this.db.executeQuery<TeamWorkspaceView & { total: number | string }>(query)).rows
    if (result.length === 0) return undefined
    return { rows: result.filter((r) => r.id !== null), total: Number(result[0]!.total) }
  }

  /**
   * Adds a row if the caller administers the workspace and the team is of its organization.
   * `added` undefined: nothing was inserted; `taken` tells whether that was because the pair exists
   * (only ever true for a caller who may manage that workspace). `requestId` goes into the audit event.
   */
  async add (caller: Caller, input: { teamId: string, workspaceId: string, access: Access, permissions: Permissions }, requestId: string): Promise<AddResult> {
    const values = [...callerValues(caller), requestId, newId('tws'), input.teamId, input.workspaceId, input.access,
      ...PERMISSION_NAMES.map((name) => input.permissions[name])]
    const query = this.shapes.compile(this.db, `add:${caller.kind}`, values, ([who, token, request, id, teamId, workspaceId, access, ...permissions]) =>
      withGrants(this.db, callerOfKind(caller.kind, [who, token]), 'granting')
        .with('inserted', (qc) => qc.insertInto('team_workspaces')
          .columns(['id', 'organization_id', 'team_id', 'workspace_id', 'access', ...PERMISSION_COLUMN_NAMES])
          .expression((eb) => eb.selectFrom('workspaces as w')
            .innerJoin('teams as t', (join) => join.on('t.id', '=', teamId!).onRef('t.organization_id', '=', 'w.organization_id'))
            .where('w.id', '=', workspaceId!)
            .where(isAdminOf('w.id', 'w.organization_id', 'w.project_id', judgedAs(caller.kind)))
            .select([
              sql<string>`${id}::text`.as('id'), 'w.organization_id', 't.id as team_id', 'w.id as workspace_id',
              sql<Access>`${access}::text`.as('access'),
              ...PERMISSION_NAMES.map((name, i) => sql`${permissions[i]}::${sql.raw(columnType(name))}`.as(PERMISSION_COLUMNS[name]))
            ]))
          .onConflict((oc) => oc.columns(['team_id', 'workspace_id']).doNothing())
          .returning(['organization_id', ...ROW_COLUMNS]))
        .with('audit', (qc) => recordEvents(qc, 'inserted', { action: 'add_team', accessor: { kind: caller.kind, id: who! }, requestId: request!, permissions: true }))
        .selectFrom('inserted')
        .selectAll('inserted')
        .select(linkNames('inserted.workspace_id', 'inserted.organization_id')))
    let added: TeamWorkspaceView | undefined
    try {
      added = (await this.db.executeQuery<TeamWorkspaceView>(query)).rows[0]
    } catch (err) {
      // the team or workspace was deleted while the insert waited for it (its row's team visibility,
      // copied by a trigger, or the foreign key finds none): nothing to add to (404)
      if (isGoneWhileWaiting(err)) return { added: undefined, taken: false }
      throw err
    }
    if (added !== undefined) return { added }

    // Nothing inserted: say "already taken" only to a caller who may manage that workspace.
    const why = await withGrants(this.db, caller, 'granting')
      .selectFrom('workspaces as w')
      .where('w.id', '=', input.workspaceId)
      .where(isAdminOf('w.id', 'w.organization_id', 'w.project_id', judgedAs(caller.kind)))
      .select(sql<boolean>`exists (select 1 from ${table.team_workspaces} x where x.workspace_id = w.id and x.team_id = ${input.teamId})`.as('taken'))
      .executeTakeFirst()
    return { added: undefined, taken: why?.taken === true }
  }

  /**
   * Applies `changes` in one statement if the caller administers the row's workspace and the row's
   * current level allows them: the row is locked (`current`, as it is once any concurrent write has
   * landed), written only when a value differs, and the audit event recorded from the rows written
   * — a change that changes nothing writes nothing and records no event, and answers the row as it
   * is. `updated` undefined: `current` is the row's level when the caller may manage it (then that
   * level refused the change), undefined when it may not (404).
   */
  async update (caller: Caller, id: string, changes: UpdateChanges, requestId: string): Promise<UpdateResult> {
    // the shape: which permissions are written, and which current levels allow it
    const names = PERMISSION_NAMES.filter((name) => changes.permissions[name] !== undefined)
    const key = `update:${caller.kind}:${changes.access === undefined ? '-' : 'access'}:${names.join(',')}:${changes.currentAccessIn.length}`
    const values = [...callerValues(caller), requestId, id, ...(changes.access === undefined ? [] : [changes.access]),
      ...names.map((name) => changes.permissions[name]), ...changes.currentAccessIn]
    const query = this.shapes.compile(this.db, key, values, ([who, token, request, rowId, ...rest]) => {
      const access = changes.access === undefined ? undefined : sql<Access>`${rest.shift()}::text`
      const written = names.map((name) => [PERMISSION_COLUMNS[name], sql`${rest.shift()}::${sql.raw(columnType(name))}`] as const)
      const assigned = [...(access === undefined ? [] : [['access', access] as const]), ...written]
      // whether the body changes anything of the row as it is now
      const differs = assigned.length === 0
        ? sql<boolean>`false`
        : sql<boolean>`(${sql.join(assigned.map(([column, value]) => sql`tw.${sql.raw(column)} is distinct from ${value}`), sql` or `)})`
      const row = ['organization_id', ...ROW_COLUMNS] as const
      return withGrants(this.db, callerOfKind(caller.kind, [who, token]), 'granting')
        .with('current', (qc) => qc.selectFrom('team_workspaces as tw')
          .select(row.map((c) => `tw.${c}` as const))
          .where('tw.id', '=', rowId!)
          .where(isAdminOf('tw.workspace_id', 'tw.organization_id', undefined, judgedAs(caller.kind)))
          .where('tw.access', 'in', rest as Access[])
          .forUpdate('tw'))
        .with('updated', (qc) => qc.updateTable('team_workspaces as tw')
          .from('current as c')
          .set(assigned.length === 0 ? { access: sql<Access>`tw.access` } : Object.fromEntries(assigned))
          .whereRef('tw.id', '=', 'c.id')
          .where(differs)
          .returning(row.map((c) => `tw.${c}` as const)))
        .with('audit', (qc) => recordEvents(qc, 'updated', { action: 'update_team_permissions', accessor: { kind: caller.kind, id: who! }, requestId: request!, permissions: true }))
        .selectFrom('updated')
        .selectAll('updated')
        .select(linkNames('updated.workspace_id', 'updated.organization_id'))
        // nothing to write: the row as it is
        .unionAll((eb) => eb.selectFrom('current')
          .selectAll('current')
          .select(linkNames('current.workspace_id', 'current.organization_id'))
          .where(sql<boolean>`not exists (select 1 from updated)`))
    })
    const updated = (await this.db.executeQuery<TeamWorkspaceView>(query)).rows[0]
    if (updated !== undefined) return { updated }

    const current = await withGrants(this.db, caller, 'granting')
      .selectFrom('team_workspaces as tw')
      .where('tw.id', '=', id)
      .where(isAdminOf('tw.workspace_id', 'tw.organization_id', undefined, judgedAs(caller.kind)))
      .select('tw.access')
      .executeTakeFirst()
    return { updated: undefined, current: current?.access }
  }

  /** Removes the row if the caller administers its workspace; false when there was nothing it could remove. */
  async remove (caller: Caller, id: string, requestId: string): Promise<boolean> {
    const query = this.shapes.compile(this.db, `remove:${caller.kind}`, [...callerValues(caller), requestId, id], ([who, token, request, rowId]) =>
      withGrants(this.db, callerOfKind(caller.kind, [who, token]), 'granting')
        .with('removed', (qc) => qc.deleteFrom('team_workspaces')
          .where('team_workspaces.id', '=', rowId!)
          .where(isAdminOf('team_workspaces.workspace_id', 'team_workspaces.organization_id', undefined, judgedAs(caller.kind)))
          .returning(['id', 'organization_id', 'team_id', 'workspace_id']))
        .with('audit', (qc) => recordEvents(qc, 'removed', { action: 'remove_team', accessor: { kind: caller.kind, id: who! }, requestId: request!, permissions: false }))
        .selectFrom('removed')
        .select('removed.id'))
    return (await this.db.executeQuery(query)).rows.length > 0
  }
}
