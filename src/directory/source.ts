import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type RawBuilder } from 'kysely'
import { callerGrants } from '../access/grants.js'
import type { Caller } from '../auth/caller.js'
import { accessorOf as callerAccessor, type Accessor } from '../audit/audit-record.js'
import type { Database, ManagedBy } from '../db/database.js'

/**
 * Who asks for a change to the directory (DESIGN §9.1), the first argument of every change in
 * src/directory/: the seed (System, `seed`), the host (System, its actor; trusted code), a mirror
 * run (Mirror, the host it reads: DESIGN §13.3) or an API caller, whose permission the change's own statement decides. A change records its audit events
 * with the source's accessor and request id, and a row it creates is managed by the source.
 */
export type ChangeSource =
  | { by: 'seed', requestId: string }
  | { by: 'host', actor: string, requestId: string }
  | { by: 'api', caller: Caller, requestId: string }
  | { by: 'mirror', host: string, requestId: string }

export const seedSource = (): ChangeSource => ({ by: 'seed', requestId: randomUUID() })

export const apiSource = (caller: Caller, requestId: string): ChangeSource & { by: 'api' } => ({ by: 'api', caller, requestId })

/** Who the audit events name: the caller behind the token, or the system (`seed`, the host's actor). */
export const accessorOf = (source: ChangeSource): Accessor => {
  switch (source.by) {
    case 'api': return callerAccessor(source.caller)
    case 'host': return { kind: 'system', description: source.actor }
    case 'seed': return { kind: 'system', description: 'seed' }
    case 'mirror': return { kind: 'mirror', description: source.host }
  }
}

/** The source a row created by this change is managed by. */
export const managedBy = (source: ChangeSource): ManagedBy => source.by

/** An API caller's grants, the first CTE of its statement (with a comma after it), which the predicates read; nothing for the trusted sources. */
export const grantsOf = (db: Kysely<Database>, source: ChangeSource): RawBuilder<unknown> =>
  source.by === 'api' ? sql`grants as (${callerGrants(db, source.caller)}),` : sql``

/** What an API caller must hold, decided in the statement (`predicate` reads its grants); the seed and the host are trusted. */
export const mayIf = (source: ChangeSource, predicate: RawBuilder<boolean>): RawBuilder<boolean> => source.by === 'api' ? predicate : sql<boolean>`true`
