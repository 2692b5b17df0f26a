import t from 'tap'
import { resolveToken, bearerSecret } from '../../src/auth/caller.js'
import { callerGrants } from '../../src/access/grants.js'
import { applySeedDocument } from '../../src/directory/seed.js'
import { tokenDigest } from '../../src/auth/token-digest.js'
import { build, bearer, ENGINE } from '../helper.js'

const hour = 3600_000
const seed = {
  users: [
    { id: 'user-alice', username: 'alice', tokens: ['alice-token-123'] },
    { id: 'user-bob', username: 'bob', tokens: ['bob-token-1234', { token: 'bob-expired-token', 'expires-at': new Date(Date.now() - hour).toISOString() }, { token: 'bob-future-token', 'expires-at': new Date(Date.now() + hour).toISOString() }] },
    { id: 'user-nobody', username: 'nobody', tokens: ['nobody-token-1'] }
  ],
  organizations: [
    {
      id: 'org-acme',
      name: 'acme',
      tokens: ['acme-org-token'],
      teams: [
        { id: 'team-owners', name: 'owners', owners: true, members: ['alice'], tokens: ['acme-owners-token'] },
        { id: 'team-ops', name: 'ops', 'organization-access': { 'manage-workspaces': true, 'read-workspaces': true }, members: ['bob'], tokens: ['acme-ops-token'] },
        { id: 'team-red', name: 'red', visibility: 'secret', members: ['bob'] }
      ]
    },
    { id: 'org-globex', name: 'globex', teams: [{ id: 'team-gx', name: 'gx', members: ['bob'] }] }
  ]
}

