import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Access } from '../../schemas/common.js'
import type { Database } from '../db/database.js'
import { newId } from '../db/ids.js'
import { QueryShapes } from '../db/query-shapes.js'
import { callerGrants } from '../auth/caller-grants.js'
import type { Principal } from '../auth/caller.js'
import type { Permissions, UpdateChanges } from '../access/permissions.js'
import type { AccessSource } from '../access/rules.js'
import { permissionsOf } from './serialize.js'

/**
 * Team-workspace rows, read and written with the caller's visibility and permission applied in
 * SQL (the rules of src/access/rules.ts), one statement per operation so that concurrent writes
 * are decided by the database: the unique (team, workspace) key for duplicate adds, row locks
 * for updates of different attributes.
 */

/** A row with what its links need. */
export interface TeamWorkspaceView {
  id: string
  team_id: string
  workspace_id: string
  access: Access
  runs: Permissions['runs']
  variables: Permissions['variables']
  state_versions: Permissions['state-versions']
  sentinel_mocks: Permissions['sentinel-mocks']
  workspace_locking: boolean
  run_tasks: boolean
  workspace_name: string
  organization_name: string
}

/** Each permission with its column. */
const PERMISSION_COLUMNS = [
  ['runs', 'runs'], ['variables', 'variables'], ['state-versions', 'state_versions'], ['sentinel-mocks', 'sentinel_mocks'],
  ['workspace-locking', 'workspace_locking'], ['run-tasks', 'run_tasks']
] as const

const ROW_COLUMNS = ['id', 'team_id', 'workspace_id', 'access', 'runs', 'variables', 'state_versions',
  'sentinel_mocks', 'workspace_locking', 'run_tasks'] as const

// The predicates below read the `grants` CTE (src/auth/caller-grants.ts) that every query starts with.

/** The caller acts in the organization: it is a member, or holds its organization token. */
const isMemberOf = (organization: string): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from grants g where g.organization_id = ${sql.ref(organization)})`

/** The caller is an owner or a workspace admin (manage-workspaces, or a team row with access admin). */
const isAdminOf = (workspace: string, organization: string): RawBuilder<boolean> => sql<boolean>`(
  exists (select 1 from grants g where g.organization_id = ${sql.ref(organization)} and (g.is_owner or g.manage_workspaces))
  or exists (select 1 from team_workspaces a join grants g on g.team_id = a.team_id
             where a.workspace_id = ${sql.ref(workspace)} and a.access = 'admin'))`

/** The caller acts through this team. */
const actsThrough = (team: string): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from grants g where g.team_id = ${sql.ref(team)})`

export interface Page { number: number, size: number }

export interface ListResult {
  rows: TeamWorkspaceView[]
  /** Every visible row's count; only computed for a paginated list. */
  total: number
}

/** The one value that identifies a principal, and the principal of a kind built back from it. */
const principalValue = (p: Principal): string =>
  p.kind === 'bearer' ? p.digest : p.kind === 'organization' ? p.organizationId : p.kind === 'team' ? p.teamId : p.userId
const principalOf = (kind: Principal['kind'], value: string): Principal =>
  kind === 'bearer' ? { kind, digest: value } : kind === 'organization' ? { kind, organizationId: value } : kind === 'team' ? { kind, teamId: value } : { kind, userId: value }

export class TeamWorkspacesRepository {
  // every operation's statement is built once per shape
  private readonly shapes = new QueryShapes()

  constructor (private readonly db: Kysely<Database>) {}

  private withGrants (caller: Principal) {
    return this.db.with('grants', (qc) => callerGrants(qc, caller))
  }

