import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import type { DatabaseLocation } from '../../src/db/connect.js'
import { applySeedDocument } from '../../src/directory/seed.js'
import { bearer, build, ENGINE, freshLocation, testConfig } from '../helper.js'

/**
 * DESIGN §9.2: a token regenerated, deleted, expired or removed by a seed answers 401 on its next
 * request to every route — reads, writes, the audit trail — even when it was used a moment before
 * (and so is in the token memory of the authentication step); a member removed, or a team
 * deleted, stops granting on the next request. Everything here goes through the API.
 */
const seed = () => ({
  users: [
    { id: 'user-rv-alice', username: 'alice', tokens: ['rv-alice-token'] },
    { id: 'user-rv-bob', username: 'bob', tokens: ['rv-bob-token'] }
  ],
  organizations: [{
    id: 'org-rv',
    name: 'rv',
    tokens: ['rv-organization-token'],
    teams: [
      { id: 'team-rv-owners', name: 'owners', owners: true, members: ['alice'] },
      { id: 'team-rv-devs', name: 'devs', visibility: 'organization', members: ['bob'], tokens: ['rv-devs-seed-token'] }
    ],
    workspaces: [{ id: 'ws-rv-prod', name: 'prod' }, { id: 'ws-rv-dev', name: 'dev' }],
    'team-access': [{ id: 'tws-rv-devs-prod', team: 'devs', workspace: 'prod', access: 'admin' }]
  }]
})
const JSONAPI = 'application/vnd.api+json'

function client (app: () => FastifyInstance) {
  return async (token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) => await app().inject({
    method,
    url: `/api/v2${url}`,
    headers: { ...bearer(token), ...(body === undefined ? {} : { 'content-type': JSONAPI }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) })
  })
}

/**
 * One request of every kind a token may make: reads of each resource, a write of team access,
 * team and token writes, the audit trail — the statuses, by request. A token that is no longer
 * held answers 401 to every one.
 */
async function everyRoute (call: ReturnType<typeof client>, token: string): Promise<Record<string, number>> {
  const requests: Array<[string, 'GET' | 'POST' | 'PATCH' | 'DELETE', string, unknown?]> = [
    ['list team access', 'GET', '/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-rv-prod'],
    ['show team access', 'GET', '/team-workspaces/tws-rv-devs-prod'],
    ['show workspace', 'GET', '/workspaces/ws-rv-prod'],
    ['list workspaces', 'GET', '/organizations/rv/workspaces'],
    ['show team', 'GET', '/teams/team-rv-devs?include=users'],
    ['list teams', 'GET', '/organizations/rv/teams'],
    ['add team access', 'POST', '/team-workspaces', { data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { workspace: { data: { type: 'workspaces', id: 'ws-rv-dev' } }, team: { data: { type: 'teams', id: 'team-rv-devs' } } } } }],
    ['update team access', 'PATCH', '/team-workspaces/tws-rv-devs-prod', { data: { type: 'team-workspaces', attributes: { access: 'write' } } }],
    ['create team', 'POST', '/organizations/rv/teams', { data: { type: 'teams', attributes: { name: 'never-made' } } }],
    ['read team token', 'GET', '/teams/team-rv-devs/authentication-token'],
    ['list team tokens', 'GET', '/teams/team-rv-devs/authentication-tokens'],
    ['read organization token', 'GET', '/organizations/rv/authentication-token'],
    ['account', 'GET', '/account/details'],
    ['audit trail', 'GET', '/organization/audit-trail']
  ]
  const statuses: Record<string, number> = {}
  for (const [name, method, url, body] of requests) statuses[name] = (await call(token, method, url, body)).statusCode
  return statuses
}

const all401 = (statuses: Record<string, number>) => Object.fromEntries(Object.keys(statuses).map((name) => [name, 401]))

