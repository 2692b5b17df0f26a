import t from 'tap'
import Fastify from 'fastify'
import teamAccess, { applySeed, connect, migrate, type Caller } from '../../src/index.js'
import { freshLocation, ENGINE } from '../helper.js'
import { addBody } from '../team-workspaces/client.js'
import { TOKENS, world } from '../fixtures/world.js'
import { trailClient } from './trail-client.js'

/**
 * Embedded, the audit trail is part of the plugin: under the host's prefix, at
 * organization/audit-trail, and the host's `authenticate` decides who the caller is, as for
 * every other route.
 */
t.test(`the audit trail in a host app, under its prefix, with its authentication, on ${ENGINE}`, async (t) => {
  const { db, close } = await connect(await freshLocation(t))
  t.teardown(close)
  await migrate(db)
  await applySeed(db, world)
  // the host's own request ids: from its tracing header
  const host = Fastify({ genReqId: (request) => `trace-${String(request.headers['x-trace'] ?? 'none')}` })
  // the host's gateway says who calls: an organization (x-org) or a user (x-user)
  const authenticate = (request: { headers: Record<string, unknown> }): Caller | null =>
    typeof request.headers['x-org'] === 'string'
      ? { kind: 'organization', organizationId: request.headers['x-org'] }
      : typeof request.headers['x-user'] === 'string' ? { kind: 'user', userId: request.headers['x-user'] } : null
  await host.register(teamAccess, { prefix: '/tfe/api/v2', database: db, authenticate, migrate: false })
  t.teardown(() => host.close())
  const trail = trailClient(t, host, '/tfe/api/v2/organization/audit-trail')
  const read = (headers: Record<string, string>) => host.inject({ url: '/tfe/api/v2/organization/audit-trail', headers })

  t.test('a write through the host is recorded with the host’s caller and request id', async (t) => {
    const res = await host.inject({
      method: 'POST', url: '/tfe/api/v2/team-workspaces', headers: { 'x-user': 'user-owner', 'x-trace': 'abc123', 'content-type': 'application/vnd.api+json' }, payload: addBody('team-green', 'ws-dev', { access: 'read' })
    })
    t.equal(res.statusCode, 200)
    const events = (await read({ 'x-org': 'org-acme' })).json().data
    t.match(events.at(-1), { auth: { accessor_id: 'user-owner', description: 'owner', type: 'Client' }, resource: { id: 'ws-dev', action: 'add_team', meta: { team: 'green' } } })
    t.equal(events.at(-1).request.id, 'trace-abc123', 'the host’s request id')
  })

  t.test('an organization the host authenticates reads its trail, and so does an owner; anyone else does not', async (t) => {
    const res = await read({ 'x-org': 'org-acme' })
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^application\/json/)
    t.equal(res.json().pagination.total_count, 5, 'the seed’s four grants and the add')
    t.same((await read({ 'x-user': 'user-owner' })).json(), res.json(), 'an owner: the organization’s trail (DESIGN §8)')
    t.equal((await read({ 'x-user': 'user-writer' })).statusCode, 404, 'a member who is no owner')
    t.equal((await read({})).statusCode, 401, 'the host’s authenticate said null')
    t.equal((await trail.read(TOKENS.organization)).statusCode, 401, 'bearer tokens mean nothing when the host authenticates')
  })
})
