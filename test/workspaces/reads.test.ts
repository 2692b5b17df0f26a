import t from 'tap'
import { bearer, build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'

/**
 * DESIGN §7, who may read a workspace: anyone whose effective access on it is at least read —
 * owners, manage-workspaces and read-workspaces teams, teams with a team-workspace row on it. Any
 * other workspace answers the 404 of one that does not exist, byte for byte.
 */
t.test(`workspace reads (DESIGN §7) on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world })
  const get = (url: string, token: string) => app.inject({ url: `/api/v2${url}`, headers: bearer(token) })
  const missing = await get('/workspaces/ws-missing0000000001', TOKENS.organization)
  t.equal(missing.statusCode, 404)

  const readers: Array<[string, string]> = [
    ['an organization token (owner)', TOKENS.organization],
    ['the owners team token', TOKENS.ownersTeam],
    ['a member of the owners team', TOKENS.owner],
    ['a manage-workspaces team', TOKENS.manager],
    ['a read-workspaces team', TOKENS.reader],
    ['a team with a write row on it', TOKENS.writer],
    ['a team with an admin row on it', TOKENS.workspaceAdmin],
    ['a team with a custom row on it', TOKENS.secretMember],
    ['a team token whose team has a row on it', TOKENS.nonOwnerTeam]
  ]
  const others: Array<[string, string]> = [
    ['a member with no row on it (a row elsewhere)', TOKENS.otherSecretMember],
    ['a user in no team', TOKENS.noTeam],
    ['another organization', TOKENS.otherOrganization]
  ]

  t.test('GET /workspaces/:id: the workspace, for effective access of at least read', async (t) => {
    for (const [who, token] of readers) {
      const res = await get('/workspaces/ws-prod', token)
      t.equal(res.statusCode, 200, who)
      t.match(res.headers['content-type'], /^application\/vnd\.api\+json/)
      t.match(res.json(), {
        data: {
          id: 'ws-prod',
          type: 'workspaces',
          attributes: { name: 'prod', 'created-at': /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/ },
          relationships: { organization: { data: { id: 'acme', type: 'organizations' } } },
          links: { self: '/api/v2/organizations/acme/workspaces/prod' }
        }
      }, who)
    }
    for (const [who, token] of others) {
      const res = await get('/workspaces/ws-prod', token)
      t.equal(res.statusCode, 404, who)
      t.equal(res.body, missing.body, `${who}: byte-identical to a missing id`)
    }
    t.equal((await get('/workspaces/ws-dev', TOKENS.otherSecretMember)).statusCode, 200, 'a row on the workspace is enough, whatever its level')
  })

  t.test('GET /organizations/:org/workspaces/:name: the same, by names', async (t) => {
    for (const [who, token] of readers) {
      const res = await get('/organizations/acme/workspaces/prod?include=', token)
      t.equal(res.statusCode, 200, who)
      t.equal(res.json().data.id, 'ws-prod')
    }
    const nameMissing = await get('/organizations/acme/workspaces/nope', TOKENS.organization)
    t.equal(nameMissing.statusCode, 404)
    for (const [who, token] of others) {
      const res = await get('/organizations/acme/workspaces/prod', token)
      t.equal(res.statusCode, 404, who)
      t.equal(res.body, nameMissing.body, `${who}: byte-identical to a missing name`)
    }
    t.equal((await get('/organizations/globex/workspaces/prod', TOKENS.organization)).body, nameMissing.body, 'another organization’s name finds nothing')
  })

  t.test('GET /organizations/:org/workspaces: a page of those the caller may read, by name, search[name]', async (t) => {
    const names = async (url: string, token: string) => (await get(url, token)).json().data?.map((w: any) => w.attributes.name)
    t.same(await names('/organizations/acme/workspaces', TOKENS.organization), ['dev', 'prod'], 'an owner: all, ordered by name')
    t.same(await names('/organizations/acme/workspaces', TOKENS.writer), ['prod'], 'a member: those it may read')
    t.same(await names('/organizations/acme/workspaces', TOKENS.otherSecretMember), ['dev'])
    t.same(await names('/organizations/acme/workspaces', TOKENS.noTeam), undefined, 'no member: 404 (no data)')
    t.same(await names('/organizations/acme/workspaces?search%5Bname%5D=PR', TOKENS.organization), ['prod'], 'search[name]: a substring, any case')
    const page = await get('/organizations/acme/workspaces?page%5Bsize%5D=1&page%5Bnumber%5D=2&search%5Bname%5D=', TOKENS.organization)
    t.equal(page.statusCode, 200)
    t.same(page.json().meta.pagination, { 'current-page': 2, 'page-size': 1, 'prev-page': 1, 'next-page': null, 'total-pages': 2, 'total-count': 2 })
    t.match(page.json().links.first, /\/api\/v2\/organizations\/acme\/workspaces\?search%5Bname%5D=&page%5Bnumber%5D=1&page%5Bsize%5D=1$/)
    const always = await get('/organizations/acme/workspaces', TOKENS.organization)
    t.same(always.json().meta.pagination, { 'current-page': 1, 'page-size': 20, 'prev-page': null, 'next-page': null, 'total-pages': 1, 'total-count': 2 }, 'always paginated')
    const notMember = await get('/organizations/acme/workspaces', TOKENS.otherOrganization)
    const noOrg = await get('/organizations/nope/workspaces', TOKENS.otherOrganization)
    t.equal(notMember.statusCode, 404)
    t.equal(notMember.body, noOrg.body, 'an organization the caller is not a member of: the 404 of one that does not exist')
    t.equal((await get('/organizations/acme/workspaces?page%5Bsize%5D=101', TOKENS.organization)).statusCode, 422)
  })

  t.test('include: empty is accepted (and effective_tag_bindings on a workspace, which the provider sends: nothing included), anything else is 400', async (t) => {
    for (const url of ['/workspaces/ws-prod?include=', '/organizations/acme/workspaces?include=', '/organizations/acme/workspaces/prod?include=',
      '/workspaces/ws-prod?include=effective_tag_bindings', '/organizations/acme/workspaces/prod?include=effective_tag_bindings']) {
      t.equal((await get(url, TOKENS.organization)).statusCode, 200, url)
    }
    for (const url of ['/workspaces/ws-prod?include=organization', '/organizations/acme/workspaces?include=x', '/organizations/acme/workspaces/prod?include=current_run']) {
      const res = await get(url, TOKENS.organization)
      t.equal(res.statusCode, 400, url)
      t.same(res.json(), { errors: [{ status: '400', title: 'bad request', detail: 'include not supported', source: { parameter: 'include' } }] })
    }
  })

  t.test('reads the provider makes that are not served answer the ordinary 404', async (t) => {
    for (const url of ['/workspaces/ws-prod/relationships/remote-state-consumers', '/workspaces/ws-prod/effective-tag-bindings']) {
      const res = await get(url, TOKENS.organization)
      t.equal(res.statusCode, 404, url)
      t.same(res.json(), { errors: [{ status: '404', title: 'not found' }] })
    }
  })
})
