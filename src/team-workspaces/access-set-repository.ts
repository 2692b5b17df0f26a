import type { Kysely } from 'kysely'
import type { Access } from '../../schemas/common.js'
import type { Database } from '../db/database.js'
import { newId } from '../db/ids.js'
import { permissionColumns, PERMISSION_COLUMN_NAMES } from '../access/permission-columns.js'
import { withGrants } from '../access/grants.js'
import { isAdminOf, namesTeamOn } from '../access/predicates.js'
import { accessorOf, recordEvents } from '../audit/audit-record.js'
import type { Caller } from '../auth/caller.js'
import { ROW_COLUMNS } from './team-workspaces-lists.js'
import type { TeamWorkspaceView } from './team-workspaces-repository.js'
import type { AccessSetPlan } from './access-set-plan.js'

/**
 * The statements of a workspace's access set (DESIGN §10.1). A read is one statement; a change is
 * one transaction (`change`) in which the workspace row is locked first (`for update`: a second
 * change of the same set, and any add to it, waits until this one commits), then the teams the set
 * names (`for share`, as an add's triggers do: a team deleted meanwhile is not there), then the
 * workspace's rows, so that the set the transaction compares and changes is the one it commits
 * against. Every row written records its audit event in its own statement (src/audit/audit-record.ts).
 */
export class AccessSetRepository {
  constructor (private readonly db: Kysely<Database>) {}

  /**
   * Every row of the workspace, in creation order, when the caller administers it (owners and
   * workspace admins, DESIGN §10.1); undefined otherwise, or when there is no such workspace.
   */
  async read (caller: Caller, workspaceId: string): Promise<TeamWorkspaceView[] | undefined> {
    const result = await withGrants(this.db, caller)
      .selectFrom('workspaces as w')
      .innerJoin('organizations as o', 'o.id', 'w.organization_id')
      .leftJoin('team_workspaces as tw', 'tw.workspace_id', 'w.id')
      .where('w.id', '=', workspaceId)
      .where(isAdminOf('w.id', 'w.organization_id', 'w.project_id', 'one'))
      .select(ROW_COLUMNS.map((c) => `tw.${c}` as const))
      .select(['w.name as workspace_name', 'o.name as organization_name'])
      .orderBy('tw.created_at').orderBy('tw.id')
      .execute()
    if (result.length === 0) return undefined
    return result.filter((row) => row.id !== null) as TeamWorkspaceView[]
  }

  /** Runs `work` in one transaction: it commits when `work` returns, and rolls back when it throws. */
  async change<T> (work: (set: AccessSetTransaction) => Promise<T>): Promise<T> {
    return await this.db.transaction().execute(async (trx) => await work(new AccessSetTransaction(trx)))
  }
}

/** The steps of a change, in the order they lock. */
export class AccessSetTransaction {
  constructor (private readonly trx: Kysely<Database>) {}

  /** Locks the workspace row when the caller administers it; its organization, or undefined (404). */
  async lockWorkspace (caller: Caller, workspaceId: string): Promise<{ organizationId: string } | undefined> {
    const row = await withGrants(this.trx, caller)
      .selectFrom('workspaces as w')
      .where('w.id', '=', workspaceId)
      .where(isAdminOf('w.id', 'w.organization_id', 'w.project_id', 'one'))
      .select('w.organization_id')
      .forUpdate('w')
      .executeTakeFirst()
    return row === undefined ? undefined : { organizationId: row.organization_id }
  }

