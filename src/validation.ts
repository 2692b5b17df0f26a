import { Ajv, type ErrorObject } from 'ajv'
import addFormatsModule from 'ajv-formats'

// ajv-formats is CommonJS with a default export; NodeNext sees the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default

/**
 * One Ajv for our schemas: unknown members are rejected, never stripped (`removeAdditional: false`
 * with `additionalProperties: false`), and nothing is coerced or defaulted behind the caller's back.
 */
export function createAjv (): Ajv {
  const ajv = new Ajv({
    allErrors: false,
    removeAdditional: false,
    useDefaults: false,
    coerceTypes: false,
    strict: false
  })
  addFormats(ajv)
  return ajv
}

/** The JSON pointer an Ajv error is about, including the member that is missing or unexpected. */
export function errorPointer (error: ErrorObject): string {
  const params = error.params as { missingProperty?: string, additionalProperty?: string }
  const member = params.missingProperty ?? params.additionalProperty
  return member === undefined ? error.instancePath : `${error.instancePath}/${escapePointer(member)}`
}

/** A sentence for an Ajv error, naming the unexpected member where there is one. */
export function errorMessage (error: ErrorObject): string {
  const params = error.params as { additionalProperty?: string, allowedValues?: unknown[] }
  if (params.additionalProperty !== undefined) return `unknown member "${params.additionalProperty}"`
  if (params.allowedValues !== undefined) return `must be one of ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
  return error.message ?? 'is invalid'
}

const escapePointer = (member: string): string => member.replace(/~/g, '~0').replace(/\//g, '~1')
