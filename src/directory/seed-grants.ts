import { createHash } from 'node:crypto'
import { sql, type Transaction } from 'kysely'
import type { SeedTeamAccess } from '../../schemas/seed.js'
import { PERMISSION_COLUMN_NAMES, permissionColumns, pickPermissions } from '../access/permission-columns.js'
import { PERMISSION_NAMES, permissionsOnAdd } from '../access/permissions.js'
import { recordEvents } from '../audit/audit-record.js'
import type { Database } from '../db/database.js'
import { newId } from '../db/ids.js'
import type { SeedSummary } from './seed-entries.js'

/**
 * A `team-access` entry is a grant to make once (DESIGN §6, "a seed never undoes the API"):
 * remembered by its fingerprint — team, workspace, permissions — and skipped ever after, so a
 * grant the API removed or changed stays as the API left it. A new or edited entry sets the
 * (team, workspace) row to what it says, whatever that row's id, or adds it: it never fails on
 * what the API did. Applying it records its audit event (System, `seed`) in the same statement.
 */
export async function applyGrant (trx: Transaction<Database>, grant: SeedTeamAccess, { organizationId, teamId, workspaceId }: { organizationId: string, teamId: string, workspaceId: string },
  label: string, summary: SeedSummary, requestId: string): Promise<void> {
  const permissions = permissionsOnAdd(grant.access, pickPermissions(grant))
  const fingerprint = createHash('sha256')
    .update(JSON.stringify([teamId, workspaceId, grant.access, PERMISSION_NAMES.map((name) => permissions[name])]))
    .digest('hex')
  const first = await trx.insertInto('seed_grants').values({ fingerprint, team_id: teamId, workspace_id: workspaceId })
    .onConflict((oc) => oc.column('fingerprint').doNothing())
    .returning('fingerprint').executeTakeFirst()
  if (first === undefined) {
    summary.teamAccessAlreadyApplied++
    return
  }
  const values = { access: grant.access, ...permissionColumns(permissions) }
  // an explicit id is kept unless another row has it by now (the API may have re-added the pair)
  const idTaken = grant.id !== undefined &&
    (await trx.selectFrom('team_workspaces').select('id').where('id', '=', grant.id).executeTakeFirst()) !== undefined
  const applied = trx.with('applied', (qc) => qc.insertInto('team_workspaces')
    .values({ id: grant.id === undefined || idTaken ? newId('tws') : grant.id, organization_id: organizationId, team_id: teamId, workspace_id: workspaceId, ...values })
    .onConflict((oc) => oc.columns(['team_id', 'workspace_id']).doUpdateSet(values))
    // which the upsert did: a row it inserted has xmax 0, a row it updated was locked by this transaction first
    .returning(['organization_id', 'team_id', 'workspace_id', 'access', ...PERMISSION_COLUMN_NAMES, sql<boolean>`xmax = 0`.as('added')]))
  const [event] = await recordEvents(applied, 'applied', {
    action: sql`case when applied.added then 'add_team' else 'update_team_permissions' end`,
    accessor: { kind: 'system', description: 'seed' },
    requestId,
    permissions: true
  }).returning(sql<string>`action`.as('action')).execute()
  ;(event?.action === 'add_team' ? summary.created : summary.changed).teamAccess.push(label)
  summary.teamAccess++
}