  /**
   * Of `teamIds`, the teams of the organization the caller may name in the workspace's set
   * (`namesTeamOn`), locked for share until the transaction ends.
   */
  async teamsItMayName (caller: Caller, organizationId: string, workspaceId: string, teamIds: readonly string[]): Promise<Set<string>> {
    if (teamIds.length === 0) return new Set()
    const rows = await withGrants(this.trx, caller)
      .selectFrom('teams as t')
      .innerJoin('workspaces as w', 'w.organization_id', 't.organization_id')
      .where('w.id', '=', workspaceId)
      .where('t.id', 'in', [...teamIds])
      .where('t.organization_id', '=', organizationId)
      .where(namesTeamOn('t.id', 't.visibility', 't.organization_id', 'w.id'))
      .select('t.id')
      .orderBy('t.id')
      .forShare('t')
      .execute()
    return new Set(rows.map((row) => row.id))
  }

  /** The workspace's rows in creation order, locked until the transaction ends. */
  async rows (workspaceId: string): Promise<TeamWorkspaceView[]> {
    return await this.trx.selectFrom('team_workspaces as tw')
      .innerJoin('workspaces as w', 'w.id', 'tw.workspace_id')
      .innerJoin('organizations as o', 'o.id', 'w.organization_id')
      .where('tw.workspace_id', '=', workspaceId)
      .select(ROW_COLUMNS.map((c) => `tw.${c}` as const))
      .select(['w.name as workspace_name', 'o.name as organization_name'])
      .orderBy('tw.created_at').orderBy('tw.id')
      .forUpdate('tw')
      .execute()
  }

  /**
   * Writes the plan: its new rows in one statement, each changed row in one, its removals in one,
   * every statement with the audit events of the rows it wrote (`add_team`, `update_team_permissions`,
   * `remove_team`), accessor the caller.
   */
  async write (caller: Caller, target: { organizationId: string, workspaceId: string }, plan: AccessSetPlan, requestId: string): Promise<void> {
    const accessor = accessorOf(caller)
    const returned = ['organization_id', 'team_id', 'workspace_id', 'access', ...PERMISSION_COLUMN_NAMES] as const
    if (plan.add.length > 0) {
      const inserted = await this.trx
        .with('inserted', (qc) => qc.insertInto('team_workspaces')
          .values(plan.add.map((row) => ({
            id: newId('tws'),
            organization_id: target.organizationId,
            team_id: row.teamId,
            workspace_id: target.workspaceId,
            access: row.access,
            ...permissionColumns(row.permissions)
          })))
          .returning(returned))
        .with('audit', (qc) => recordEvents(qc, 'inserted', { action: 'add_team', accessor, requestId, permissions: true }))
        .selectFrom('inserted').select('inserted.team_id')
        .execute()
      wrote(inserted.length, plan.add.length)
    }
    for (const row of plan.update) {
      const updated = await this.trx
        .with('updated', (qc) => qc.updateTable('team_workspaces')
          .set({ access: row.access as Access, ...permissionColumns(row.permissions) })
          .where('team_workspaces.id', '=', row.id)
          .returning(returned))
        .with('audit', (qc) => recordEvents(qc, 'updated', { action: 'update_team_permissions', accessor, requestId, permissions: true }))
        .selectFrom('updated').select('updated.team_id')
        .execute()
      wrote(updated.length, 1)
    }
    if (plan.remove.length > 0) {
      const removed = await this.trx
        .with('removed', (qc) => qc.deleteFrom('team_workspaces')
          .where('team_workspaces.id', 'in', plan.remove.map((row) => row.id))
          .returning(['organization_id', 'team_id', 'workspace_id']))
        .with('audit', (qc) => recordEvents(qc, 'removed', { action: 'remove_team', accessor, requestId, permissions: false }))
        .selectFrom('removed').select('removed.team_id')
        .execute()
      wrote(removed.length, plan.remove.length)
    }
  }
}

/**
 * A step of a change wrote fewer rows than its plan: the set is not the one the transaction locked
 * (which the locks rule out) — the change is taken back whole rather than half applied.
 */
export class SetChangedMeanwhile extends Error {}

function wrote (rows: number, planned: number): void {
  if (rows !== planned) throw new SetChangedMeanwhile(`wrote ${rows} of ${planned} rows`)
}
