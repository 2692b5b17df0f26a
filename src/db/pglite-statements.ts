import { parse as results, protocol, type PGlite, type Results } from '@electric-sql/pglite'

/**
 * PGlite with named prepared statements, for Kysely's PGlite dialect (`query` and `close` are all
 * it calls).
 *
 * PGlite's own `query` parses, analyses and plans every statement anew (an unnamed statement of the
 * extended protocol). The authorization CTEs every request runs cost far more to plan than to run:
 * on PGlite a team-access show planned each time took 3.4 ms, prepared 0.8 ms; a workspace's list
 * 4.8 ms, prepared 1.6 ms. So, as on the server (`preparedStatements` in ./connect.ts), each query
 * shape is parsed once under a name and then only bound and executed; PostgreSQL's plan cache
 * decides, as on any server, when a generic plan serves.
 *
 * The same statement text is the same statement: its parameter types are described once. Past
 * `maxNamed` shapes (seed files with lists of every length) a statement runs unnamed, as PGlite
 * runs it. DDL changes what a prepared `select *` returns ("cached plan must not change result
 * type"), so a statement that is not a query (a migration's, say) runs unnamed and forgets every
 * prepared statement after it.
 */
export interface PreparedPGlite {
  query: <T>(text: string, params?: unknown[]) => Promise<Results<T>>
  close: () => Promise<void>
}

const { serialize } = protocol
/** Statements worth a name: queries and writes (a CTE may write too). Anything else is DDL, transaction control or settings. */
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i
const TRANSACTION_CONTROL = /^\s*(begin|start|commit|rollback|end|savepoint|release)\b/i

interface Statement { name: string, paramTypes: number[] }

export function preparedPGlite (pglite: PGlite, maxNamed = 500): PreparedPGlite {
  const statements = new Map<string, Statement>()
  let counter = 0
  const send = async (message: Uint8Array) => await pglite.execProtocolStream(message, { syncToFs: false })

  /** Parses `text` under `name` ('' for the unnamed statement) and describes its parameters. */
  async function prepare (text: string, name: string): Promise<Statement> {
    await send(serialize.parse({ name, text, types: [] }))
    const paramTypes = results.parseDescribeStatementResults(await send(serialize.describe({ type: 'S', name })))
    return { name, paramTypes }
  }

  async function run<T> (text: string, params: unknown[]): Promise<Results<T>> {
    const messages = []
    let forget = false
    try {
      let statement = statements.get(text)
      if (statement === undefined) {
        const named = PREPARABLE.test(text) && statements.size < maxNamed
        forget = !named && !PREPARABLE.test(text) && !TRANSACTION_CONTROL.test(text)
        statement = await prepare(text, named ? `ta_${++counter}` : '')
        if (named) statements.set(text, statement)
      }
      const values = params.map((value, i) => {
        if (value === null || value === undefined) return null
        const serializer = pglite.serializers[statement.paramTypes[i] ?? 0]
        return serializer === undefined ? String(value) : serializer(value)
      })
      messages.push(...await send(serialize.bind({ statement: statement.name, values })))
      messages.push(...await send(serialize.describe({ type: 'P' })))
      messages.push(...await send(serialize.execute({})))
    } finally {
      messages.push(...await send(serialize.sync()))
    }
    if (forget && statements.size > 0) {
      statements.clear()
      await send(serialize.query('deallocate all'))
    }
    await pglite.syncToFs()
    return results.parseResults(messages, pglite.parsers)[0] as Results<T>
  }

  return {
    // a statement the plugin named (./named-statements.ts) is its text here: PGlite names its own
    query: async <T>(text: string, params: unknown[] = []) => await pglite.runExclusive(async () => await run<T>(String(text), params)),
    close: async () => await pglite.close()
  }
}