  /**
   * Everything that grants the caller access to a workspace, in one statement: organization-level
   * admin (owner or manage-workspaces) and read, and the permissions of each of its teams' rows there.
   */
  async grantsOn (caller: Principal, workspaceId: string): Promise<{ admin: boolean, read: boolean, rows: AccessSource[] }> {
    const result = await this.withGrants(caller)
      .selectFrom('workspaces as w')
      .leftJoin('team_workspaces as tw', (join) => join.onRef('tw.workspace_id', '=', 'w.id').on(actsThrough('tw.team_id')))
      .where('w.id', '=', workspaceId)
      .select([
        sql<boolean>`exists (select 1 from grants g where g.organization_id = w.organization_id and (g.is_owner or g.manage_workspaces))`.as('admin'),
        sql<boolean>`exists (select 1 from grants g where g.organization_id = w.organization_id and g.read_workspaces)`.as('read'),
        'tw.access', 'tw.runs', 'tw.variables', 'tw.state_versions', 'tw.sentinel_mocks', 'tw.workspace_locking', 'tw.run_tasks'
      ])
      .execute()
    const rows = result.filter((r) => r.access !== null).map((r) => ({
      access: r.access!,
      permissions: permissionsOf(r as Parameters<typeof permissionsOf>[0])
    }))
    return { admin: result[0]?.admin === true, read: result[0]?.read === true, rows }
  }

  /** One row, if the caller may see it. */
  async find (caller: Principal, id: string): Promise<TeamWorkspaceView | undefined> {
    const query = this.shapes.compile(`find:${caller.kind}`, [principalValue(caller), id], ([who, rowId]) =>
      this.withGrants(principalOf(caller.kind, who!))
        .selectFrom('team_workspaces as tw')
        .innerJoin('teams as t', 't.id', 'tw.team_id')
        .innerJoin('workspaces as w', 'w.id', 'tw.workspace_id')
        .innerJoin('organizations as o', 'o.id', 'tw.organization_id')
        .select(ROW_COLUMNS.map((c) => `tw.${c}` as const))
        .select(['w.name as workspace_name', 'o.name as organization_name'])
        .where('tw.id', '=', rowId!)
        .where(isMemberOf('tw.organization_id'))
        .where((eb) => eb.or([
          eb('t.visibility', '=', 'organization'),
          actsThrough('tw.team_id'),
          isAdminOf('tw.workspace_id', 'tw.organization_id')
        ])))
    return (await this.db.executeQuery<TeamWorkspaceView>(query)).rows[0]
  }

  /**
   * The rows of a workspace the caller may see, in creation order, in one statement; undefined when
   * the workspace does not exist or the caller is no member of its organization.
   */
  async list (caller: Principal, workspaceId: string, page?: Page): Promise<ListResult | undefined> {
    // A row is visible to an admin outright (checked once, so the OR stops there), else when
    // its team is visible to the organization or is one the caller acts through. Correlated
    // lookups, not a join, so that a page walks the (workspace, created_at, id) index in order
    // and stops at offset + limit.
    const visible = sql<boolean>`(ws.is_admin
      or (select t.visibility from teams t where t.id = tw.team_id) = 'organization'
      or ${actsThrough('tw.team_id')})`
    const values = [principalValue(caller), workspaceId, ...(page === undefined ? [] : [page.size, (page.number - 1) * page.size])]
    const query = this.shapes.compile(`list:${caller.kind}:${page === undefined ? 'all' : 'page'}`, values, ([who, wsId, limit, offset]) => this.withGrants(principalOf(caller.kind, who!))
      .with('ws', (qc) => qc.selectFrom('workspaces as w')
        .innerJoin('organizations as o', 'o.id', 'w.organization_id')
        .where('w.id', '=', wsId!)
        .where(isMemberOf('w.organization_id'))
        .select(['w.id', 'w.name as workspace_name', 'o.name as organization_name',
          isAdminOf('w.id', 'w.organization_id').as('is_admin')]))
      // O(1) whatever the workspace's size: the trigger-kept counts (migration 0002), plus for a
      // member the rows of the secret teams it acts through; materialized so it runs once
      .with((cte) => cte('total').materialized(), (qc) => qc.selectFrom('ws')
        .select(page === undefined
          ? sql<number>`0`.as('count')
          : sql<number>`coalesce((select case when ws.is_admin then c.total else c.organization_visible end
              from workspace_access_counts c where c.workspace_id = ws.id), 0)
            + case when ws.is_admin then 0 else (
              select count(*) from team_workspaces x join teams t on t.id = x.team_id
              where x.workspace_id = ws.id and t.visibility = 'secret' and ${actsThrough('x.team_id')}) end`.as('count')))
      .selectFrom(['ws', 'total'])
      .leftJoinLateral((eb) => {
        const ordered = eb.selectFrom('team_workspaces as tw')
          .select(ROW_COLUMNS.map((c) => `tw.${c}` as const))
          .select('tw.created_at')
          .whereRef('tw.workspace_id', '=', 'ws.id')
          .where(visible)
          .orderBy('tw.created_at').orderBy('tw.id')
        return (page === undefined ? ordered : ordered.limit(limit as unknown as number).offset(offset as unknown as number)).as('p')
      }, (join) => join.onTrue())
      .select(ROW_COLUMNS.map((c) => `p.${c}` as const))
      .select(['ws.workspace_name', 'ws.organization_name', 'total.count as total'])
      .orderBy('p.created_at').orderBy('p.id'))
    const result = (await this.db.executeQuery<TeamWorkspaceView & { total: number | string }>(query)).rows
    if (result.length === 0) return undefined
    const rows = result.filter((r) => r.id !== null)
    return { rows, total: Number(result[0]!.total) }
  }

