import t from 'tap'
import { applySeedFile } from '../../src/directory/seed-file.js'
import { DEMO_SEED } from '../../src/app.js'
import { build, ENGINE } from '../helper.js'

/**
 * DESIGN §9.3–9.5: the Terraform provider's traffic for `tfe_team`, `tfe_team_member(s)`,
 * `tfe_team_token` and `tfe_organization_token` — create, refresh, update, import, destroy — at
 * v0.22.0 (go-tfe v0.10: token creates without a body, three organization-access flags) and at
 * the newest provider on go-tfe v1 (every flag, `allow-member-token-management`, `sso-team-id`,
 * token bodies with an empty `type`), replayed byte for byte as go-tfe writes them (sorted
 * attribute keys, the nested object in struct order, a trailing newline), asserting what the
 * provider reads from each answer. Only a 404 tells the provider a resource is gone.
 */
const OWNER = 'acme-owners-demo-token'
const BASE58_TEAM = /^team-[1-9A-HJ-NP-Za-km-z]{16}$/

t.test(`the Terraform provider's directory traffic (${ENGINE})`, async (t) => {
  const app = await build(t)
  await applySeedFile(app.db, DEMO_SEED)
  /** A request as go-tfe sends it: `raw` is the body byte for byte (none: no body at all, as old go-tfe's token creates). */
  const send = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, raw?: string, token = OWNER) => {
    const res = await app.inject({
      method,
      url: `/api/v2/${path}`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.api+json', accept: 'application/vnd.api+json', 'user-agent': 'go-tfe' },
      ...(raw === undefined ? {} : { payload: raw })
    })
    if (res.statusCode !== 204 && res.statusCode < 500 && path !== 'organization/audit-trail') t.match(res.headers['content-type'], /^application\/vnd\.api\+json/, `${method} ${path}: a JSON:API answer`)
    return { status: res.statusCode, body: res.body === '' ? undefined : res.json() }
  }
  /** What go-tfe's iso8601 attribute parse accepts: RFC 3339 ending in a literal Z, or null. */
  const goTime = (value: unknown) => value === null || (typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(value))
  /** The members a read of `teams/:id?include=users` gives the provider: included usernames of relationships.users. */
  const membersOf = (doc: any): string[] => {
    const names = new Map((doc.included ?? []).filter((x: any) => x.type === 'users').map((x: any) => [x.id, x.attributes.username]))
    return doc.data.relationships.users.data.map((u: any) => names.get(u.id) ?? '').sort()
  }

  t.test('tfe_team at v0.22.0: create (visibility always sent), read, update, import ORG/ID, destroy', async (t) => {
    const created = await send('POST', 'organizations/acme/teams',
      '{"data":{"type":"teams","attributes":{"name":"legacy","organization-access":{"manage-policies":false,"manage-workspaces":true,"manage-vcs-settings":false},"visibility":"secret"}}}\n')
    t.equal(created.status, 201)
    const id = created.body.data.id as string
    t.match(id, BASE58_TEAM, 'an id newer providers accept on import')
    const read = await send('GET', `teams/${id}`)
    t.equal(read.status, 200)
    t.match(read.body.data.attributes, { name: 'legacy', visibility: 'secret', 'organization-access': { 'manage-policies': false, 'manage-workspaces': true, 'manage-vcs-settings': false } })
    const updated = await send('PATCH', `teams/${id}`,
      '{"data":{"type":"teams","attributes":{"name":"legacy","organization-access":{"manage-policies":true,"manage-workspaces":false,"manage-vcs-settings":false},"visibility":"organization"}}}\n')
    t.equal(updated.status, 200)
    // import acme/<id>: split locally, then a refresh
    t.match((await send('GET', `teams/${id}`)).body.data.attributes, { visibility: 'organization', 'organization-access': { 'manage-policies': true, 'manage-workspaces': false } })
    t.equal((await send('DELETE', `teams/${id}`)).status, 204)
    t.equal((await send('GET', `teams/${id}`)).status, 404, 'gone: the provider drops it from state')
    t.equal((await send('DELETE', `teams/${id}`)).status, 404, 'a destroy of what is gone: 404, which the provider counts as done')
  })

  t.test('tfe_team, newest: every flag, sso-team-id and allow-member-token-management read back as written', async (t) => {
    const flags = '{"manage-policies":false,"manage-policy-overrides":false,"delegate-policy-overrides":false,"manage-workspaces":true,"manage-vcs-settings":false,"manage-providers":false,"manage-modules":false,"manage-run-tasks":false,"manage-projects":false,"read-workspaces":true,"read-projects":false,"manage-membership":false,"manage-teams":false,"manage-organization-access":false,"access-secret-teams":false,"manage-agent-pools":false}'
    const created = await send('POST', 'organizations/acme/teams',
      `{"data":{"type":"teams","attributes":{"allow-member-token-management":true,"name":"platform","organization-access":${flags},"sso-team-id":"abc","visibility":"organization"}}}\n`)
    t.equal(created.status, 201)
    const id = created.body.data.id as string
    const read = await send('GET', `teams/${id}`)
    t.equal(read.status, 200)
    t.same(read.body.data.attributes['organization-access'], JSON.parse(flags), 'all 16 flags, as sent')
    t.match(read.body.data.attributes, { name: 'platform', visibility: 'organization', 'sso-team-id': 'abc', 'allow-member-token-management': true })
    t.equal(typeof read.body.data.attributes['users-count'], 'number')
    t.same(read.body.data.relationships.users.data, [])
    t.match(read.body.data.attributes.permissions, { 'can-destroy': true, 'can-update-membership': true })

    // a minimal team: the provider sends no visibility and reads back what the service chose
    const minimal = await send('POST', 'organizations/acme/teams', '{"data":{"type":"teams","attributes":{"allow-member-token-management":true,"name":"minimal"}}}\n')
    t.equal(minimal.status, 201)
    t.match(minimal.body.data.attributes, { visibility: 'secret', 'allow-member-token-management': true, 'sso-team-id': null })

    // update: every attribute again, sso-team-id cleared with ""
    const updated = await send('PATCH', `teams/${id}`,
      `{"data":{"type":"teams","attributes":{"allow-member-token-management":false,"name":"platform","organization-access":${flags.replace('"read-workspaces":true', '"read-workspaces":false')},"sso-team-id":"","visibility":"secret"}}}\n`)
    t.equal(updated.status, 200)
    const after = (await send('GET', `teams/${id}`)).body.data.attributes
    t.match(after, { visibility: 'secret', 'allow-member-token-management': false, 'organization-access': { 'read-workspaces': false, 'manage-workspaces': true } })
    t.ok(after['sso-team-id'] === null || after['sso-team-id'] === '', 'cleared (the provider reads null as "")')

    // import acme/<id>: the id has the shape, so the provider reads it; acme/<name>: it searches by name
    t.equal((await send('GET', `teams/${id}`)).status, 200)
    const byName = await send('GET', 'organizations/acme/teams?filter%5Bnames%5D=platform')
    t.same(byName.body.data.map((x: any) => x.id), [id])
    t.equal(byName.body.meta.pagination['total-pages'], 1)

    for (const team of [id, minimal.body.data.id]) t.equal((await send('DELETE', `teams/${team}`)).status, 204)
  })

  t.test('tfe_team_members and tfe_team_member: add all, read through include=users, update (add then remove), destroy', async (t) => {
    const team = (await send('POST', 'organizations/acme/teams', '{"data":{"type":"teams","attributes":{"name":"members","visibility":"secret"}}}\n')).body.data.id as string
    t.equal((await send('POST', `teams/${team}/relationships/users`, '{"data":[{"type":"users","id":"alice"},{"type":"users","id":"bob"}]}\n')).status, 204)
    const read = await send('GET', `teams/${team}?include=users`)
    t.equal(read.status, 200)
    t.same(membersOf(read.body), ['alice', 'bob'])
    t.equal(read.body.data.attributes['users-count'], 2)
    // update usernames to [bob, carol]: the added set first, then the removed set
    t.equal((await send('POST', `teams/${team}/relationships/users`, '{"data":[{"type":"users","id":"carol"}]}\n')).status, 204)
    t.equal((await send('DELETE', `teams/${team}/relationships/users`, '{"data":[{"type":"users","id":"alice"}]}\n')).status, 204)
    t.same(membersOf((await send('GET', `teams/${team}?include=users`)).body), ['bob', 'carol'])
    // tfe_team_member (one user, id TEAM/USERNAME): add, read, delete
    t.equal((await send('POST', `teams/${team}/relationships/users`, '{"data":[{"type":"users","id":"alice"}]}\n')).status, 204)
    t.ok(membersOf((await send('GET', `teams/${team}?include=users`)).body).includes('alice'))
    t.equal((await send('DELETE', `teams/${team}/relationships/users`, '{"data":[{"type":"users","id":"alice"}]}\n')).status, 204)
    // destroy tfe_team_members: read, then remove every current member
    const current = membersOf((await send('GET', `teams/${team}?include=users`)).body)
    t.equal((await send('DELETE', `teams/${team}/relationships/users`, `{"data":[${current.map((u) => `{"type":"users","id":"${u}"}`).join(',')}]}\n`)).status, 204)
    t.same(membersOf((await send('GET', `teams/${team}?include=users`)).body), [], 'no members: the provider counts the resource gone')
    t.equal((await send('DELETE', `teams/${team}`)).status, 204)
    t.equal((await send('GET', `teams/${team}?include=users`)).status, 404)
  })

  t.test('tfe_team_token at v0.22.0: read (404: none), create without a body, read, destroy', async (t) => {
    const team = 'team-DemoTeamred12345'
    t.equal((await send('GET', `teams/${team}/authentication-token`)).status, 404, 'none yet')
    const created = await send('POST', `teams/${team}/authentication-token`)
    t.equal(created.status, 201)
    const secret = created.body.data.attributes.token as string
    t.ok(secret.length >= 22, 'the secret, once')
    t.equal(created.body.data.type, 'authentication-tokens')
    const read = await send('GET', `teams/${team}/authentication-token`)
    t.equal(read.status, 200)
    t.equal(read.body.data.attributes.token, null, 'never again')
    t.ok(goTime(read.body.data.attributes['created-at']) && goTime(read.body.data.attributes['last-used-at']) && goTime(read.body.data.attributes['expired-at']), 'times go-tfe parses')
    t.equal((await send('GET', `teams/${team}`, undefined, secret)).status, 200, 'the token acts as the team')
    // a second create with a token present: the provider refuses unless force_regenerate, which POSTs again
    const regenerated = await send('POST', `teams/${team}/authentication-token`)
    t.equal(regenerated.status, 201)
    t.equal((await send('GET', `teams/${team}`, undefined, secret)).status, 401, 'the old secret is revoked')
    t.equal((await send('DELETE', `teams/${team}/authentication-token`)).status, 204)
    t.equal((await send('GET', `teams/${team}/authentication-token`)).status, 404, 'gone')
    t.equal((await send('DELETE', `teams/${team}/authentication-token`)).status, 404, 'a second destroy: 404, done')
  })

  t.test('tfe_team_token, newest: {"type":""} bodies, expired-at, a described token by id, import by at-id', async (t) => {
    const team = 'team-DemoTeamdevs1234'
    t.equal((await send('GET', `teams/${team}/authentication-token`)).status, 404)
    const expiry = '2030-01-01T00:00:00Z'
    const legacy = await send('POST', `teams/${team}/authentication-token`, `{"data":{"type":"","attributes":{"expired-at":"${expiry}"}}}\n`)
    t.equal(legacy.status, 201)
    t.equal(new Date(legacy.body.data.attributes['expired-at']).toISOString(), new Date(expiry).toISOString())
    t.ok(goTime(legacy.body.data.attributes['expired-at']))
    t.equal((await send('GET', `teams/${team}/authentication-token`)).status, 200)

    const described = await send('POST', `teams/${team}/authentication-tokens`, '{"data":{"type":"","attributes":{"description":"ci","expired-at":"2030-01-01T00:00:00Z"}}}\n')
    t.equal(described.status, 201)
    const id = described.body.data.id as string
    t.match(id, /^at-/)
    t.equal(described.body.data.attributes.description, 'ci')
    // refresh and import of an at- id: GET authentication-tokens/:id, which names its team
    const byId = await send('GET', `authentication-tokens/${id}`)
    t.equal(byId.status, 200)
    t.equal(byId.body.data.relationships.team.data.id, team, 'import reads the team from it')
    t.equal(byId.body.data.attributes.token, null)
    t.equal((await send('GET', `teams/${team}/authentication-token`)).status, 200, 'the description-less token is untouched')
    t.equal((await send('DELETE', `authentication-tokens/${id}`)).status, 204)
    t.equal((await send('GET', `authentication-tokens/${id}`)).status, 404)
    t.equal((await send('DELETE', `authentication-tokens/${id}`)).status, 404)
    t.equal((await send('DELETE', `teams/${team}/authentication-token`)).status, 204)
  })

  t.test('tfe_organization_token: read (404), create without a body (old) and with {"type":""} (new), read, destroy', async (t) => {
    t.equal((await send('GET', 'organizations/acme/authentication-token')).status, 404, 'the provider reads before it creates')
    const old = await send('POST', 'organizations/acme/authentication-token')
    t.equal(old.status, 201)
    const oldSecret = old.body.data.attributes.token as string
    t.equal((await send('GET', 'organization/audit-trail', undefined, oldSecret)).status, 200, 'acts as the organization')
    const current = await send('POST', 'organizations/acme/authentication-token', '{"data":{"type":""}}\n')
    t.equal(current.status, 201)
    t.equal((await send('GET', 'organization/audit-trail', undefined, oldSecret)).status, 401, 'regenerated: the old secret is revoked')
    const read = await send('GET', 'organizations/acme/authentication-token')
    t.equal(read.status, 200)
    t.equal(read.body.data.attributes.token, null)
    t.equal(read.body.data.attributes['expired-at'], null, 'none was asked for: none is answered (the provider would replace it forever)')
    t.equal((await send('DELETE', 'organizations/acme/authentication-token')).status, 204)
    t.equal((await send('GET', 'organizations/acme/authentication-token')).status, 404)
    t.equal((await send('DELETE', 'organizations/acme/authentication-token')).status, 404)
  })
})
