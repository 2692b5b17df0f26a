import type { ValidateFunction } from 'ajv'
import type { Static, TSchema } from '@sinclair/typebox'
import { DIRECTORY_SCHEMAS } from '../../schemas/directory.js'
import { createAjv, errorMessage, errorPointer } from '../validation.js'
import { DirectoryError } from './errors.js'

/** The host's input: checked against the TypeBox schemas of schemas/directory.ts, compiled once, on first use. */

type SchemaName = keyof typeof DIRECTORY_SCHEMAS
type Input<N extends SchemaName> = Static<typeof DIRECTORY_SCHEMAS[N]>

const validators = new Map<SchemaName, ValidateFunction>()
let ajv: ReturnType<typeof createAjv> | undefined

/**
 * The input, its undefined members dropped (absent and undefined mean the same), if the schema
 * accepts it; else a DirectoryError `invalid` naming what is wrong — for every call of the host's,
 * the directory's and the plugin's questions (src/plugin.ts) alike, so that no bad argument reaches
 * a statement.
 */
export function validated<N extends SchemaName> (name: N, value: unknown, what: string): Input<N> {
  let validate = validators.get(name)
  if (validate === undefined) {
    ajv ??= createAjv()
    validate = ajv.compile(DIRECTORY_SCHEMAS[name] as TSchema)
    validators.set(name, validate)
  }
  const input = withoutUndefined(value)
  if (!validate(input)) {
    const error = validate.errors![0]!
    const at = errorPointer(error).split('/').filter((part) => part !== '').join(' › ')
    throw new DirectoryError('invalid', `${what}${at === '' ? '' : ` › ${at}`}: ${errorMessage(error)}`)
  }
  return input as Input<N>
}

function withoutUndefined (value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Date) return value
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).map(([k, v]) => [k, withoutUndefined(v)]))
}

/** A date the host gives as a Date, as the schema takes it (an ISO string); an invalid Date is refused. */
export function isoDate (date: Date): string {
  if (Number.isNaN(date.getTime())) throw new DirectoryError('invalid', 'token › expiresAt: is not a valid date')
  return date.toISOString()
}
