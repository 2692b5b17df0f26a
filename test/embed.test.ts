import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
// the package by its own name, as a host imports it (package.json "exports" → dist/)
import { applySeed, connect, directory as directoryOf, DirectoryError, migrate } from 'team-access'
import { buildHost, directory } from '../examples/embed.js'
import { freshLocation, ENGINE } from './helper.js'
import { validateResponse } from './openapi.js'

const API = '/tfe/api/v2/team-workspaces'

/** A migrated database of the test's own with the example's directory, closed when the test ends. */
async function seededDatabase (t: Test) {
  const { db, close } = await connect(await freshLocation(t))
  t.teardown(close)
  await migrate(db)
  await applySeed(db, directory)
  return db
}
const ann = { 'x-user-id': 'user-ann' } // owner
const ben = { 'x-user-id': 'user-ben' } // member of web (plan on web-prod)

t.test(`embedded in a host app (examples/embed.ts) on ${ENGINE}`, async (t) => {
  const db = await seededDatabase(t)
  const host = await buildHost(db)
  t.teardown(() => host.close())

  t.test('the five operations work under the host’s prefix, with the host’s authentication', async (t) => {
    const list = await host.inject({ url: `${API}?filter%5Bworkspace%5D%5Bid%5D=ws-WebProduction001`, headers: ann })
    t.equal(list.statusCode, 200)
    t.ok(validateResponse('list', list.json()).valid)
    const [row] = list.json().data
    t.equal(row.links.self, `${API}/${row.id}`, 'links follow the custom prefix')
    t.equal(row.relationships.team.links.related, '/tfe/api/v2/teams/team-web')
    t.equal(row.relationships.workspace.links.related, '/tfe/api/v2/organizations/shop/workspaces/web-prod')

    const shown = await host.inject({ url: `${API}/${row.id}`, headers: ben })
    t.equal(shown.statusCode, 200, 'a member sees the row of a visible team')
    t.ok(validateResponse('show', shown.json()).valid)

    const added = await host.inject({
      method: 'POST',
      url: API,
      headers: { ...ann, 'content-type': 'application/vnd.api+json' },
      payload: { data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { team: { data: { type: 'teams', id: 'team-platform' } }, workspace: { data: { type: 'workspaces', id: 'ws-WebProduction001' } } } } }
    })
    t.equal(added.statusCode, 200)
    t.ok(validateResponse('add', added.json()).valid)
    const id = added.json().data.id

    const updated = await host.inject({ method: 'PATCH', url: `${API}/${id}`, headers: { ...ann, 'content-type': 'application/json' }, payload: { data: { attributes: { access: 'write' } } } })
    t.equal(updated.statusCode, 200)
    t.equal(updated.json().data.attributes.access, 'write')

    const denied = await host.inject({ method: 'DELETE', url: `${API}/${id}`, headers: ben })
    t.equal(denied.statusCode, 404, 'a member may not remove')
    const removed = await host.inject({ method: 'DELETE', url: `${API}/${id}`, headers: ann })
    t.equal(removed.statusCode, 204)

    const anonymous = await host.inject({ url: `${API}/${id}` })
    t.equal(anonymous.statusCode, 401, 'the host’s authenticate returned null')
    t.same(anonymous.json(), { errors: [{ status: '401', title: 'unauthorized' }] })
    const ping = await host.inject('/tfe/api/v2/ping')
    t.equal(ping.statusCode, 204)
  })

  t.test('the host’s routes behave exactly as without the plugin', async (t) => {
    const bare = await buildHost(db, { withTeamAccess: false })
    t.teardown(() => bare.close())
    const requests = [
      { method: 'GET', url: '/hello' },
      { method: 'POST', url: '/echo', payload: { say: 'hi' } },
      { method: 'POST', url: '/echo', payload: { nope: 1 } },
      { method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '{bad' },
      { method: 'POST', url: '/echo', headers: { 'content-type': 'text/plain' }, payload: 'hi' },
      { method: 'POST', url: '/echo', headers: { 'content-type': 'application/vnd.api+json' }, payload: '{"say":"hi"}' },
      { method: 'GET', url: '/nope' },
      { method: 'GET', url: '/tfe/other' }
    ] as const
    for (const request of requests) {
      const [a, b] = await Promise.all([bare.inject(request as any), host.inject(request as any)])
      t.equal(b.statusCode, a.statusCode, `${request.method} ${request.url}: status`)
      t.equal(b.body, a.body, `${request.method} ${request.url}: body`)
      t.equal(b.headers['content-type'], a.headers['content-type'], `${request.method} ${request.url}: content type`)
    }
  })

  t.test('a host route asks effectiveAccess', async (t) => {
    const owner = await host.inject({ method: 'POST', url: '/workspaces/ws-WebProduction001/apply', headers: ann })
    t.same(owner.json(), { ok: true, access: 'admin' })
    const planner = await host.inject({ method: 'POST', url: '/workspaces/ws-WebProduction001/apply', headers: ben })
    t.equal(planner.statusCode, 403)
    t.same(planner.json(), { ok: false, message: 'no apply here', access: 'plan' })
  })

  t.test('the host writes its directory through app.teamAccess.directory: a member added, a team removed', async (t) => {
    const { directory: dir } = host.teamAccess
    const cy = await dir.createUser({ username: 'cy', id: 'user-cy' })
    t.equal(cy.managedBy, 'host')
    const cyToken = await dir.createToken({ userId: cy.id })
    const webToken = await dir.createToken({ teamId: 'team-web' }, { description: 'deploys' })
    // the same API with its own bearer tokens, beside the host's header authentication
    const { default: Fastify } = await import('fastify')
    const { default: teamAccess } = await import('team-access')
    const bearerHost: FastifyInstance = Fastify()
    await bearerHost.register(teamAccess, { prefix: '/api/v2', database: db, migrate: false })
    t.teardown(() => bearerHost.close())
    const list = (token: string) => bearerHost.inject({ url: '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-WebProduction001', headers: { authorization: `Bearer ${token}` } })
    const access = async (userId: string) => (await host.teamAccess.effectiveAccess({ caller: { kind: 'user', userId }, workspaceId: 'ws-WebProduction001' })).access
    // the events recorded since the last call
    const seen = new Set<string>()
    const events = async () => {
      const fresh = (await db.selectFrom('audit_events').selectAll().orderBy('occurred_at').orderBy('id').execute()).filter((e) => !seen.has(e.id))
      for (const e of fresh) seen.add(e.id)
      return fresh
    }
    await events()

    t.equal((await list(cyToken.secret)).statusCode, 404, 'cy, in no team, sees nothing')
    t.equal(await access(cy.id), null)
    t.equal((await list(webToken.secret)).statusCode, 200, 'the team token the host made works')

    const added = await host.inject({ method: 'PUT', url: `/admin/teams/team-web/members/${cy.id}`, headers: ann })
    t.same(added.json(), { ok: true, membership: { teamId: 'team-web', userId: cy.id, managedBy: 'host' } })
    const sees = await list(cyToken.secret)
    t.equal(sees.statusCode, 200, 'the new member’s token sees what the team grants')
    t.same(sees.json().data.map((row: any) => [row.relationships.team.data.id, row.attributes.access]), [['team-web', 'plan']])
    t.equal(await access(cy.id), 'plan')
    const planner = await host.inject({ method: 'POST', url: '/workspaces/ws-WebProduction001/apply', headers: { 'x-user-id': cy.id } })
    t.same(planner.json(), { ok: false, message: 'no apply here', access: 'plan' }, 'and the host’s own route agrees')
    const joined = await events()
    t.same(joined.map((e) => e.action), ['add_member'], 'one event')
    const [join] = joined
    t.match(join, { resource_type: 'team', resource_id: 'team-web', meta: { team: 'web', user: 'cy' }, accessor_kind: 'system', accessor_description: 'user-ann', organization_id: 'org-shop' }, 'add_member, the admin as actor')
    t.match(join?.request_id, /^req-/, 'the host’s request id')

    const rows = await db.selectFrom('team_workspaces').select('id').where('team_id', '=', 'team-web').execute()
    t.ok(rows.length > 0, 'the team has team access to lose')
    const removed = await host.inject({ method: 'DELETE', url: '/admin/teams/team-web', headers: ann })
    t.same(removed.json(), { ok: true })
    t.same(await db.selectFrom('teams').select('id').where('id', '=', 'team-web').execute(), [], 'the team is gone')
    t.same(await db.selectFrom('team_memberships').select('user_id').where('team_id', '=', 'team-web').execute(), [], 'its memberships')
    t.same(await db.selectFrom('tokens').select('id').where('team_id', '=', 'team-web').execute(), [], 'its tokens')
    t.same(await db.selectFrom('team_workspaces').select('id').where('team_id', '=', 'team-web').execute(), [], 'its team access')
    const trail = await events()
    t.equal(trail.filter((e) => e.action === 'remove_team').length, rows.length, 'one remove_team per team-access row')
    t.same(trail.filter((e) => e.action === 'remove_team').map((e) => [e.team_id, e.workspace_id, e.team_name]), rows.map(() => ['team-web', 'ws-WebProduction001', 'web']))
    t.same(trail.filter((e) => e.action === 'remove_member').map((e) => e.meta).sort((a: any, b: any) => a.user.localeCompare(b.user)),
      [{ team: 'web', user: 'ben' }, { team: 'web', user: 'cy' }], 'a remove_member per membership')
    t.same(trail.filter((e) => e.resource_type === 'authentication-token').map((e) => [e.action, e.resource_id]), [['destroy', webToken.id]], 'its token destroyed')
    t.same(trail.filter((e) => e.resource_type === 'team' && e.action === 'destroy').map((e) => e.meta), [{ team: 'web' }], 'the team destroyed')
    t.ok(trail.every((e) => e.accessor_kind === 'system' && e.accessor_description === 'user-ann'), 'System, the admin')
    t.equal(new Set(trail.map((e) => e.request_id)).size, 1, 'one request id: one call')
    t.not(trail[0]?.request_id, join?.request_id, 'another request than the add’s')

    t.equal((await list(webToken.secret)).statusCode, 401, 'the removed team’s token: 401')
    t.equal((await list(cyToken.secret)).statusCode, 404, 'the member sees nothing any more')
    t.equal(await access(cy.id), null)
    t.equal(await access('user-ben'), null)

    const again = await host.inject({ method: 'DELETE', url: '/admin/teams/team-web', headers: ann })
    t.equal(again.statusCode, 404, 'a missing team: the host’s 404')
    t.match(again.json(), { ok: false, message: /no team/ })
    const owners = await host.inject({ method: 'DELETE', url: '/admin/teams/team-platform', headers: ann })
    t.equal(owners.statusCode, 422, 'the owners team stays')
  })

  t.test('a script writes the same directory with directory(db), the package’s export', async (t) => {
    const script = directoryOf(db)
    const ws = await script.createWorkspace({ organizationId: 'org-shop', name: 'web-staging' }, { actor: 'migration-script' })
    t.equal(ws.managedBy, 'host')
    const shown = await host.inject({ url: '/tfe/api/v2/organizations/shop/workspaces/web-staging', headers: ann })
    t.equal(shown.statusCode, 200, 'the API sees it')
    await t.rejects(script.createWorkspace({ organizationId: 'org-shop', name: 'web-staging' }), DirectoryError, 'a taken name: a DirectoryError')
    await script.removeWorkspace(ws.id)
    t.equal((await host.inject({ url: '/tfe/api/v2/organizations/shop/workspaces/web-staging', headers: ann })).statusCode, 404, 'removed')
  })
})

