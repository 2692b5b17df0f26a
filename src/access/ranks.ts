import { sql, type RawBuilder } from 'kysely'

/** A value's rank in its order (weakest first, from 1; a boolean 0 or 1), to compare by in SQL. */
export const rankOf = (value: RawBuilder<unknown>, values: readonly unknown[]): RawBuilder<number> =>
  typeof values[0] === 'boolean' ? sql<number>`(${value})::int` : sql<number>`array_position(${values}::text[], ${value})`

/** A level order's values, weakest first. */
export const byRank = (rank: Readonly<Record<string, number>>): string[] => Object.entries(rank).sort(([, a], [, b]) => a - b).map(([level]) => level)