t.test(`taking a token away counts from its very next request, on every route (${ENGINE})`, async (t) => {
  const app = await build(t, { seed: seed() })
  const call = client(() => app)
  const owner = 'rv-alice-token'
  const teamTokenBody = { data: { type: 'authentication-tokens' } }

  t.test('a team token regenerated: the old one 401 everywhere, even just used; the new one works', async (t) => {
    const first = await call(owner, 'POST', '/teams/team-rv-devs/authentication-token', teamTokenBody)
    t.equal(first.statusCode, 201)
    const old = first.json().data.attributes.token as string
    t.equal((await call(old, 'GET', '/team-workspaces/tws-rv-devs-prod')).statusCode, 200, 'used a moment before: remembered')
    const second = await call(owner, 'POST', '/teams/team-rv-devs/authentication-token', teamTokenBody)
    t.equal(second.statusCode, 201)
    const statuses = await everyRoute(call, old)
    t.same(statuses, all401(statuses), 'the regenerated token: 401 on every route')
    const fresh = second.json().data.attributes.token as string
    t.equal((await call(fresh, 'GET', '/team-workspaces/tws-rv-devs-prod')).statusCode, 200, 'the new one works')

    t.test('deleted: 401 everywhere on its next request', async (t) => {
      t.equal((await call(fresh, 'GET', '/teams/team-rv-devs')).statusCode, 200, 'remembered')
      t.equal((await call(owner, 'DELETE', '/teams/team-rv-devs/authentication-token')).statusCode, 204)
      const statuses = await everyRoute(call, fresh)
      t.same(statuses, all401(statuses))
      t.equal((await call(owner, 'GET', '/teams/team-rv-devs/authentication-token')).statusCode, 404, 'no description-less token now')
    })
  })

  t.test('a token deleted by id — a seed’s own included — 401 everywhere', async (t) => {
    t.equal((await call('rv-devs-seed-token', 'GET', '/workspaces/ws-rv-prod')).statusCode, 200, 'remembered')
    const list = await call(owner, 'GET', '/teams/team-rv-devs/authentication-tokens')
    t.equal(list.statusCode, 200)
    const ids = (list.json().data as any[]).map((token) => token.id as string)
    t.equal(ids.length, 1, 'the seed’s token is the team’s only one now')
    t.equal((await call(owner, 'DELETE', `/authentication-tokens/${ids[0]!}`)).statusCode, 204)
    const statuses = await everyRoute(call, 'rv-devs-seed-token')
    t.same(statuses, all401(statuses))
    t.equal((await call(owner, 'DELETE', `/authentication-tokens/${ids[0]!}`)).statusCode, 404, 'a second delete: 404')
  })

  t.test('a token past its expired-at: 401 everywhere', async (t) => {
    const expiresAt = new Date(Date.now() + 1500)
    const made = await call(owner, 'POST', '/teams/team-rv-devs/authentication-tokens',
      { data: { type: 'authentication-tokens', attributes: { description: 'short-lived', 'expired-at': expiresAt.toISOString() } } })
    t.equal(made.statusCode, 201)
    t.equal(made.json().data.attributes['expired-at'], expiresAt.toISOString())
    const secret = made.json().data.attributes.token as string
    t.equal((await call(secret, 'GET', '/workspaces/ws-rv-prod')).statusCode, 200, 'works, and is remembered')
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt.getTime() - Date.now()) + 100))
    const statuses = await everyRoute(call, secret)
    t.same(statuses, all401(statuses))
  })

  t.test('an organization token regenerated: the old one 401 on the audit trail and everywhere', async (t) => {
    const first = await call(owner, 'POST', '/organizations/rv/authentication-token')
    t.equal(first.statusCode, 201)
    const old = first.json().data.attributes.token as string
    t.equal((await call(old, 'GET', '/organization/audit-trail')).statusCode, 200, 'reads the trail; remembered')
    t.equal((await call(owner, 'POST', '/organizations/rv/authentication-token')).statusCode, 201)
    const statuses = await everyRoute(call, old)
    t.same(statuses, all401(statuses))
  })

  t.test('a user’s own token deleted: 401 everywhere', async (t) => {
    const made = await call('rv-bob-token', 'POST', '/users/user-rv-bob/authentication-tokens',
      { data: { type: 'authentication-tokens', attributes: { description: 'laptop' } } })
    t.equal(made.statusCode, 201)
    const secret = made.json().data.attributes.token as string
    t.equal((await call(secret, 'GET', '/account/details')).json().data.attributes.username, 'bob', 'acts as bob; remembered')
    t.equal((await call('rv-bob-token', 'DELETE', `/authentication-tokens/${made.json().data.id as string}`)).statusCode, 204)
    const statuses = await everyRoute(call, secret)
    t.same(statuses, all401(statuses))
  })

  t.test('a token removed by a seed: 401 everywhere, the audit trail included', async (t) => {
    t.equal((await call('rv-organization-token', 'GET', '/organization/audit-trail')).statusCode, 200, 'remembered')
    await applySeedDocument(app.db, { ...seed(), organizations: [{ ...seed().organizations[0]!, tokens: [] }] })
    const statuses = await everyRoute(call, 'rv-organization-token')
    t.same(statuses, all401(statuses))
  })
})

