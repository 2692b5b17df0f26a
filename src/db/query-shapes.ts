import { createQueryId, type Compilable, type CompiledQuery } from 'kysely'

const SLOT = '\u0000team-access-slot:'

interface Shape {
  compiled: CompiledQuery
  /** each parameter: the index of the value it takes, or a constant of the shape */
  parameters: Array<{ slot: number } | { value: unknown }>
}

/**
 * Builds each query shape once and replays its SQL with new values, so a hot read costs no query
 * building or compiling (Kysely's builder is a tenth of a request's CPU otherwise) and the
 * prepared-statement name is found by key. A shape is built with a marker in place of every
 * value; each marker must come out as a bound parameter, never as part of the SQL text.
 */
export class QueryShapes {
  private readonly shapes = new Map<string, Shape>()

  compile (key: string, values: readonly unknown[], build: (slots: string[]) => Compilable): CompiledQuery {
    let shape = this.shapes.get(key)
    if (shape === undefined) {
      const compiled = build(values.map((_, i) => `${SLOT}${i}`)).compile()
      const parameters = compiled.parameters.map((p) => typeof p === 'string' && p.startsWith(SLOT) ? { slot: Number(p.slice(SLOT.length)) } : { value: p })
      values.forEach((_, i) => {
        if (!parameters.some((p) => 'slot' in p && p.slot === i)) throw new Error(`query shape ${key}: value ${i} is not a parameter`)
      })
      shape = { compiled, parameters }
      this.shapes.set(key, shape)
    }
    return {
      query: shape.compiled.query,
      queryId: createQueryId(),
      sql: shape.compiled.sql,
      parameters: shape.parameters.map((p) => 'slot' in p ? values[p.slot] : p.value)
    }
  }
}
