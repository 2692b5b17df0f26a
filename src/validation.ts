import { Ajv, type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import fjsCompiler from '@fastify/fast-json-stringify-compiler'

// ajv-formats is CommonJS with a default export; NodeNext sees the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default

/**
 * One Ajv for our schemas: unknown members are rejected, never stripped (`removeAdditional: false`
 * with `additionalProperties: false`), and nothing is coerced or defaulted behind the caller's back.
 *
 * The schemas are the package's own, the same on every start: whether each is a valid JSON
 * Schema is checked once, by test/validation.test.ts, not on every start (`validateSchema: false`
 * spares each Ajv compiling the draft-07 meta-schema, ~60 ms, before its first schema).
 */
export function createAjv (): Ajv {
  const ajv = new Ajv({
    allErrors: false,
    removeAdditional: false,
    useDefaults: false,
    coerceTypes: false,
    strict: false,
    validateSchema: false
  })
  addFormats(ajv)
  return ajv
}

/**
 * For setValidatorCompiler: each route's schema compiled by `ajv` when a request first needs it,
 * not all of them while the app starts (~30 schemas, a third of a start's CPU). The same schema
 * object is compiled once however many routes use it (Ajv caches by schema identity), and it
 * validates exactly as compiled at start would: none of our Ajv options changes the data.
 */
export function compileOnFirstUse (ajv: Ajv): (route: { schema: unknown }) => ((data: unknown) => boolean) & { errors?: ErrorObject[] | null } {
  return ({ schema }) => {
    let compiled: ValidateFunction | undefined
    const validate = Object.assign((data: unknown): boolean => {
      compiled ??= ajv.compile(schema as AnySchema)
      const valid = compiled(data) as boolean
      validate.errors = compiled.errors
      return valid
    }, { errors: null as ErrorObject[] | null | undefined })
    return validate
  }
}

/**
 * Fastify's own response serializer factory (fast-json-stringify), compiling each response schema
 * once: Fastify asks for a serializer per route and status code, and most of them share a schema
 * object (the error document on every route, a resource's document on its GET, POST and PATCH).
 * The serializer depends on the schema and on the factory's options alone, so one compiled for
 * that schema object serves every route. For `schemaController.compilersFactory.buildSerializer`.
 */
export function buildSerializerOncePerSchema (): fjsCompiler.SerializerFactory {
  const build = fjsCompiler.SerializerSelector()
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options)
    const compiled = new WeakMap<object, fjsCompiler.Serializer>()
    return (route) => {
      const schema = route.schema
      if (typeof schema !== 'object' || schema === null) return compile(route)
      let serializer = compiled.get(schema)
      if (serializer === undefined) {
        serializer = compile(route)
        compiled.set(schema, serializer)
      }
      return serializer
    }
  }
}

/** The JSON pointer an Ajv error is about, including the member that is missing or unexpected. */
export function errorPointer (error: ErrorObject): string {
  const params = error.params as { missingProperty?: string, additionalProperty?: string }
  const member = params.missingProperty ?? params.additionalProperty
  return member === undefined ? error.instancePath : `${error.instancePath}/${escapePointer(member)}`
}

/**
 * A sentence for an Ajv error, naming the unexpected member where there is one. It follows the
 * error's pointer (errorPointer), which already ends in a missing member: that one "is required".
 */
export function errorMessage (error: ErrorObject): string {
  const params = error.params as { additionalProperty?: string, missingProperty?: string, allowedValues?: unknown[], format?: string }
  if (params.additionalProperty !== undefined) return `unknown member "${params.additionalProperty}"`
  if (params.missingProperty !== undefined) return 'is required'
  if (error.keyword === 'format' && params.format === 'date-time') return 'must be an RFC 3339 date-time (like 2027-01-31T00:00:00Z)'
  if (params.allowedValues !== undefined) return `must be one of ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
  return error.message ?? 'is invalid'
}

const escapePointer = (member: string): string => member.replace(/~/g, '~0').replace(/\//g, '~1')