  /**
   * Adds a row if the caller administers the workspace and the team is of its organization.
   * `added` undefined: nothing was inserted; `taken` tells whether that was because the pair exists
   * (only ever true for a caller who may see that).
   */
  async add (caller: Principal, input: { teamId: string, workspaceId: string, access: Access, permissions: Permissions }):
  Promise<{ added: TeamWorkspaceView } | { added: undefined, taken: boolean }> {
    const p = input.permissions
    const values = [principalValue(caller), newId('tws'), input.teamId, input.workspaceId, input.access, p.runs, p.variables,
      p['state-versions'], p['sentinel-mocks'], p['workspace-locking'], p['run-tasks']]
    const query = this.shapes.compile(`add:${caller.kind}`, values, ([who, id, teamId, workspaceId, access, runs, variables, stateVersions, sentinelMocks, locking, runTasks]) =>
      this.withGrants(principalOf(caller.kind, who!))
        .with('inserted', (qc) => qc.insertInto('team_workspaces')
          .columns(['id', 'organization_id', 'team_id', 'workspace_id', ...ROW_COLUMNS.slice(3)])
          .expression((eb) => eb.selectFrom('workspaces as w')
            .innerJoin('teams as t', (join) => join
              .on('t.id', '=', teamId!)
              .onRef('t.organization_id', '=', 'w.organization_id'))
            .where('w.id', '=', workspaceId!)
            .where(isAdminOf('w.id', 'w.organization_id'))
            .select([
              sql<string>`${id}::text`.as('id'), 'w.organization_id', 't.id as team_id', 'w.id as workspace_id',
              sql<Access>`${access}::text`.as('access'),
              sql<string>`${runs}::text`.as('runs'),
              sql<string>`${variables}::text`.as('variables'),
              sql<string>`${stateVersions}::text`.as('state_versions'),
              sql<string>`${sentinelMocks}::text`.as('sentinel_mocks'),
              sql<boolean>`${locking}::boolean`.as('workspace_locking'),
              sql<boolean>`${runTasks}::boolean`.as('run_tasks')
            ]))
          .onConflict((oc) => oc.columns(['team_id', 'workspace_id']).doNothing())
          .returning(ROW_COLUMNS))
        .selectFrom('inserted')
        .innerJoin('workspaces as w', 'w.id', 'inserted.workspace_id')
        .innerJoin('organizations as o', 'o.id', 'w.organization_id')
        .selectAll('inserted')
        .select(['w.name as workspace_name', 'o.name as organization_name']))
    const added = (await this.db.executeQuery<TeamWorkspaceView>(query)).rows[0]
    if (added !== undefined) return { added }

    // Nothing inserted: say "already taken" only to a caller who may manage that workspace.
    const why = await this.withGrants(caller)
      .selectFrom('workspaces as w')
      .where('w.id', '=', input.workspaceId)
      .where(isAdminOf('w.id', 'w.organization_id'))
      .select(sql<boolean>`exists (select 1 from team_workspaces x where x.workspace_id = w.id and x.team_id = ${input.teamId})`.as('taken'))
      .executeTakeFirst()
    return { added: undefined, taken: why?.taken === true }
  }

