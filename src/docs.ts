import type { FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'

/** Where the standalone app serves its API description and the page that renders it. */
export const OPENAPI_PATH = '/openapi.json'
export const DOCS_PATH = '/docs'

/**
 * OpenAPI 3 generated from the route schemas (register before the routes); shared schemas are
 * named components by their `$id`.
 */
export async function registerOpenApi (app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'team-access',
        version,
        description: "Team access to workspaces, wire-compatible with HCP Terraform's team-workspaces API. Every request but /ping needs `Authorization: Bearer <token>`; errors are JSON:API error documents, and whatever a caller may not see or do answers the same 404 as an id that does not exist."
      },
      tags: [
        { name: 'team-access', description: 'Which teams hold which privileges on which workspaces.' },
        { name: 'workspaces', description: 'Workspaces, read-only: what the Terraform provider reads before it grants access.' },
        { name: 'teams', description: 'Teams, read-only: what the Terraform provider reads before it grants access.' },
        { name: 'audit', description: 'Who changed which access, when.' },
        { name: 'discovery', description: 'What clients ask before they start.' }
      ],
      components: { securitySchemes: { bearerToken: { type: 'http', scheme: 'bearer', description: 'An organization, team or user token.' } } }
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    // only the API: health and discovery routes are not part of the contract
    transform: ({ schema, url }) => ({ schema: url.startsWith('/api/') ? schema : { ...schema, hide: true }, url })
  })
}

/**
 * /docs is where people paste a token to try the API: no other origin may frame it (clickjacking),
 * and its page runs only its own scripts. Swagger UI loads every script and style as a file of its
 * own (its CSP hashes are empty); its components set `style` attributes, hence `'unsafe-inline'`
 * for styles alone. No validator badge: it would fetch the document from another origin.
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'self'", "script-src 'self'", "script-src-attr 'none'", "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:", "font-src 'self' data:", "connect-src 'self'", "object-src 'none'",
  "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'"
].join('; ')

/** The interactive page at /docs and the document at /openapi.json (register after the routes). */
export async function registerDocsUi (app: FastifyInstance): Promise<void> {
  // an encapsulated scope: the headers go on the docs' routes, not on the API's
  await app.register(async (docs) => {
    docs.addHook('onSend', (_request, reply, payload, done) => {
      void reply.header('content-security-policy', DOCS_CONTENT_SECURITY_POLICY).header('x-frame-options', 'DENY')
      done(null, payload)
    })
    await docs.register(swaggerUi, { routePrefix: DOCS_PATH, uiConfig: { docExpansion: 'list', deepLinking: true, validatorUrl: null } })
  })
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger())
}
