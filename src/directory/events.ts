import { sql, type QueryCreator, type RawBuilder } from 'kysely'
import { recordDirectoryEvents, type DirectoryChange } from '../audit/audit-record.js'
import type { Database } from '../db/database.js'
import { table } from '../db/tables.js'
import { accessorOf, type ChangeSource } from './source.js'

/**
 * The audit events of directory changes (DESIGN §9.5), one fragment per kind of row, for the CTE
 * beside the change that writes them (src/audit/audit-record.ts): every change of src/directory/,
 * whoever asks, records the same events, with the source's accessor and request id.
 */
export function recordChange (qc: QueryCreator<Database>, rows: string, resourceType: DirectoryChange['resourceType'], action: DirectoryChange['action'], source: ChangeSource) {
  return recordDirectoryEvents(qc, rows, { resourceType, action, accessor: accessorOf(source), requestId: source.requestId })
}

/** The event rows of teams created, updated or destroyed, from a CTE of team rows. */
export const teamEventRows = (teams: string): RawBuilder<unknown> => {
  const t = sql.table(teams)
  return sql`select ${t}.organization_id, ${t}.id as resource_id, jsonb_build_object('team', ${t}.name) as meta from ${t}`
}

/** The event rows of memberships added or removed, from a CTE of (team_id, user_id) rows: the team and the username. */
export const membershipEventRows = (memberships: string): RawBuilder<unknown> => {
  const m = sql.table(memberships)
  return sql`select t.organization_id, t.id as resource_id, jsonb_build_object('team', t.name, 'user', u.username) as meta
    from ${m} join ${table.teams} t on t.id = ${m}.team_id join ${table.users} u on u.id = ${m}.user_id`
}
