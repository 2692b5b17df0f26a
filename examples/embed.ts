/**
 * Embedding team-access in your own Fastify app: your routes, your authentication, your
 * database handle; the team-access API mounted under a prefix of your choosing,
 * `app.teamAccess.effectiveAccess` answering "may this caller do X here?" for your own routes,
 * and `app.teamAccess.directory` keeping team-access's directory in step with your app's: a
 * member added, a team removed — one call each, one transaction, audited.
 *
 *   npm run build && node dist/examples/embed.js      # serves on 127.0.0.1:3001, PGlite in memory
 */
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import teamAccess, { applySeed, connect, DirectoryError, migrate, type Caller, type Database, type DirectoryErrorCode, type SeedDocument } from 'team-access'
import type { Kysely } from 'kysely'

/** Your own authentication: here, a trusted header set by your gateway. Return null for 401. */
async function authenticate (request: FastifyRequest): Promise<Caller | null> {
  const user = request.headers['x-user-id']
  return typeof user === 'string' && user.startsWith('user-') ? { kind: 'user', userId: user } : null
}

export async function buildHost (db: Kysely<Database>, options: { withTeamAccess?: boolean } = {}): Promise<FastifyInstance> {
  const app = Fastify()

  // your error format, for your routes
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    void reply.status(error.statusCode ?? 500).send({ ok: false, message: error.message })
  })
  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send({ ok: false, message: `no route ${request.method} ${request.url}` })
  })

  app.get('/hello', async () => ({ ok: true }))
  app.post<{ Body: { say: string } }>('/echo', {
    schema: { body: { type: 'object', required: ['say'], properties: { say: { type: 'string' } } } }
  }, async (request) => ({ ok: true, said: request.body.say }))

  if (options.withTeamAccess ?? true) {
    // migrations are yours to run here, since the database handle is yours
    await app.register(teamAccess, { prefix: '/tfe/api/v2', database: db, authenticate, migrate: false })

    // your route, guarded by team access: may this user apply runs on this workspace?
    app.post<{ Params: { id: string } }>('/workspaces/:id/apply', async (request, reply) => {
      const caller = await authenticate(request)
      if (caller === null) return await reply.status(401).send({ ok: false, message: 'who are you?' })
      const { id } = request.params
      const { access, permissions } = await app.teamAccess.effectiveAccess({ caller, workspaceId: id })
      if (permissions?.runs !== 'apply') return await reply.status(403).send({ ok: false, message: 'no apply here', access })
      return { ok: true, access }
    })

    // your admin pages change your directory, and tell team-access in the same breath; the
    // audit trail names the admin (System, actor) and your request id
    app.put<{ Params: { teamId: string, userId: string } }>('/admin/teams/:teamId/members/:userId', async (request, reply) => {
      const caller = await authenticate(request)
      if (caller?.kind !== 'user') return await reply.status(401).send({ ok: false, message: 'who are you?' })
      const { teamId, userId } = request.params
      try {
        const membership = await app.teamAccess.directory.addMember({ teamId, userId }, { actor: caller.userId, requestId: request.id })
        return { ok: true, membership }
      } catch (err) {
        return await refuse(reply, err)
      }
    })
    app.delete<{ Params: { teamId: string } }>('/admin/teams/:teamId', async (request, reply) => {
      const caller = await authenticate(request)
      if (caller?.kind !== 'user') return await reply.status(401).send({ ok: false, message: 'who are you?' })
      const { teamId } = request.params
      try {
        // its memberships, tokens and team access go with it
        await app.teamAccess.directory.removeTeam(teamId, { actor: caller.userId, requestId: request.id })
        return { ok: true }
      } catch (err) {
        return await refuse(reply, err)
      }
    })
  }
  return app
}

/** A directory refusal in your error format: not found, a conflict, or a rule (the owners team's). */
const STATUS: Record<DirectoryErrorCode, number> = { 'not-found': 404, conflict: 409, invalid: 422 }
async function refuse (reply: FastifyReply, err: unknown): Promise<FastifyReply> {
  if (!(err instanceof DirectoryError)) throw err
  return await reply.status(STATUS[err.code]).send({ ok: false, message: err.message })
}

/** The directory your app keeps in sync with team-access, in the seed format. */
export const directory: SeedDocument = {
  users: [{ id: 'user-ann', username: 'ann' }, { id: 'user-ben', username: 'ben' }],
  organizations: [{
    id: 'org-shop',
    name: 'shop',
    teams: [
      { id: 'team-platform', name: 'platform', owners: true, members: ['ann'] },
      { id: 'team-web', name: 'web', visibility: 'organization', members: ['ben'] }
    ],
    workspaces: [{ id: 'ws-WebProduction001', name: 'web-prod' }],
    'team-access': [{ team: 'web', workspace: 'web-prod', access: 'plan' }]
  }]
}

// run directly: a host on an in-memory PGlite
if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/.*\//, '/'))) {
  const { db } = await connect({ dataDir: 'memory://' })
  await migrate(db)
  await applySeed(db, directory)
  const app = await buildHost(db)
  // a script may write the directory too: the same functions, on the app or on a database handle (`directory(db)`)
  const cy = await app.teamAccess.directory.createUser({ username: 'cy' }, { actor: 'example' })
  await app.listen({ port: 3001 })
  console.log('try: curl -H "x-user-id: user-ann" "http://127.0.0.1:3001/tfe/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-WebProduction001"')
  console.log(`     curl -X PUT -H "x-user-id: user-ann" http://127.0.0.1:3001/admin/teams/team-web/members/${cy.id}`)
  console.log('     curl -X DELETE -H "x-user-id: user-ann" http://127.0.0.1:3001/admin/teams/team-web')
}
