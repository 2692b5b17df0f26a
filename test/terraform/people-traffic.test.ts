import t from 'tap'
import { readFileSync } from 'node:fs'
import { applySeedDocument } from '../../src/directory/seed.js'
import { DEMO_SEED } from '../../src/app.js'
import { build, ENGINE } from '../helper.js'

/**
 * DESIGN §14.2, §14.3: the Terraform provider's traffic for `tfe_organization_membership`,
 * `data "tfe_organization_membership"`, `tfe_team_organization_member` and (newest only)
 * `tfe_team_organization_members` — create, refresh, import, update, destroy — at v0.22.0 (go-tfe
 * v0.10.2: `include=user` reads, `teams/:id?include=organization-memberships`) and at the newest
 * provider (go-tfe v1.110.0 for the membership resource; the Kiota-made go-tfe v2 for the data
 * source and the team resources: `id` before `type`, no trailing newline, query parameters in
 * their template's order, `GET teams/:id/relationships/organization-memberships?page%5Bsize%5D=100`),
 * replayed byte for byte, asserting what the provider reads from each answer. Only a 404 tells
 * the provider a resource is gone.
 */
const OWNER = 'acme-owners-demo-token'
const OU = /^ou-[1-9A-HJ-NP-Za-km-z]{16}$/