t.test('the plugin opens and closes its own database when given a location', async (t) => {
  const { default: Fastify } = await import('fastify')
  const { default: teamAccess } = await import('team-access')
  const app: FastifyInstance = Fastify()
  await app.register(teamAccess, { prefix: '/api/v2', database: await freshLocation(t) })
  const res = await app.inject({ url: '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-1', headers: { authorization: 'Bearer nobody-knows-me' } })
  t.equal(res.statusCode, 401, 'migrated and answering')
  await app.close()
})

t.test('registered without a prefix, the plugin leaves the host’s 404s to the host; a host authenticate runs once a request', async (t) => {
  const { default: Fastify } = await import('fastify')
  const { default: teamAccess } = await import('team-access')
  const db = await seededDatabase(t)
  const app: FastifyInstance = Fastify()
  app.setNotFoundHandler((_request, reply) => { void reply.status(404).send({ host: 'not here' }) })
  let calls = 0
  await app.register(teamAccess, {
    database: db,
    migrate: false,
    rateLimit: 100,
    authenticate: () => { calls++; return { kind: 'user', userId: 'user-ann' } }
  })
  t.teardown(() => app.close())
  const missing = await app.inject('/no/such/route')
  t.same(missing.json(), { host: 'not here' }, 'the host’s own 404')
  calls = 0
  const list = await app.inject('/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-WebProduction001')
  t.equal(list.statusCode, 200, 'the API at the root')
  t.equal(list.headers['x-ratelimit-limit'], '100', 'rate limited')
  t.equal(calls, 1, 'authenticate ran once for the rate limiter and the authentication both')
})

