import { sql, type QueryCreator, type RawBuilder } from 'kysely'
import type { AuditAction } from '../../schemas/audit.js'
import { PERMISSION_NAMES } from '../access/permissions.js'
import { callerValues } from '../access/grants.js'
import type { Caller } from '../auth/caller.js'
import type { Database } from '../db/database.js'
import { PERMISSION_COLUMNS } from '../access/permission-columns.js'
import { table } from '../db/tables.js'

/**
 * Who made a change: the user, team or organization behind a token (the statement reads its
 * name as it is at that moment), or the system — a seed file — which has no id.
 */
export type Accessor =
  | { kind: Caller['kind'], id: string }
  | { kind: 'system' | 'mirror', description: string }

/** The accessor of a change made by a caller: the user, team or organization behind its token. */
export const accessorOf = (caller: Caller): Accessor => ({ kind: caller.kind, id: callerValues(caller)[0] })

export interface AuditedChange {
  /** What the change was; an expression over the changed rows when one statement may do either (a seed's upsert). */
  action: AuditAction | RawBuilder<AuditAction>
  accessor: Accessor
  requestId: string
  /** Whether the changed rows carry the permissions after the change (adds, updates), or not (removals). */
  permissions: boolean
}

/**
 * The audit events of a change, recorded by the very statement that makes it (DESIGN §8): an
 * INSERT … SELECT from the rows the change returned, as a data-modifying CTE of that statement.
 * One statement is one transaction, so an event exists exactly when its change does: a write
 * that fails takes its event with it, and a denied, invalid or duplicate request, which changes
 * no row, records nothing — without a round trip of its own.
 *
 * `changed` names the CTE of the changed rows: organization_id, team_id, workspace_id and, with
 * `permissions`, access and every permission column as they are after the change.
 */
export function recordEvents<DB extends Database> (qc: QueryCreator<DB>, changed: string, change: AuditedChange) {
  const column = (name: string) => sql.ref(`${changed}.${name}`)
  const accessor = accessorColumns(change.accessor)
  const action = typeof change.action === 'string' ? sql.lit(change.action) : change.action
  return qc.insertInto('audit_events')
    .columns(['organization_id', 'accessor_kind', 'accessor_id', 'accessor_description', 'request_id', 'action', 'workspace_id', 'team_id', 'team_name', 'permissions'])
    .expression(sql`
      select ${column('organization_id')}, ${sql.lit(change.accessor.kind)}, ${accessor.id}, ${accessor.description}, ${change.requestId}::text,
        ${action}, ${column('workspace_id')}, ${column('team_id')}, t.name, ${change.permissions ? permissionsText(changed) : sql`null::text`}
      from ${sql.table(changed)} join ${table.teams} t on t.id = ${column('team_id')}`)
}

export interface DirectoryChange {
  /** What the events are about and what happened; `rows`: each row names its own (`resource_type`, `action` columns). */
  resourceType: 'team' | 'authentication-token' | 'project' | 'team-project' | 'workspace' | 'organization-membership' | 'rows'
  action: 'create' | 'update' | 'destroy' | 'add_member' | 'remove_member' | 'rows'
  accessor: Accessor
  requestId: string
}

/**
 * The audit events of a change to the directory (DESIGN §9.5) — a team created, updated or
 * destroyed, a member added or removed, a token created or destroyed — recorded by the statement
 * that makes the change, as recordEvents does for team access. `changed` names a CTE of one row
 * per event: organization_id, resource_id (the team or token) and meta (a jsonb object of names:
 * `team`, `user`, `subject` — never a secret).
 */
export function recordDirectoryEvents<DB extends Database> (qc: QueryCreator<DB>, changed: string, change: DirectoryChange) {
  const column = (name: string) => sql.ref(`${changed}.${name}`)
  const accessor = accessorColumns(change.accessor)
  const action = change.action === 'rows' ? column('action') : sql.lit(change.action)
  const resourceType = change.resourceType === 'rows' ? column('resource_type') : sql.lit(change.resourceType)
  return qc.insertInto('audit_events')
    .columns(['organization_id', 'accessor_kind', 'accessor_id', 'accessor_description', 'request_id', 'action', 'resource_type', 'resource_id', 'meta'])
    .expression(sql`
      select ${column('organization_id')}, ${sql.lit(change.accessor.kind)}, ${accessor.id}, ${accessor.description}, ${change.requestId}::text,
        ${action}, ${resourceType}, ${column('resource_id')}, ${column('meta')}
      from ${sql.table(changed)}`)
}

/**
 * The events of tokens created or destroyed, as rows for recordDirectoryEvents, from a CTE
 * `tokens` of token rows (id, kind, organization_id, team_id, user_id): an organization's or a
 * team's token in its organization. A user's own token belongs to no organization, so it is in
 * no organization's trail (an organization learns nothing of what its members do outside it).
 * `subject` names the organization or team — never the secret.
 */
export function tokenEvents (tokens: string): RawBuilder<{ organization_id: string, resource_id: string, meta: string }> {
  const t = sql.table(tokens)
  return sql`(
    select o.id as organization_id, g.id as resource_id, jsonb_build_object('subject', o.name) as meta
      from ${t} g join ${table.organizations} o on o.id = g.organization_id where g.kind = 'organization'
    union all
    select tm.organization_id, g.id, jsonb_build_object('subject', tm.name)
      from ${t} g join ${table.teams} tm on tm.id = g.team_id where g.kind = 'team')`
}

function accessorColumns (accessor: Accessor): { id: RawBuilder<string | null>, description: RawBuilder<string> } {
  return 'description' in accessor
    ? { id: sql`null::text`, description: sql`${accessor.description}::text` }
    : { id: sql`${accessor.id}::text`, description: accessorName(accessor.kind, accessor.id) }
}

/** The name of the user, team or organization behind a token, read in the statement. */
function accessorName (kind: Caller['kind'], id: string): RawBuilder<string> {
  switch (kind) {
    case 'organization': return sql`(select name from ${table.organizations} where id = ${id}::text)`
    case 'team': return sql`(select name from ${table.teams} where id = ${id}::text)`
    case 'user': return sql`(select username from ${table.users} where id = ${id}::text)`
  }
}

/**
 * `access=custom runs=apply variables=none …`, wire names in the order of PERMISSION_NAMES, from
 * the columns of the changed rows: a permission added later is recorded without a change here.
 */
function permissionsText (changed: string): RawBuilder<string> {
  const parts = [
    sql`'access=' || ${sql.ref(`${changed}.access`)}`,
    ...PERMISSION_NAMES.map((name) => sql`${sql.lit(`${name}=`)} || ${sql.ref(`${changed}.${PERMISSION_COLUMNS[name]}`)}::text`)
  ]
  return sql<string>`${sql.join(parts, sql` || ' ' || `)}`
}
