import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AuditTrailQuery, description, responses } from '../../schemas/audit.js'
import { trailOf } from '../access/audit-readers.js'
import { ApiError, notFound } from '../jsonapi/errors.js'
import { parseAuditPage, parseSince } from './audit-query.js'
import type { AuditRepository } from './audit-repository.js'
import { auditTrail, toEvent } from './audit-serialize.js'

/**
 * `GET /organization/audit-trail` (DESIGN §8), HCP Terraform's audit-trail API as go-tfe's
 * `AuditTrails.List` reads it. Registered after authentication like every route: the caller is
 * whoever the token (or the host's `authenticate`) says; its owners read an organization's trail
 * (src/access/audit-readers.ts), and anyone else gets the ordinary 404.
 */
const auditRoutes: FastifyPluginAsyncTypebox<{ repository: AuditRepository }> = async (app, { repository }) => {
  app.get('/organization/audit-trail', {
    schema: { tags: ['audit'], operationId: 'listAuditTrail', summary: "Read the organization's audit trail", querystring: AuditTrailQuery, description, security: [{ bearerToken: [] }], response: responses },
    // plain JSON, as HCP Terraform serves it; its errors stay JSON:API error documents. A page
    // is up to 1,000 events: one caller's pages are served one at a time (src/limits/admission.ts)
    config: { plainJson: true, onePerCaller: true }
  }, async (request, reply) => {
    const { since, 'page[number]': number, 'page[size]': size, organization } = request.query
    const after = parseSince(since)
    const page = parseAuditPage(number, size)
    const choice = trailOf(await repository.ownedOrganizations(request.caller, organization))
    if ('refusal' in choice) {
      if (choice.refusal === 'none') throw notFound()
      throw new ApiError(422, 'invalid parameter', 'this token owns several organizations: name one with organization=<its name>', { parameter: 'organization' })
    }
    const { organizationId } = choice
    const trail = await repository.page(request.caller, organizationId, after, page)
    if (trail === undefined) throw notFound()
    const { rows, total } = trail
    return await reply.type('application/json').send(auditTrail(rows.map(toEvent), page, total))
  })
}

export default auditRoutes
