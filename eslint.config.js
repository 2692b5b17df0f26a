import neostandard from 'neostandard'

// The Fastify team's style (standard, with TypeScript), for everything we write.
export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'data/**', 'coverage/**', '.tap/**', 'schemas/openapi.json'] }),
  {
    rules: {
      // TypeBox's idiom: a schema and its static type share one name
      '@typescript-eslint/no-redeclare': 'off',
      // columns are PostgreSQL's snake_case (mapped to the wire's kebab-case in one place)
      camelcase: 'off',
      // `void reply.send()`: a promise deliberately not awaited, said so
      'no-void': ['error', { allowAsStatement: true }]
    }
  }
]
