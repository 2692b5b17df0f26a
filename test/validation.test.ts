import t from 'tap'
import Fastify from 'fastify'
import { Ajv } from 'ajv'
import { Type } from '@sinclair/typebox'
import teamAccess from '../src/plugin.js'
import { buildSerializerOncePerSchema, createAjv } from '../src/validation.js'
import { SeedDocument } from '../schemas/seed.js'
import { HostAccessSetEntries } from '../schemas/access-set.js'
import { DIRECTORY_SCHEMAS } from '../schemas/directory.js'
import { freshDatabase } from './helper.js'

// createAjv() does not check the schemas it compiles against the JSON Schema meta-schema (on
// every start, for schemas that never change): this does, once, for every one it compiles.
t.test('every schema the package validates with is a valid JSON Schema', async (t) => {
  const { db } = await freshDatabase(t)
  const app = Fastify({ logger: false })
  t.teardown(() => app.close())
  const schemas: Array<[string, unknown]> = []
  app.addHook('onRoute', (route) => {
    for (const part of ['body', 'querystring', 'params', 'headers'] as const) {
      const schema = (route.schema as Record<string, unknown> | undefined)?.[part]
      if (schema !== undefined) schemas.push([`${String(route.method)} ${route.url} ${part}`, schema])
    }
  })
  await app.register(teamAccess, { prefix: '/api/v2', database: db, migrate: false })
  await app.ready()
  schemas.push(['seed document', SeedDocument], ['access set entries', HostAccessSetEntries],
    ...Object.entries(DIRECTORY_SCHEMAS).map(([name, schema]): [string, unknown] => [`directory ${name}`, schema]))
  t.ok(schemas.length > 40, `${schemas.length} schemas`)
  const checker = new Ajv({ strict: false })
  const invalid = schemas.filter(([, schema]) => !checker.validateSchema(schema as object))
  t.same(invalid.map(([name]) => name), [], 'each is valid against the draft-07 meta-schema')
  // and each compiles with the service's own Ajv (its patterns, formats and references), as a
  // route's first request will compile it
  const ajv = createAjv()
  const failing = schemas.filter(([, schema]) => {
    try {
      ajv.compile(schema as object)
      return false
    } catch {
      return true
    }
  })
  t.same(failing.map(([name]) => name), [], 'each compiles with createAjv()')
})

t.test('a response schema shared by several routes is compiled into one serializer', async (t) => {
  const compile = buildSerializerOncePerSchema()({}, {})
  const shared = Type.Object({ a: Type.String() })
  const route = (url: string, schema: unknown) => ({ method: 'GET', url, httpStatus: '200', schema })
  const first = compile(route('/one', shared))
  t.equal(compile(route('/two', shared)), first, 'the same function for the same schema object')
  const other = compile(route('/three', Type.Object({ b: Type.Number() })))
  t.not(other, first, 'another for another schema')
  t.equal(first({ a: 'x', extra: 1 }), '{"a":"x"}', 'and it serializes as fast-json-stringify does')
  t.equal(other({ b: 2 }), '{"b":2}')
})