t.test(`token → caller (DESIGN §3) on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed })
  const grantsOf = async (token: string) => {
    const caller = await resolveToken(app.db, token)
    if (caller === null) return null
    const rows = await callerGrants(app.db, caller).execute()
    return { caller, grants: rows.sort((a, b) => `${a.organization_id}${a.team_id}`.localeCompare(`${b.organization_id}${b.team_id}`)) }
  }
  const grant = (organization_id: string, team_id: string | null, is_owner: boolean, manage = false, read = false) =>
    ({ organization_id, team_id, is_owner, manage_workspaces: manage, read_workspaces: read, manage_teams: false, manage_membership: false, manage_projects: false, read_projects: false })

  t.test('an organization token acts as an owner of its organization', async (t) => {
    t.same(await grantsOf('acme-org-token'), {
      caller: { kind: 'organization', organizationId: 'org-acme' },
      grants: [grant('org-acme', null, true)]
    })
  })
  t.test('the owners team token acts as an owner', async (t) => {
    t.same(await grantsOf('acme-owners-token'), {
      caller: { kind: 'team', teamId: 'team-owners' },
      grants: [grant('org-acme', 'team-owners', true)]
    })
  })
  t.test("another team's token acts as a member whose only team is that team", async (t) => {
    t.same(await grantsOf('acme-ops-token'), {
      caller: { kind: 'team', teamId: 'team-ops' },
      grants: [grant('org-acme', 'team-ops', false, true, true)]
    })
  })
  t.test('a user token acts as the user with all their memberships, in every organization', async (t) => {
    // and, for each organization it is an active member of (DESIGN §14.2), a row that grants nothing: a member with no team is a member
    t.same(await grantsOf('bob-token-1234'), {
      caller: { kind: 'user', userId: 'user-bob' },
      grants: [grant('org-acme', null, false), grant('org-acme', 'team-ops', false, true, true), grant('org-acme', 'team-red', false), grant('org-globex', null, false), grant('org-globex', 'team-gx', false)]
    })
    t.same(await grantsOf('alice-token-123'), {
      caller: { kind: 'user', userId: 'user-alice' },
      grants: [grant('org-acme', null, false), grant('org-acme', 'team-owners', true)]
    })
  })
  t.test('a user in no team is a member of nothing', async (t) => {
    t.same(await grantsOf('nobody-token-1'), { caller: { kind: 'user', userId: 'user-nobody' }, grants: [] })
  })
  t.test('unknown and expired tokens resolve to nobody; an unexpired one works', async (t) => {
    t.equal(await resolveToken(app.db, 'no-such-token'), null)
    t.equal(await resolveToken(app.db, 'bob-expired-token'), null)
    t.equal(await resolveToken(app.db, ''), null)
    t.equal(await resolveToken(app.db, 'x'.repeat(10_000)), null, 'absurd lengths are refused without a lookup')
    t.same(await resolveToken(app.db, 'bob-future-token'), { kind: 'user', userId: 'user-bob' })
  })
  t.test('a deleted subject takes its tokens with it', async (t) => {
    // the whole document: a seed removes the users it no longer declares (DESIGN §9.1)
    await applySeedDocument(app.db, { ...seed, users: [...seed.users, { id: 'user-tmp', username: 'tmp', tokens: ['tmp-token-123'] }] })
    t.ok(await resolveToken(app.db, 'tmp-token-123'))
    await app.db.deleteFrom('users').where('id', '=', 'user-tmp').execute()
    t.equal(await resolveToken(app.db, 'tmp-token-123'), null)
  })

  t.test('over HTTP: 401 for a missing, unknown, expired or misplaced token', async (t) => {
    const url = '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-none'
    const unauthorized = { errors: [{ status: '401', title: 'unauthorized' }] }
    const cases: Array<[string, Record<string, string>, string]> = [
      ['no header', {}, url],
      ['unknown token', bearer('no-such-token'), url],
      ['expired token', bearer('bob-expired-token'), url],
      ['not a bearer scheme', { authorization: 'Basic YWxpY2U6c2VjcmV0' }, url],
      ['empty bearer', { authorization: 'Bearer ' }, url],
      ['token in the query string', {}, `${url}&token=bob-token-1234&access_token=bob-token-1234`],
      ['huge token', bearer('y'.repeat(100_000)), url]
    ]
    for (const [name, headers, path] of cases) {
      const res = await app.inject({ method: 'GET', url: path, headers })
      t.equal(res.statusCode, 401, name)
      t.same(res.json(), unauthorized, `${name}: the 401 document`)
      t.match(res.headers['content-type'], /^application\/vnd\.api\+json/)
    }
    const ok = await app.inject({ method: 'GET', url, headers: { authorization: 'bearer bob-future-token' } })
    t.equal(ok.statusCode, 404, 'a valid token passes authentication (the scheme is case-insensitive); the workspace does not exist')
    const post = await app.inject({ method: 'POST', url: '/api/v2/team-workspaces', headers: { 'content-type': 'text/plain' }, payload: 'x' })
    t.equal(post.statusCode, 401, 'authentication comes before the body is looked at')
  })

  t.test('over HTTP: an unknown or expired token is 401 on every operation, whatever the body', async (t) => {
    const json = { 'content-type': 'application/vnd.api+json' }
    const requests = [
      { method: 'GET', url: '/api/v2/team-workspaces/tws-1' },
      { method: 'GET', url: '/api/v2/team-workspaces/' + 'x'.repeat(300) },
      { method: 'GET', url: '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-1&page%5Bsize%5D=1000' },
      { method: 'GET', url: '/api/v2/team-workspaces' },
      { method: 'POST', url: '/api/v2/team-workspaces', headers: json, payload: '{"data":' },
      { method: 'POST', url: '/api/v2/team-workspaces', headers: json, payload: '{}' },
      { method: 'POST', url: '/api/v2/team-workspaces', headers: json, payload: JSON.stringify({ data: { type: 'team-workspaces', attributes: { access: 'read', runs: 'apply' }, relationships: { team: { data: { type: 'teams', id: 'team-ops' } }, workspace: { data: { type: 'workspaces', id: 'ws-1' } } } } }) },
      { method: 'PATCH', url: '/api/v2/team-workspaces/tws-1', headers: json, payload: '{"data":{"id":"tws-2","attributes":{}}}' },
      { method: 'PATCH', url: '/api/v2/team-workspaces/tws-1', headers: json, payload: '{"data":{"attributes":{"access":"read"}}}' },
      { method: 'DELETE', url: '/api/v2/team-workspaces/tws-1', headers: json, payload: 'null' }
    ] as const
    for (const token of ['no-such-token', 'bob-expired-token']) {
      for (const request of requests) {
        const res = await app.inject({ ...request, headers: { ...('headers' in request ? request.headers : {}), ...bearer(token) } } as any)
        t.equal(res.statusCode, 401, `${token}: ${request.method} ${request.url.slice(0, 60)} ${'payload' in request ? request.payload.slice(0, 40) : ''}`)
      }
    }
  })
})

t.test(`nothing that grants access is kept: a change between two requests counts on the second (${ENGINE})`, async (t) => {
  const app = await build(t, {
    seed: {
      users: [{ id: 'user-dan', username: 'dan', tokens: ['dan-token-1234'] }, { id: 'user-eve', username: 'eve', tokens: ['eve-token-1234'] }],
      organizations: [{
        id: 'org-n',
        name: 'n',
        teams: [{ id: 'team-n-red', name: 'red', members: ['dan', 'eve'] }],
        workspaces: [{ id: 'ws-n', name: 'n' }],
        'team-access': [{ id: 'tws-n', team: 'red', workspace: 'n', access: 'admin' }]
      }]
    }
  })
  const show = (token: string) => app.inject({ url: '/api/v2/team-workspaces/tws-n', headers: bearer(token) })

  t.test('a membership removed: the very next request is denied', async (t) => {
    t.equal((await show('dan-token-1234')).statusCode, 200, 'a member of the secret team sees its row')
    await app.db.deleteFrom('team_memberships').where('user_id', '=', 'user-dan').execute()
    t.equal((await show('dan-token-1234')).statusCode, 404, 'no longer a member: not found')
  })
  t.test('a token expired: the very next request is 401', async (t) => {
    t.equal((await show('eve-token-1234')).statusCode, 200)
    await app.db.updateTable('tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('user_id', '=', 'user-eve').execute()
    t.equal((await show('eve-token-1234')).statusCode, 401)
  })
})

t.test(`a token seen lately is checked again by every request (${ENGINE})`, async (t) => {
  const tokens = ['own-1-token', 'own-2-token', 'own-3-token', 'own-4-token', 'own-5-token']
  const app = await build(t, {
    seed: {
      organizations: [{
        id: 'org-r',
        name: 'r',
        tokens,
        teams: [{ id: 'team-r-blue', name: 'blue' }],
        workspaces: [{ id: 'ws-r', name: 'r' }],
        'team-access': [{ id: 'tws-r', team: 'blue', workspace: 'r', access: 'read' }]
      }]
    }
  })
  const json = { 'content-type': 'application/vnd.api+json' }
  const revoke = (token: string) => app.db.deleteFrom('tokens').where('digest', '=', tokenDigest(token)).execute()
  const seen = async (token: string) => t.equal((await app.inject({ url: '/api/v2/team-workspaces/tws-r', headers: bearer(token) })).statusCode, 200, 'seen: 200')

  t.test('revoked, then a read: 401, not the row', async (t) => {
    await seen(tokens[0]!)
    await revoke(tokens[0]!)
    const res = await app.inject({ url: '/api/v2/team-workspaces/tws-r', headers: bearer(tokens[0]!) })
    t.equal(res.statusCode, 401)
    t.same(res.json(), { errors: [{ status: '401', title: 'unauthorized' }] })
  })
  t.test('revoked, then a write: 401, and nothing changed or recorded', async (t) => {
    await seen(tokens[1]!)
    await revoke(tokens[1]!)
    const events = async () => (await app.db.selectFrom('audit_events').select('id').execute()).length
    const before = await events()
    const patch = await app.inject({ method: 'PATCH', url: '/api/v2/team-workspaces/tws-r', headers: { ...json, ...bearer(tokens[1]!) }, payload: { data: { attributes: { access: 'admin' } } } })
    t.equal(patch.statusCode, 401, 'update')
    const remove = await app.inject({ method: 'DELETE', url: '/api/v2/team-workspaces/tws-r', headers: bearer(tokens[1]!) })
    t.equal(remove.statusCode, 401, 'remove')
    const row = await app.db.selectFrom('team_workspaces').select('access').where('id', '=', 'tws-r').executeTakeFirst()
    t.equal(row?.access, 'read', 'the row is as it was')
    t.equal(await events(), before, 'no audit event')
  })
  t.test('revoked, then an invalid body: 401 before 422, as if looked up first', async (t) => {
    await seen(tokens[2]!)
    await revoke(tokens[2]!)
    const res = await app.inject({ method: 'POST', url: '/api/v2/team-workspaces', headers: { ...json, ...bearer(tokens[2]!) }, payload: '{}' })
    t.equal(res.statusCode, 401)
    const plain = await app.inject({ method: 'POST', url: '/api/v2/team-workspaces', headers: { 'content-type': 'text/plain', ...bearer(tokens[2]!) }, payload: 'x' })
    t.equal(plain.statusCode, 401, 'and before 415')
  })
  t.test('revoked, then the audit trail: 401, not the trail', async (t) => {
    t.equal((await app.inject({ url: '/api/v2/organization/audit-trail', headers: bearer(tokens[3]!) })).statusCode, 200)
    await revoke(tokens[3]!)
    t.equal((await app.inject({ url: '/api/v2/organization/audit-trail', headers: bearer(tokens[3]!) })).statusCode, 401)
  })
  t.test('given to another subject: 401 once, then the token acts as its new subject', async (t) => {
    await applySeedDocument(app.db, { users: [{ id: 'user-r', username: 'r', tokens: ['moving-token-1'] }] })
    t.equal((await app.inject({ url: '/api/v2/team-workspaces/tws-r', headers: bearer('moving-token-1') })).statusCode, 404, 'a user in no team of r')
    await app.db.updateTable('tokens').set({ kind: 'organization', user_id: null, organization_id: 'org-r' }).where('digest', '=', tokenDigest('moving-token-1')).execute()
    t.equal((await app.inject({ url: '/api/v2/team-workspaces/tws-r', headers: bearer('moving-token-1') })).statusCode, 401, 'the caller it was remembered as is not its caller any more')
    t.equal((await app.inject({ url: '/api/v2/team-workspaces/tws-r', headers: bearer('moving-token-1') })).statusCode, 200, 'looked up afresh: the organization')
  })
  t.test('a valid token seen lately keeps its refusals: 404 and 422 as before', async (t) => {
    await seen(tokens[4]!)
    t.equal((await app.inject({ url: '/api/v2/team-workspaces/tws-none', headers: bearer(tokens[4]!) })).statusCode, 404)
    t.equal((await app.inject({ method: 'POST', url: '/api/v2/team-workspaces', headers: { ...json, ...bearer(tokens[4]!) }, payload: '{}' })).statusCode, 422)
  })
})

t.test(`a revoked token seen lately gets the very 401 a token never valid gets (${ENGINE})`, async (t) => {
  const app = await build(t, { seed, config: { rateLimit: 30 } })
  const answer = async (token: string) => {
    const res = await app.inject({ url: '/api/v2/team-workspaces/tws-none', headers: bearer(token) })
    const { date: _, 'x-request-id': __, ...headers } = res.headers
    return { status: res.statusCode, body: res.body, headers }
  }
  t.equal((await app.inject({ url: '/api/v2/team-workspaces/tws-none', headers: bearer('alice-token-123') })).statusCode, 404, 'seen: its caller is remembered')
  await app.db.deleteFrom('tokens').where('digest', '=', tokenDigest('alice-token-123')).execute()
  const revoked = await answer('alice-token-123')
  const never = await answer('never-valid-token')
  t.equal(revoked.status, 401)
  t.same(revoked, never, 'status, body and every header alike (but the date and the request id)')
  t.notOk('x-ratelimit-limit' in revoked.headers, 'no rate-limit headers, which only a caller’s answers carry')
  t.notOk('cache-control' in revoked.headers, 'no Cache-Control, which only a caller’s answers carry')
})

t.test('bearerSecret reads only the Bearer scheme', async (t) => {
  t.equal(bearerSecret('Bearer abc'), 'abc')
  t.equal(bearerSecret('BEARER  abc '), 'abc')
  t.equal(bearerSecret(undefined), null)
  t.equal(bearerSecret('Token abc'), null)
  t.equal(bearerSecret('Bearer a b'), null)
})