t.test(`a member removed, a team deleted: their grants gone on the next request (${ENGINE})`, async (t) => {
  const app = await build(t, { seed: seed() })
  const call = client(() => app)
  const owner = 'rv-alice-token'
  const bobSees = async () => (await call('rv-bob-token', 'GET', '/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-rv-dev')).statusCode

  // an API team with bob in it, access on both workspaces, and a token
  const team = await call(owner, 'POST', '/organizations/rv/teams', { data: { type: 'teams', attributes: { name: 'ops', visibility: 'secret' } } })
  t.equal(team.statusCode, 201)
  const teamId = team.json().data.id as string
  t.equal((await call(owner, 'POST', `/teams/${teamId}/relationships/users`, { data: [{ type: 'users', id: 'bob' }] })).statusCode, 204)
  for (const ws of ['ws-rv-prod', 'ws-rv-dev']) {
    const added = await call(owner, 'POST', '/team-workspaces', { data: { type: 'team-workspaces', attributes: { access: 'write' }, relationships: { workspace: { data: { type: 'workspaces', id: ws } }, team: { data: { type: 'teams', id: teamId } } } } })
    t.equal(added.statusCode, 200)
  }
  const token = (await call(owner, 'POST', `/teams/${teamId}/authentication-token`)).json().data.attributes.token as string
  t.equal(await bobSees(), 200, 'bob reads dev through ops')
  t.equal((await call(token, 'GET', '/workspaces/ws-rv-dev')).statusCode, 200, 'the team token works')

  t.test('bob removed from ops: dev is gone for him on his next request', async (t) => {
    t.equal((await call(owner, 'DELETE', `/teams/${teamId}/relationships/users`, { data: [{ type: 'users', id: 'bob' }] })).statusCode, 204)
    t.equal(await bobSees(), 404, 'gone at once')
    t.equal((await call(owner, 'POST', `/teams/${teamId}/relationships/users`, { data: [{ type: 'users', id: 'bob' }] })).statusCode, 204)
    t.equal(await bobSees(), 200, 'and back when added again')
  })

  t.test('ops deleted: its rows, memberships and tokens gone, one remove_team event per row', async (t) => {
    t.equal((await call(owner, 'DELETE', `/teams/${teamId}`)).statusCode, 204)
    t.equal(await bobSees(), 404, 'bob’s grant gone on his next request')
    const statuses = await everyRoute(call, token)
    t.same(statuses, all401(statuses), 'the team’s token: 401 everywhere')
    t.same(await app.db.selectFrom('team_workspaces').select('id').where('team_id', '=', teamId).execute(), [])
    t.same(await app.db.selectFrom('team_memberships').select('user_id').where('team_id', '=', teamId).execute(), [])
    t.same(await app.db.selectFrom('tokens').select('id').where('team_id', '=', teamId).execute(), [])
    const trail = (await call('rv-organization-token', 'GET', '/organization/audit-trail')).json().data as any[]
    const removals = trail.filter((e) => e.resource.action === 'remove_team' && e.resource.meta.team === 'ops')
    t.same(removals.map((e) => e.resource.id).sort(), ['ws-rv-dev', 'ws-rv-prod'], 'one event per row')
    t.equal(trail.filter((e) => e.resource.type === 'team' && e.resource.action === 'destroy' && e.resource.id === teamId).length, 1, 'and the team’s own')
    t.equal((await call(owner, 'DELETE', `/teams/${teamId}`)).statusCode, 404, 'a second delete: 404')
  })
})

