import { createQueryId, type Compilable, type CompiledQuery, type Kysely } from 'kysely'
import { NamedStatement, statementNameOf, takesNamedStatements } from './named-statements.js'

const SLOT = '\u0000team-access-slot:'

interface Shape {
  compiled: CompiledQuery
  /** its text under its name, for a driver that prepares named statements (./named-statements.ts) */
  named: NamedStatement
  /** each parameter: the index of the value it takes, or a constant of the shape */
  parameters: Array<{ slot: number } | { value: unknown }>
}

/**
 * Builds each query shape once and replays its SQL with new values, so a hot read costs no query
 * building or compiling (Kysely's builder is a tenth of a request's CPU otherwise) and the
 * prepared-statement name is found by key: on a `pg` pool of the host's own, where nothing else
 * names statements, the shape's SQL goes out as a `NamedStatement` (./named-statements.ts), so it
 * is parsed and planned once per connection. A shape is built with a marker in place of every
 * value; each marker must come out as a bound parameter, never as part of the SQL text.
 */
export class QueryShapes {
  private readonly shapes = new Map<string, Shape>()

  /** The query of shape `key` with `values`, as `db` (the handle it runs on) takes it best. */
  compile (db: Kysely<any>, key: string, values: readonly unknown[], build: (slots: string[]) => Compilable): CompiledQuery {
    let shape = this.shapes.get(key)
    if (shape === undefined) {
      const compiled = build(values.map((_, i) => `${SLOT}${i}`)).compile()
      const parameters = compiled.parameters.map((p) => typeof p === 'string' && p.startsWith(SLOT) ? { slot: Number(p.slice(SLOT.length)) } : { value: p })
      values.forEach((_, i) => {
        if (!parameters.some((p) => 'slot' in p && p.slot === i)) throw new Error(`query shape ${key}: value ${i} is not a parameter`)
      })
      shape = { compiled, parameters, named: new NamedStatement(compiled.sql, statementNameOf(compiled.sql)) }
      this.shapes.set(key, shape)
    }
    return {
      query: shape.compiled.query,
      queryId: createQueryId(),
      sql: takesNamedStatements(db) ? shape.named as unknown as string : shape.compiled.sql,
      parameters: shape.parameters.map((p) => 'slot' in p ? values[p.slot] : p.value)
    }
  }
}
