import t from 'tap'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { bearer, build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { lookupToken } from '../../src/auth/caller.js'
import { tokenDigest } from '../../src/auth/token-digest.js'
import { table } from '../../src/db/tables.js'

/**
 * DESIGN §9.5, the tokens API: every route's shapes and statuses; the secret answered once; a new
 * token works; a regenerated, deleted or expired token answers 401 on its very next request on
 * every kind of route — also right after it was used (and so remembered); revoked digests kept;
 * last-used-at written at most once a minute; duplicates and past expiries refused; the events.
 */
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const JSONAPI = { 'content-type': 'application/vnd.api+json' }

interface Token { id: string, type: string, attributes: { 'created-at': string, 'last-used-at': string | null, 'expired-at': string | null, description: string | null, token: string | null }, relationships: { 'created-by': { data: { id: string, type: string } | null } } }

function client (app: FastifyInstance) {
  return {
    get: (url: string, token: string) => app.inject({ url: `/api/v2${url}`, headers: bearer(token) }),
    del: (url: string, token: string) => app.inject({ method: 'DELETE', url: `/api/v2${url}`, headers: bearer(token) }),
    post: (url: string, token: string, body?: unknown) => app.inject({
      method: 'POST', url: `/api/v2${url}`, headers: { ...bearer(token), ...JSONAPI }, ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) })
    })
  }
}