  /**
   * Applies `changes` in one UPDATE if the caller administers the row's workspace and the row's
   * current level allows them. `updated` undefined: `current` is the row's level when the caller may
   * manage it (then that level refused the change), undefined when it may not (404).
   */
  async update (caller: Principal, id: string, changes: UpdateChanges):
  Promise<{ updated: TeamWorkspaceView } | { updated: undefined, current: Access | undefined }> {
    // the shape: which permissions are written, and which current levels allow it
    const names = PERMISSION_COLUMNS.filter(([name]) => changes.permissions[name] !== undefined)
    const key = `update:${caller.kind}:${changes.access === undefined ? '-' : 'access'}:${names.map(([name]) => name).join(',')}:${changes.currentAccessIn.length}`
    const values = [principalValue(caller), id, ...(changes.access === undefined ? [] : [changes.access]),
      ...names.map(([name]) => changes.permissions[name]), ...changes.currentAccessIn]
    const query = this.shapes.compile(key, values, ([who, rowId, ...rest]) => {
      const access = changes.access === undefined ? undefined : rest.shift()
      const written = names.map(([, column]) => [column, rest.shift()] as const)
      return this.withGrants(principalOf(caller.kind, who!))
        .with('updated', (qc) => qc.updateTable('team_workspaces as tw')
          .set((eb) => ({
            access: access === undefined ? eb.ref('tw.access') : sql<Access>`${access}::text`,
            ...Object.fromEntries(written.map(([column, value]) => [column, sql`${value}::${sql.raw(column === 'workspace_locking' || column === 'run_tasks' ? 'boolean' : 'text')}`]))
          }))
          .where('tw.id', '=', rowId!)
          .where(isAdminOf('tw.workspace_id', 'tw.organization_id'))
          .where('tw.access', 'in', rest as Access[])
          .returning(ROW_COLUMNS.map((c) => `tw.${c}` as const)))
        .selectFrom('updated')
        .innerJoin('workspaces as w', 'w.id', 'updated.workspace_id')
        .innerJoin('organizations as o', 'o.id', 'w.organization_id')
        .selectAll('updated')
        .select(['w.name as workspace_name', 'o.name as organization_name'])
    })
    const updated = (await this.db.executeQuery<TeamWorkspaceView>(query)).rows[0]
    if (updated !== undefined) return { updated }

    const current = await this.withGrants(caller)
      .selectFrom('team_workspaces as tw')
      .where('tw.id', '=', id)
      .where(isAdminOf('tw.workspace_id', 'tw.organization_id'))
      .select('tw.access')
      .executeTakeFirst()
    return { updated: undefined, current: current?.access }
  }

  /** Removes the row if the caller administers its workspace; false when there was nothing it could remove. */
  async remove (caller: Principal, id: string): Promise<boolean> {
    const query = this.shapes.compile(`remove:${caller.kind}`, [principalValue(caller), id], ([who, rowId]) =>
      this.withGrants(principalOf(caller.kind, who!))
        .deleteFrom('team_workspaces as tw')
        .where('tw.id', '=', rowId!)
        .where(isAdminOf('tw.workspace_id', 'tw.organization_id'))
        .returning('tw.id'))
    return (await this.db.executeQuery(query)).rows.length > 0
  }
}