t.test(`the Terraform provider's people traffic (${ENGINE})`, async (t) => {
  const app = await build(t)
  const demo = JSON.parse(readFileSync(DEMO_SEED, 'utf8'))
  demo.users.find((u: any) => u.username === 'bob').email = 'bob@acme.test'
  demo.users.find((u: any) => u.username === 'carol').email = 'carol@acme.test'
  await applySeedDocument(app.db, demo)
  /** A request as the provider's client sends it: `raw` is the body byte for byte; v2 requests name the provider as their agent. */
  const send = async (method: 'GET' | 'POST' | 'DELETE', path: string, raw?: string, v2 = false) => {
    const res = await app.inject({
      method,
      url: `/api/v2/${path}`,
      headers: {
        authorization: `Bearer ${OWNER}`,
        accept: 'application/vnd.api+json',
        'user-agent': v2 ? 'terraform-provider-tfe/0.80.0' : 'go-tfe',
        ...(method === 'GET' ? {} : { 'content-type': 'application/vnd.api+json' })
      },
      ...(raw === undefined ? {} : { payload: raw })
    })
    if (res.statusCode !== 204) t.match(res.headers['content-type'], /^application\/vnd\.api\+json/, `${method} ${path}: a JSON:API answer`)
    return { status: res.statusCode, body: res.body === '' ? undefined : res.json() }
  }
  /** What the provider keeps of a membership read with include=user: its state. */
  const state = (doc: any) => {
    const user = (doc.included ?? []).find((x: any) => x.type === 'users' && x.id === doc.data.relationships.user.data.id)
    return { email: doc.data.attributes.email, organization: doc.data.relationships.organization.data.id, user_id: doc.data.relationships.user.data.id, username: user?.attributes.username ?? '' }
  }
  const goBody = (ids: string[]) => `{"data":[${ids.map((id) => `{"type":"organization-memberships","id":"${id}"}`).join(',')}]}\n`
  const kiotaBody = (ids: string[]) => `{"data":[${ids.map((id) => `{"id":"${id}","type":"organization-memberships"}`).join(',')}]}`

  t.test('tfe_organization_membership at v0.22.0: create, read (user.id always there), refresh, import by id, destroy', async (t) => {
    const created = await send('POST', 'organizations/acme/organization-memberships', '{"data":{"type":"organization-memberships","attributes":{"email":"Dana.New+tf@Example.com"}}}\n')
    t.equal(created.status, 201)
    const id = created.body.data.id as string
    t.match(id, OU)
    const read = await send('GET', `organization-memberships/${id}?include=user`)
    t.equal(read.status, 200)
    t.match(state(read.body), { email: 'Dana.New+tf@Example.com', organization: 'acme', user_id: /^user-/ }, 'the email exactly as configured (ForceNew), a user always (nil panics)')
    t.same(state((await send('GET', `organization-memberships/${id}?include=user`)).body), state(read.body), 'refresh: no drift')
    // the person arrives (a seed declares the email): the same membership, the same user, now active
    await applySeedDocument(app.db, { ...demo, users: [...demo.users, { username: 'dana', email: 'Dana.New+tf@Example.com' }] })
    const arrived = await send('GET', `organization-memberships/${id}?include=user`)
    t.same(state(arrived.body), { ...state(read.body), username: 'dana' }, 'the user id the state holds is still the user')
    t.equal(arrived.body.data.attributes.status, 'active')
    t.equal((await send('DELETE', `organization-memberships/${id}`)).status, 204)
    t.equal((await send('GET', `organization-memberships/${id}?include=user`)).status, 404, 'gone: the provider drops it from state')
    t.equal((await send('DELETE', `organization-memberships/${id}`)).status, 404, 'a destroy of what is gone: 404, which the provider counts as done')
  })

  t.test('data "tfe_organization_membership" at v0.22.0: the list with include=user, matched on the included user’s email, then read', async (t) => {
    let found: string | undefined
    for (let page = 1; found === undefined; page++) {
      const list = await send('GET', `organizations/acme/organization-memberships?include=user${page === 1 ? '' : `&page%5Bnumber%5D=${page}`}`)
      t.equal(list.status, 200)
      const users = new Map(list.body.included.map((u: any) => [u.id, u.attributes]))
      found = list.body.data.find((m: any) => (users.get(m.relationships.user.data.id) as any)?.email === 'carol@acme.test')?.id
      if (list.body.meta.pagination['current-page'] >= list.body.meta.pagination['total-pages']) break
    }
    t.match(found, OU, 'carol, by her email')
    t.match(state((await send('GET', `organization-memberships/${found!}?include=user`)).body), { email: 'carol@acme.test', user_id: 'user-DemoCarol0000001' })
  })

  t.test('tfe_team_organization_member at v0.22.0: add, read through include=organization-memberships, destroy', async (t) => {
    const invited = (await send('POST', 'organizations/acme/organization-memberships', '{"data":{"type":"organization-memberships","attributes":{"email":"erin@acme.test"}}}\n')).body.data.id as string
    const team = 'team-DemoTeamops12345'
    const ids = (doc: any) => doc.data.relationships['organization-memberships'].data.map((m: any) => m.id)
    t.equal((await send('POST', `teams/${team}/relationships/organization-memberships`, goBody([invited]))).status, 204, 'an invited membership may be added')
    const read = await send('GET', `teams/${team}?include=organization-memberships`)
    t.equal(read.status, 200)
    t.ok(ids(read.body).includes(invited), 'refresh finds it: no re-create every plan')
    t.equal(read.body.data.attributes['users-count'], 0, 'an invited person holds nothing yet')
    t.equal((await send('DELETE', `teams/${team}/relationships/organization-memberships`, goBody([invited]))).status, 204)
    t.notOk(ids((await send('GET', `teams/${team}?include=organization-memberships`)).body).includes(invited), 'gone: dropped from state')
    t.equal((await send('DELETE', `organization-memberships/${invited}`)).status, 204)
  })

  t.test('tfe_organization_membership, newest: read with the username, import ORG/EMAIL', async (t) => {
    const created = await send('POST', 'organizations/acme/organization-memberships', '{"data":{"type":"organization-memberships","attributes":{"email":"fay@acme.test"}}}\n')
    t.equal(created.status, 201)
    const id = created.body.data.id as string
    t.same(state((await send('GET', `organization-memberships/${id}?include=user`)).body), { email: 'fay@acme.test', organization: 'acme', user_id: created.body.data.relationships.user.data.id, username: '' }, 'no username until fay arrives: null, which the provider writes as ""')
    // import acme/bob@acme.test: go-tfe v1's query, keys sorted, the value QueryEscaped
    const imported = await send('GET', 'organizations/acme/organization-memberships?filter%5Bemail%5D=bob%40acme.test&include=user')
    t.equal(imported.body.data.length, 1, 'exactly one item')
    t.match(state({ ...imported.body, data: imported.body.data[0] }), { email: 'bob@acme.test', user_id: 'user-DemoBob000000001', username: 'bob' }, 'whose included user’s email is the one given')
    t.equal((await send('DELETE', `organization-memberships/${id}`)).status, 204)
  })

  t.test('data "tfe_organization_membership", newest (go-tfe v2): by email, by username, then read', async (t) => {
    const byEmail = await send('GET', 'organizations/acme/organization-memberships?filter%5Bemail%5D=bob%40acme.test&include=user', undefined, true)
    t.equal(byEmail.status, 200)
    t.equal(byEmail.body.data.length, 1)
    t.match(state({ ...byEmail.body, data: byEmail.body.data[0] }), { email: 'bob@acme.test', username: 'bob' })
    const byName = await send('GET', 'organizations/acme/organization-memberships?include=user&q=carol', undefined, true)
    t.same(byName.body.data.map((m: any) => state({ ...byName.body, data: m }).username), ['carol'], 'q finds by username')
    const read = await send('GET', `organization-memberships/${byEmail.body.data[0].id as string}?include=user`, undefined, true)
    t.match(state(read.body), { email: 'bob@acme.test', organization: 'acme', user_id: 'user-DemoBob000000001', username: 'bob' })
  })

  t.test('tfe_team_organization_member(s), newest (go-tfe v2): add, read the relationship’s pages, read each membership, update, destroy', async (t) => {
    const team = 'team-DemoTeamops12345'
    const membership = async (email: string) => (await send('GET', `organizations/acme/organization-memberships?filter%5Bemail%5D=${encodeURIComponent(email)}&include=user`, undefined, true)).body.data[0].id as string
    const [bob, carol] = [await membership('bob@acme.test'), await membership('carol@acme.test')]
    const listed = async () => {
      const ids: string[] = []
      for (let page: number | null = 1; page !== null;) {
        const res = await send('GET', `teams/${team}/relationships/organization-memberships?${page === 1 ? '' : `page%5Bnumber%5D=${page}&`}page%5Bsize%5D=100`, undefined, true)
        t.equal(res.status, 200)
        ids.push(...res.body.data.map((m: any) => m.id))
        page = res.body.meta.pagination['next-page']
      }
      return ids.sort()
    }
    /** tfe_team_organization_members' read: the list, then each membership with its user (a service account is left out). */
    const members = async () => {
      const kept: string[] = []
      for (const id of await listed()) {
        const read = await send('GET', `organization-memberships/${id}?include=user`, undefined, true)
        t.equal(read.status, 200)
        const user = read.body.included?.find((x: any) => x.type === 'users')
        if (user?.attributes['is-service-account'] !== true) kept.push(id)
      }
      return kept
    }
    // tfe_team_organization_member: one id, Kiota's body
    t.equal((await send('POST', `teams/${team}/relationships/organization-memberships`, kiotaBody([bob]), true)).status, 204)
    t.same(await listed(), [bob], 'refresh finds it')
    t.equal((await send('DELETE', `teams/${team}/relationships/organization-memberships`, kiotaBody([bob]), true)).status, 204)
    t.same(await listed(), [], 'gone')
    // import acme/carol@acme.test/ops: the membership by email, the team by name
    t.equal((await send('GET', 'organizations/acme/teams?filter%5Bnames%5D=ops', undefined, true)).body.data[0].id, team)

    // tfe_team_organization_members: create all, read, update (add one, remove one), destroy
    t.equal((await send('POST', `teams/${team}/relationships/organization-memberships`, kiotaBody([carol, bob]), true)).status, 204)
    t.same(await members(), [bob, carol].sort())
    const invited = (await send('POST', 'organizations/acme/organization-memberships', '{"data":{"type":"organization-memberships","attributes":{"email":"gus@acme.test"}}}\n')).body.data.id as string
    t.equal((await send('POST', `teams/${team}/relationships/organization-memberships`, kiotaBody([invited]), true)).status, 204, 'update: the added set')
    t.same(await members(), [bob, carol, invited].sort(), 'an invited one is the team’s too: no drift')
    t.equal((await send('DELETE', `teams/${team}/relationships/organization-memberships`, kiotaBody([bob]), true)).status, 204, 'update: the removed set, of those still there')
    const left = await members()
    t.same(left, [carol, invited].sort())
    t.equal((await send('DELETE', `teams/${team}/relationships/organization-memberships`, kiotaBody(left), true)).status, 204, 'destroy: every one still there')
    t.same(await members(), [], 'none kept: the provider counts the resource gone')
    t.equal((await send('GET', `organization-memberships/${bob}`, undefined, true)).body.data.attributes.status, 'active', 'bob is still a member of acme')
    t.equal((await send('GET', 'teams/team-missing/relationships/organization-memberships?page%5Bsize%5D=100', undefined, true)).status, 404, 'a team that is gone: 404')
  })
})