t.test(`the tokens API (DESIGN §9.5) on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world })
  const { get, del, post } = client(app)
  const events = async () => (await app.db.selectFrom('audit_events').selectAll().where('resource_type', '=', 'authentication-token').orderBy('occurred_at').execute())

  t.test('team token: create, read, regenerate, delete', async (t) => {
    const created = await post('/teams/team-writers/authentication-token', TOKENS.owner)
    t.equal(created.statusCode, 201)
    t.equal(created.headers['content-type'], 'application/vnd.api+json')
    const token = created.json().data as Token
    t.match(token.id, /^at-[0-9A-Za-z]{16}$/)
    t.equal(token.type, 'authentication-tokens')
    t.match(token.attributes['created-at'], TIME)
    t.same({ ...token.attributes, 'created-at': 'x' }, { 'created-at': 'x', 'last-used-at': null, 'expired-at': null, description: null, token: token.attributes.token })
    t.match(token.attributes.token, /^[\w-]{14}\.atlasv1\.[\w-]{54}$/, 'HCP-like shape, 400 random bits')
    t.same(token.relationships, { 'created-by': { data: { id: 'user-owner', type: 'users' } }, team: { data: { id: 'team-writers', type: 'teams' } } }, 'its maker, and its team (the provider imports a team token by id through it)')
    const secret = token.attributes.token!

    // the new token works, as the team
    t.equal((await get('/teams/team-writers', secret)).statusCode, 200)
    t.equal((await get('/team-workspaces?filter[workspace][id]=ws-prod', secret)).statusCode, 200)

    const read = await get('/teams/team-writers/authentication-token', TOKENS.owner)
    t.equal(read.statusCode, 200)
    t.equal(read.json().data.id, token.id)
    t.equal(read.json().data.attributes.token, null, 'a read never answers the secret')
    t.match(read.json().data.attributes['last-used-at'], TIME, 'used: last-used-at is set')

    // regenerate: the old token answers 401 at once, though it was used a moment ago (remembered)
    const again = await post('/teams/team-writers/authentication-token', TOKENS.owner, { data: { type: 'authentication-tokens', attributes: { 'expired-at': '2099-01-01T00:00:00Z' } } })
    t.equal(again.statusCode, 201)
    const second = again.json().data as Token
    t.not(second.id, token.id)
    t.equal(second.attributes['expired-at'], '2099-01-01T00:00:00.000Z')
    t.equal((await get('/teams/team-writers', secret)).statusCode, 401, 'regenerated: a read → 401')
    t.equal((await post('/team-workspaces', secret, { data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { team: { data: { type: 'teams', id: 'team-writers' } }, workspace: { data: { type: 'workspaces', id: 'ws-dev' } } } } })).statusCode, 401, 'a write → 401')
    t.equal((await get('/teams/team-writers', second.attributes.token!)).statusCode, 200)
    t.ok(await app.db.selectFrom('revoked_tokens').where('digest', '=', tokenDigest(secret)).executeTakeFirst(), 'the revoked digest is kept')
    t.equal((await app.db.selectFrom('tokens').where('team_id', '=', 'team-writers').where('managed_by', '=', 'api').execute()).length, 1, 'one API token left')

    // delete
    t.equal((await get('/teams/team-writers', second.attributes.token!)).statusCode, 200)
    const deleted = await del('/teams/team-writers/authentication-token', TOKENS.owner)
    t.equal(deleted.statusCode, 204)
    t.equal(deleted.body, '')
    t.equal((await get('/teams/team-writers', second.attributes.token!)).statusCode, 401, 'deleted: 401 at once')
    t.equal((await get('/teams/team-writers/authentication-token', TOKENS.owner)).statusCode, 404, 'none: 404')
    t.equal((await del('/teams/team-writers/authentication-token', TOKENS.owner)).statusCode, 404, 'a second delete: 404')
    t.equal((await get('/teams/team-writers', TOKENS.nonOwnerTeam)).statusCode, 200, "the seed's token of the team is untouched")

    // the events: create, destroy + create, destroy — never the secret
    const trail = (await events()).filter((e) => e.resource_id === token.id || e.resource_id === second.id)
    t.same(trail.map((e) => [e.action, e.resource_id, e.meta, e.organization_id, e.accessor_kind, e.accessor_id]), [
      ['create', token.id, { subject: 'writers' }, 'org-acme', 'user', 'user-owner'],
      ['destroy', token.id, { subject: 'writers' }, 'org-acme', 'user', 'user-owner'],
      ['create', second.id, { subject: 'writers' }, 'org-acme', 'user', 'user-owner'],
      ['destroy', second.id, { subject: 'writers' }, 'org-acme', 'user', 'user-owner']
    ])
  })

  t.test('the body of a regenerate: absent, empty, null, {}, type empty or absent', async (t) => {
    for (const body of [undefined, '', 'null', {}, { data: { type: '', attributes: {} } }, { data: { attributes: { 'expired-at': '2099-01-01T00:00:00Z' } } }, { data: { type: '' } }]) {
      const res = await post('/teams/team-green/authentication-token', TOKENS.organization, body)
      t.equal(res.statusCode, 201, JSON.stringify(body) ?? 'absent')
      t.equal(res.json().data.relationships['created-by'].data, null, 'an organization token is no user')
    }
    const wrongType = await post('/teams/team-green/authentication-token', TOKENS.organization, { data: { type: 'teams' } })
    t.equal(wrongType.statusCode, 422)
  })

  t.test('expired-at: in the past 422; a token past it 401', async (t) => {
    for (const url of ['/teams/team-green/authentication-token', '/organizations/acme/authentication-token']) {
      const res = await post(url, TOKENS.owner, { data: { type: 'authentication-tokens', attributes: { 'expired-at': '2001-01-01T00:00:00Z' } } })
      t.equal(res.statusCode, 422, url)
      t.same(res.json().errors[0].source, { pointer: '/data/attributes/expired-at' })
    }
    t.equal((await post('/users/user-owner/authentication-tokens', TOKENS.owner, { data: { attributes: { 'expired-at': '2001-01-01T00:00:00Z' } } })).statusCode, 422)
    t.equal((await post('/teams/team-green/authentication-tokens', TOKENS.owner, { data: { attributes: { description: 'x', 'expired-at': 'tomorrow' } } })).statusCode, 422, 'not a time')

    const soon = new Date(Date.now() + 1500).toISOString()
    const res = await post('/teams/team-green/authentication-tokens', TOKENS.owner, { data: { attributes: { description: 'short-lived', 'expired-at': soon } } })
    t.equal(res.statusCode, 201)
    const secret = res.json().data.attributes.token
    t.equal((await get('/teams/team-green', secret)).statusCode, 200, 'works (and is remembered)')
    await new Promise((resolve) => setTimeout(resolve, 1600))
    t.equal((await get('/teams/team-green', secret)).statusCode, 401, 'past expired-at: 401')
  })

  t.test('more team tokens: description required and unique; the list', async (t) => {
    const first = await post('/teams/team-red/authentication-tokens', TOKENS.owner, { data: { type: 'authentication-tokens', attributes: { description: 'ci' } } })
    t.equal(first.statusCode, 201)
    t.equal(first.json().data.attributes.description, 'ci')
    const duplicate = await post('/teams/team-red/authentication-tokens', TOKENS.owner, { data: { type: 'authentication-tokens', attributes: { description: 'ci' } } })
    t.equal(duplicate.statusCode, 422)
    t.same(duplicate.json().errors, [{ status: '422', title: 'invalid attribute', detail: 'Description has already been taken', source: { pointer: '/data/attributes/description' } }])
    t.equal((await post('/teams/team-blue/authentication-tokens', TOKENS.owner, { data: { attributes: { description: 'ci' } } })).statusCode, 201, 'unique per team only')
    t.equal((await post('/teams/team-red/authentication-tokens', TOKENS.owner, { data: { attributes: {} } })).statusCode, 422, 'description required')
    t.equal((await post('/teams/team-red/authentication-tokens', TOKENS.owner)).statusCode, 422, 'a body required')
    t.equal((await post('/teams/team-red/authentication-tokens', TOKENS.owner, { data: { attributes: { description: 'deploy' } } })).statusCode, 201)
    t.equal((await post('/teams/team-red/authentication-token', TOKENS.owner)).statusCode, 201)

    const list = await get('/teams/team-red/authentication-tokens', TOKENS.owner)
    t.equal(list.statusCode, 200)
    const body = list.json()
    t.same(body.data.map((d: Token) => [d.attributes.description, d.attributes.token]), [['ci', null], ['deploy', null], [null, null]])
    t.same(body.meta.pagination, { 'current-page': 1, 'page-size': 20, 'prev-page': null, 'next-page': null, 'total-pages': 1, 'total-count': 3 })
    t.equal(body.links.self, 'http://localhost:80/api/v2/teams/team-red/authentication-tokens?page%5Bnumber%5D=1&page%5Bsize%5D=20')
    const page2 = (await get('/teams/team-red/authentication-tokens?page[number]=2&page[size]=2', TOKENS.owner)).json()
    t.same(page2.data.map((d: Token) => d.attributes.description), [null])
    t.same(page2.meta.pagination, { 'current-page': 2, 'page-size': 2, 'prev-page': 1, 'next-page': null, 'total-pages': 2, 'total-count': 3 })
    const past = (await get('/teams/team-red/authentication-tokens?page[number]=9', TOKENS.owner)).json()
    t.same([past.data, past.meta.pagination['total-count']], [[], 3], 'past the end: empty, the count still told')
    t.equal((await get('/teams/team-red/authentication-tokens?page[size]=0', TOKENS.owner)).statusCode, 422)
    const seeded = (await get('/teams/team-writers/authentication-tokens', TOKENS.owner)).json()
    t.equal(seeded.data.length, 1, "a seed's token is listed")
  })

  t.test('organization token: 404 before, create, read, regenerate, delete; the audit trail', async (t) => {
    t.equal((await get('/organizations/acme/authentication-token', TOKENS.owner)).statusCode, 404, 'none yet: the provider reads before it creates')
    const created = await post('/organizations/acme/authentication-token', TOKENS.ownersTeam, 'null')
    t.equal(created.statusCode, 201)
    const token = created.json().data as Token
    t.equal(token.relationships['created-by'].data, null, 'made by a team token')
    const secret = token.attributes.token!
    t.equal((await get('/organization/audit-trail', secret)).statusCode, 200, 'it acts as the organization')
    const read = (await get('/organizations/acme/authentication-token', TOKENS.owner)).json().data
    t.same([read.id, read.attributes.token], [token.id, null])

    const again = await post('/organizations/acme/authentication-token', TOKENS.owner)
    t.equal(again.statusCode, 201)
    t.equal((await get('/organization/audit-trail', secret)).statusCode, 401, 'regenerated: the audit trail → 401')
    t.equal((await get('/teams/team-red', secret)).statusCode, 401, 'a read → 401')
    const next = again.json().data.attributes.token as string
    const trail = await get('/organization/audit-trail?page[size]=1000', next)
    t.equal(trail.statusCode, 200)
    const tokenEvents = trail.json().data.filter((e: { resource: { type: string } }) => e.resource.type === 'authentication-token')
    t.ok(tokenEvents.some((e: { resource: { id: string, action: string, meta: unknown } }) => e.resource.id === token.id && e.resource.action === 'destroy' && JSON.stringify(e.resource.meta) === '{"subject":"acme"}'), 'the destroy is in the trail')
    t.notOk(JSON.stringify(trail.json()).includes(next) || JSON.stringify(trail.json()).includes(secret), 'no secret in the trail')

    t.equal((await del('/organizations/acme/authentication-token', TOKENS.owner)).statusCode, 204)
    t.equal((await get('/organization/audit-trail', next)).statusCode, 401, 'deleted: 401')
    t.equal((await get('/organizations/acme/authentication-token', TOKENS.owner)).statusCode, 404)
    t.equal((await get('/organization/audit-trail', TOKENS.organization)).statusCode, 200, "the seed's organization token is another token")
    for (const method of ['GET', 'POST', 'DELETE'] as const) {
      const res = await app.inject({ method, url: '/api/v2/organizations/acme/authentication-token?token=audit-trails', headers: bearer(TOKENS.owner) })
      t.equal(res.statusCode, 404, `${method} ?token=audit-trails: a token type not served here`)
    }
  })

  t.test("a user's tokens; one token by id; /account/details", async (t) => {
    const created = await post('/users/user-reader/authentication-tokens', TOKENS.reader, { data: { type: '', attributes: { description: 'laptop' } } })
    t.equal(created.statusCode, 201)
    const token = created.json().data as Token
    t.same([token.attributes.description, token.relationships['created-by'].data], ['laptop', { id: 'user-reader', type: 'users' }])
    const secret = token.attributes.token!
    const account = await get('/account/details', secret)
    t.equal(account.statusCode, 200)
    t.same(account.json(), { data: { id: 'user-reader', type: 'users', attributes: { username: 'reader' } } })
    t.equal((await post('/users/user-reader/authentication-tokens', secret)).statusCode, 201, 'no body: a description-less token')

    const list = (await get('/users/user-reader/authentication-tokens', TOKENS.reader)).json()
    t.same(list.data.map((d: Token) => [d.attributes.description, d.attributes.token]), [[null, null], ['laptop', null], [null, null]], "the seed's token, then the two")
    const one = await get(`/authentication-tokens/${token.id}`, TOKENS.reader)
    t.same([one.statusCode, one.json().data.attributes.token], [200, null])
    t.match(one.json().data.attributes['last-used-at'], TIME)

    t.equal((await get('/account/details', secret)).statusCode, 200)
    t.equal((await del(`/authentication-tokens/${token.id}`, TOKENS.reader)).statusCode, 204)
    t.equal((await get('/account/details', secret)).statusCode, 401, 'deleted by id: 401 at once')
    t.equal((await get('/workspaces/ws-prod', secret)).statusCode, 401)
    t.equal((await get(`/authentication-tokens/${token.id}`, TOKENS.reader)).statusCode, 404)

    // a user's own token belongs to no organization: none of their organizations' trails records it
    const trail = (await events()).filter((e) => e.resource_id === token.id)
    t.same(trail, [], 'no event in any organization')
    // a user in no organization: no event
    const lonely = await post('/users/user-lonely/authentication-tokens', TOKENS.noTeam)
    t.equal(lonely.statusCode, 201)
    t.same(await events().then((all) => all.filter((e) => e.resource_id === lonely.json().data.id)), [])

    for (const token of [TOKENS.organization, TOKENS.ownersTeam]) t.equal((await get('/account/details', token)).statusCode, 404, 'not a user token: 404')
  })

  t.test('seed-managed tokens can be revoked by id (DESIGN §9.1)', async (t) => {
    const seeded = await app.db.selectFrom('tokens').select('id').where('digest', '=', tokenDigest(TOKENS.secretMember)).executeTakeFirstOrThrow()
    t.equal((await get('/teams/team-red', TOKENS.secretMember)).statusCode, 200)
    t.equal((await get(`/authentication-tokens/${seeded.id}`, TOKENS.secretMember)).statusCode, 200)
    t.equal((await del(`/authentication-tokens/${seeded.id}`, TOKENS.secretMember)).statusCode, 204)
    t.equal((await get('/teams/team-red', TOKENS.secretMember)).statusCode, 401, 'remembered a moment ago, 401 now')
    t.ok(await app.db.selectFrom('revoked_tokens').where('digest', '=', tokenDigest(TOKENS.secretMember)).executeTakeFirst(), 'its digest is kept')
    const teamToken = await app.db.selectFrom('tokens').select('id').where('digest', '=', tokenDigest(TOKENS.nonOwnerTeam)).executeTakeFirstOrThrow()
    t.equal((await get('/team-workspaces?filter[workspace][id]=ws-prod', TOKENS.nonOwnerTeam)).statusCode, 200)
    t.equal((await del(`/authentication-tokens/${teamToken.id}`, TOKENS.owner)).statusCode, 204)
    t.equal((await get('/team-workspaces?filter[workspace][id]=ws-prod', TOKENS.nonOwnerTeam)).statusCode, 401)
    const events = (await app.db.selectFrom('audit_events').selectAll().where('resource_id', '=', teamToken.id).execute())
    t.same(events.map((e) => [e.action, e.meta]), [['destroy', { subject: 'writers' }]])
  })

  t.test('revoked by another process: this one still remembers the token, and answers 401 all the same', async (t) => {
    const org = (await post('/organizations/acme/authentication-token', TOKENS.owner)).json().data
    const team = (await post('/teams/team-blue/authentication-tokens', TOKENS.owner, { data: { attributes: { description: 'elsewhere' } } })).json().data
    const write = { data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { team: { data: { type: 'teams', id: 'team-green' } }, workspace: { data: { type: 'workspaces', id: 'ws-dev' } } } } }
    t.equal((await get('/organization/audit-trail', org.attributes.token)).statusCode, 200, 'used, so remembered')
    t.equal((await get('/teams/team-blue', team.attributes.token)).statusCode, 200, 'used, so remembered')
    // another replica's revocation: the row goes, this process is not told
    await app.db.deleteFrom('tokens').where('id', 'in', [org.id, team.id]).execute()
    t.equal((await get('/organization/audit-trail', org.attributes.token)).statusCode, 401, 'the audit trail')
    t.equal((await post('/team-workspaces', org.attributes.token, write)).statusCode, 401, 'a write')
    t.equal((await get('/teams/team-red', org.attributes.token)).statusCode, 401, 'a read')
    t.equal((await get('/teams/team-blue', team.attributes.token)).statusCode, 401, 'a team token: a read')
    t.equal((await post('/team-workspaces', team.attributes.token, write)).statusCode, 401, 'a team token: a write')
    t.equal((await app.db.selectFrom('team_workspaces').where('team_id', '=', 'team-green').where('workspace_id', '=', 'ws-dev').execute()).length, 0, 'nothing written')
  })

  t.test('regenerates at once take turns: one token left, the others revoked', async (t) => {
    const answers = await Promise.all(Array.from({ length: 6 }, async () => await post('/organizations/acme/authentication-token', TOKENS.owner)))
    t.same(answers.map((res) => res.statusCode), [201, 201, 201, 201, 201, 201])
    const live = await app.db.selectFrom('tokens').select('id').where('organization_id', '=', 'org-acme').where('managed_by', '=', 'api').execute()
    t.equal(live.length, 1, 'one API organization token')
    const secrets = answers.map((res) => res.json().data.attributes.token as string)
    const working = []
    for (const secret of secrets) if ((await get('/organization/audit-trail', secret)).statusCode === 200) working.push(secret)
    t.equal(working.length, 1, 'exactly one of them works')
    const revoked = await app.db.selectFrom('revoked_tokens').select('digest').where('digest', 'in', secrets.map(tokenDigest)).execute()
    t.equal(revoked.length, 5, 'the other five are revoked')
  })

  t.test('last-used-at: written on a lookup, at most once a minute', async (t) => {
    const created = await post('/users/user-writer/authentication-tokens', TOKENS.writer)
    const { id, attributes: { token: secret } } = created.json().data as Token
    const digest = tokenDigest(secret!)
    const lastUsed = async () => (await app.db.selectFrom('tokens').select('last_used_at').where('id', '=', id).executeTakeFirstOrThrow()).last_used_at
    t.equal(await lastUsed(), null, 'never used')
    await lookupToken(app.db, digest)
    const first = await lastUsed()
    t.ok(first !== null, 'a lookup writes it')
    await sql`update ${table.tokens} set last_used_at = now() - interval '30 seconds' where id = ${id}`.execute(app.db)
    const thirtySecondsAgo = await lastUsed()
    await lookupToken(app.db, digest)
    t.same(await lastUsed(), thirtySecondsAgo, 'within a minute: not rewritten')
    await sql`update ${table.tokens} set last_used_at = now() - interval '2 minutes' where id = ${id}`.execute(app.db)
    const twoMinutesAgo = await lastUsed()
    await lookupToken(app.db, digest)
    t.ok(new Date((await lastUsed())!).getTime() > new Date(twoMinutesAgo!).getTime() + 60_000, 'older than a minute: written again')
    // requests within the token memory's minute look nothing up, and write nothing
    await sql`update ${table.tokens} set last_used_at = now() - interval '2 minutes' where id = ${id}`.execute(app.db)
    const before = await lastUsed()
    for (let i = 0; i < 3; i++) await get('/account/details', secret!)
    const after = await lastUsed()
    t.ok(new Date(after!).getTime() > new Date(before!).getTime(), 'the first request of the app looks it up and writes it')
    await sql`update ${table.tokens} set last_used_at = now() - interval '2 minutes' where id = ${id}`.execute(app.db)
    const stale = await lastUsed()
    await get('/account/details', secret!)
    t.same(await lastUsed(), stale, 'a remembered token: no lookup, no write')

    if (ENGINE === 'postgres') {
      // a lookup never waits for a row another transaction holds: it skips the write
      let release!: () => void
      const held = new Promise<void>((resolve) => { release = resolve })
      let locked!: () => void
      const isLocked = new Promise<void>((resolve) => { locked = resolve })
      const holder = app.db.transaction().execute(async (trx) => {
        await sql`select id from ${table.tokens} where id = ${id} for update`.execute(trx)
        locked()
        await held
      })
      await isLocked
      const found = await lookupToken(app.db, digest)
      t.equal(found?.caller.kind, 'user', 'found while the row is held')
      release()
      await holder
      t.same(await lastUsed(), stale, 'and not written')
    }
  })
})