t.test(`what the API made survives the seed; what the seed manages is the seed's (${ENGINE})`, async (t) => {
  const app = await build(t, { seed: seed() })
  const call = client(() => app)
  const owner = 'rv-alice-token'
  const team = await call(owner, 'POST', '/organizations/rv/teams', { data: { type: 'teams', attributes: { name: 'api-team' } } })
  t.equal(team.statusCode, 201)
  const teamId = team.json().data.id as string
  t.equal((await call(owner, 'POST', '/teams/team-rv-devs/relationships/users', { data: [{ type: 'users', id: 'alice' }] })).statusCode, 204, 'an API member of a seed team')
  const apiToken = (await call(owner, 'POST', '/teams/team-rv-devs/authentication-token')).json().data.attributes.token as string

  const summary = await applySeedDocument(app.db, seed())
  t.same(Object.values(summary.removed).flat(), [], 'the seed removes none of them')
  t.equal((await call(owner, 'GET', `/teams/${teamId}`)).statusCode, 200, 'the API team stays')
  const members = (await call(owner, 'GET', '/teams/team-rv-devs?include=users')).json().included.map((u: any) => u.attributes.username).sort()
  t.same(members, ['alice', 'bob'], 'the API member of the seed team stays')
  t.equal((await call(apiToken, 'GET', '/workspaces/ws-rv-prod')).statusCode, 200, 'the API token stays')

  t.test('a seed-managed team, membership: 422 managed by the seed file', async (t) => {
    for (const [method, url, body] of [
      ['PATCH', '/teams/team-rv-devs', { data: { type: 'teams', attributes: { visibility: 'secret' } } }],
      ['DELETE', '/teams/team-rv-devs', undefined],
      ['DELETE', '/teams/team-rv-devs/relationships/users', { data: [{ type: 'users', id: 'bob' }] }]
    ] as const) {
      const res = await call(owner, method, url, body)
      t.equal(res.statusCode, 422, `${method} ${url}`)
      t.match(res.json().errors[0].detail, /managed by the seed file/)
    }
    t.equal(await app.db.selectFrom('team_memberships').select('user_id').where('team_id', '=', 'team-rv-devs').where('user_id', '=', 'user-rv-bob').executeTakeFirst().then((r) => r?.user_id), 'user-rv-bob', 'nothing changed')
  })
})

t.test(`a seed's token revoked through the API stays revoked across restarts with the same seed (${ENGINE})`, async (t) => {
  const location: DatabaseLocation = ENGINE === 'postgres' ? await freshLocation(t) : { dataDir: await mkdtemp(join(tmpdir(), 'team-access-revoke-')) }
  if ('dataDir' in location) t.teardown(() => rm(location.dataDir, { recursive: true, force: true }))
  const seedFile = join(await mkdtemp(join(tmpdir(), 'team-access-seed-')), 'seed.json')
  await writeFile(seedFile, JSON.stringify(seed()))
  let app: FastifyInstance | undefined
  t.teardown(() => app?.close())
  const restart = async () => {
    await app?.close()
    app = await buildApp(testConfig(location, { seedFile }), { logger: false })
  }
  const call = client(() => app!)
  await restart()
  t.equal((await call('rv-bob-token', 'GET', '/workspaces/ws-rv-prod')).statusCode, 200)
  const tokens = (await call('rv-bob-token', 'GET', '/users/user-rv-bob/authentication-tokens')).json().data as any[]
  t.equal(tokens.length, 1)
  t.equal((await call('rv-alice-token', 'DELETE', `/authentication-tokens/${tokens[0].id as string}`)).statusCode, 404, 'another user may not')
  t.equal((await call('rv-bob-token', 'DELETE', `/authentication-tokens/${tokens[0].id as string}`)).statusCode, 204, 'bob revokes his leaked seed token')
  for (const round of [1, 2]) {
    await restart()
    t.equal((await call('rv-bob-token', 'GET', '/workspaces/ws-rv-prod')).statusCode, 401, `restart ${round} with the same seed: still 401`)
  }
  t.equal((await call('rv-alice-token', 'GET', '/workspaces/ws-rv-prod')).statusCode, 200, 'the seed’s other tokens are back as ever')
})
