import { createHash } from 'node:crypto'
import { CompiledQuery, type Kysely } from 'kysely'

/**
 * A statement's text under a name: `pg` prepares a query config that carries a `name` once per
 * connection, then only binds and executes it. Kysely's PostgreSQL dialect hands a compiled
 * query's `sql` to the client as it is, so a query whose `sql` is one of these runs as a named
 * prepared statement on any `pg` pool — the host's own, unwrapped, included. Its text is what it
 * says as a string (a host's query log, say).
 */
export class NamedStatement {
  constructor (readonly text: string, readonly name: string) {}
  toString (): string { return this.text }
}

/** The same text is the same statement everywhere: its name is the digest of its text. */
export function statementNameOf (text: string): string {
  return `ta_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`
}

const unreadable = (): string => { throw new TypeError('a named statement, not text') }

/** The databases (Kysely handles) whose driver was seen to take a named statement. */
const takesNames = new WeakSet<Kysely<any>>()

/** Does this database's driver run `NamedStatement`s? Only what `notice` marked. */
export const takesNamedStatements = (db: Kysely<any>): boolean => takesNames.has(db)

/**
 * Asks the database once (unless not `enabled`) whether its driver takes a `NamedStatement`, and
 * remembers the answer for `db`: the plugin's hot statements (src/db/query-shapes.ts) are named
 * there from then on, so a host that hands the plugin the Kysely it already has gets them prepared
 * without knowing about it. Only Kysely's PostgreSQL dialect is asked (its connection hands the
 * query to a `pg`-like client as it is); another driver is never sent one — PGlite's, for one,
 * would be left with half a message — and its statements go as text, as they always did.
 */
export async function noticeNamedStatements<DB extends Kysely<any>> (db: DB, enabled = true): Promise<DB> {
  if (!enabled) return db
  const connection = await db.getExecutor().provideConnection(async (connection) => connection.constructor.name)
  if (connection !== 'PostgresConnection') return db
  // a probe that cannot be read as text: a client of strings only fails on it before it sends a byte
  const probe = Object.assign(new NamedStatement('select 1 as named', statementNameOf('select 1 as named')), { toString: unreadable })
  try {
    const { rows } = await db.executeQuery<{ named: number }>({ ...CompiledQuery.raw(''), sql: probe as unknown as string, parameters: [] })
    if (rows.length === 1 && Number(rows[0]!.named) === 1) takesNames.add(db)
  } catch {} // a client of strings only: the statements go as text
  return db
}