t.test('callerOfToken: a host authenticate takes the bearer token the page sends, as the plugin would', async (t) => {
  const { default: Fastify } = await import('fastify')
  const { default: teamAccess } = await import('team-access')
  const db = await seededDatabase(t)
  const app: FastifyInstance = Fastify()
  await app.register(teamAccess, {
    database: db,
    migrate: false,
    ui: true,
    authenticate: async (request) => {
      const bearer = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1]
      return bearer === undefined ? null : await app.teamAccess.callerOfToken(bearer)
    }
  })
  t.teardown(() => app.close())
  const { secret, id } = await app.teamAccess.directory.createToken({ userId: 'user-ann' }, { description: 'the page' })
  t.match(await app.teamAccess.callerOfToken(secret), { kind: 'user', userId: 'user-ann', token: /^[0-9a-f]{64}$/ }, 'the token’s caller, with its digest: every statement checks the token again')
  t.equal(await app.teamAccess.callerOfToken('not-a-token-of-ours'), null, 'an unknown secret: null')
  t.equal(await app.teamAccess.callerOfToken(''), null, 'an empty one: null')
  const url = '/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-WebProduction001'
  t.equal((await app.inject({ url, headers: { authorization: `Bearer ${secret}` } })).statusCode, 200, 'the page’s request, through the host’s authenticate')
  t.equal((await app.inject({ url })).statusCode, 401, 'no token: 401')
  await app.teamAccess.directory.removeToken(id)
  t.equal(await app.teamAccess.callerOfToken(secret), null, 'a removed token: null')
})
