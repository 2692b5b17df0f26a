import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  accessSetDescriptions, accessSetResponses, AccessSetParams, PutAccessSetBody, PutAccessSetHeaders, PutAccessSetQuery
} from '../../schemas/access-set.js'
import { ApiError, ApiErrors, invalidAttribute, notFound } from '../jsonapi/errors.js'
import { AccessSetError, readWorkspaceAccess, setWorkspaceAccess, type AccessSetEntry, type AccessSetProblem } from './access-set.js'
import type { AccessSetRepository } from './access-set-repository.js'
import { toResource } from './team-workspaces-serialize.js'

const tags = ['team-access']
const security = [{ bearerToken: [] }]
const produces = ['application/vnd.api+json']
const consumes = ['application/vnd.api+json', 'application/json']
/** Marks the operations that HCP Terraform does not have (DESIGN §10). */
const extension = { 'x-team-access-extension': true }

/**
 * A workspace's access set (DESIGN §10.1): `GET` and `PUT /workspaces/:id/team-access`. Thin: the
 * flow is src/team-workspaces/access-set.ts, the same the host's `setWorkspaceAccess` runs; its
 * refusals become the 404 of a missing id, a 412, or 422s that point at their entries.
 */
const accessSetRoutes: FastifyPluginAsyncTypebox<{ repository: AccessSetRepository }> = async (app, { repository }) => {
  const prefix = app.prefix

  app.get('/workspaces/:id/team-access', {
    schema: { tags, operationId: 'showWorkspaceAccessSet', summary: "A workspace's team access, as one set (extension)", params: AccessSetParams, description: accessSetDescriptions.show, security, produces, response: accessSetResponses.show, ...extension }
  }, async (request, reply) => {
    const set = await readWorkspaceAccess(repository, request.caller, request.params.id)
    if (set === undefined) throw notFound()
    void reply.header('etag', set.etag)
    return { data: set.rows.map((row) => toResource(row, prefix)) }
  })

  app.put('/workspaces/:id/team-access', {
    schema: { tags, operationId: 'replaceWorkspaceAccessSet', summary: "Replace a workspace's team access with a complete set (extension)", params: AccessSetParams, querystring: PutAccessSetQuery, headers: PutAccessSetHeaders, body: PutAccessSetBody, description: accessSetDescriptions.put, security, consumes, produces, response: accessSetResponses.put, ...extension }
  }, async (request, reply) => {
    const workspaceId = request.params.id
    const entries = request.body.data.map((entry, index): AccessSetEntry => {
      const named = entry.relationships.workspace?.data.id
      if (named !== undefined && named !== workspaceId) throw invalidAttribute('The workspace of an entry must be the workspace of the path.', `/data/${index}/relationships/workspace`)
      return { ...entry.attributes, teamId: entry.relationships.team.data.id }
    })
    try {
      const outcome = await setWorkspaceAccess(repository, {
        caller: request.caller, workspaceId, entries, dryRun: request.query['dry-run'] === 'true', ifMatch: request.headers['if-match'], requestId: request.id
      })
      void reply.header('etag', outcome.etag)
      return { data: outcome.rows.map((row) => toResource(row, prefix)), meta: { changes: outcome.changes, 'dry-run': outcome.dryRun } }
    } catch (err) {
      if (!(err instanceof AccessSetError)) throw err
      if (err.code === 'not-found') throw notFound()
      if (err.code === 'precondition-failed') throw new ApiError(412, 'precondition failed', 'The team access of the workspace has changed since the ETag in If-Match; read it again.')
      const [first, ...rest] = err.problems.map((problem) => invalidAttribute(problem.detail, pointer(problem)))
      // no entry at fault: the set as a whole (a mirrored organization's, DESIGN §13.3)
      throw first === undefined ? invalidAttribute(err.message, '/data') : new ApiErrors([first, ...rest])
    }
  })
}

/** Where a problem is in the request's document. */
function pointer ({ entry, member }: AccessSetProblem): string {
  if (member === undefined) return `/data/${entry}`
  if (member === 'team' || member === 'workspace') return `/data/${entry}/relationships/${member}`
  return `/data/${entry}/attributes/${member}`
}

export default accessSetRoutes
