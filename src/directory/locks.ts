import type { Kysely, Selectable } from 'kysely'
import type { Database } from '../db/database.js'
import { impossibleId } from '../db/ids.js'

export type Locked = 'organizations' | 'users' | 'teams' | 'workspaces' | 'tokens'

/**
 * The row `id` of `table`, locked for the rest of the transaction (`update`: the change changes or
 * removes it; `share`: it adds to it, and keeps it from going meanwhile); undefined when there is none.
 */
export async function lockRow<T extends Locked> (trx: Kysely<Database>, table: T, id: string, mode: 'update' | 'share' = 'update'): Promise<Selectable<Database[T]> | undefined> {
  if (typeof id !== 'string' || id === '' || impossibleId(id)) return undefined
  const query = trx.selectFrom(table as 'teams').selectAll().where('id', '=', id)
  return await (mode === 'update' ? query.forUpdate() : query.forKeyShare()).executeTakeFirst() as Selectable<Database[T]> | undefined
}

/**
 * Renames the row `id` (an organization, a user, a workspace): locked first, written only when the
 * name differs (a change that changes nothing writes nothing). The row after; undefined: none.
 */
export async function renameRow<T extends 'organizations' | 'users' | 'workspaces'> (trx: Kysely<Database>, table: T, id: string,
  column: T extends 'users' ? 'username' : 'name', value: string | undefined): Promise<Selectable<Database[T]> | undefined> {
  const row = await lockRow(trx, table, id) as Record<string, unknown> | undefined
  if (row === undefined || value === undefined || row[column] === value) return row as Selectable<Database[T]> | undefined
  return await trx.updateTable(table as 'users').set({ [column]: value }).where('id', '=', id)
    .returningAll().executeTakeFirstOrThrow() as unknown as Selectable<Database[T]>
}
