import t from 'tap'
import { build, ENGINE } from '../helper.js'
import { client, LIST } from './client.js'

/** ws-big holds 45 rows: 40 of organization-visible teams and 5 of secret ones. */
const teams = Array.from({ length: 45 }, (_, i) => ({
  id: `team-t${String(i).padStart(2, '0')}`,
  name: `t${String(i).padStart(2, '0')}`,
  visibility: i % 9 === 4 ? 'secret' : 'organization',
  members: i === 0 ? ['member'] : []
}))
const seed = {
  users: [{ username: 'member', tokens: ['member-token-1'] }],
  organizations: [{
    name: 'big',
    tokens: ['big-org-token'],
    teams,
    workspaces: [{ id: 'ws-big', name: 'big' }],
    'team-access': teams.map((team) => ({ id: `tws-${team.name}`, team: team.name, workspace: 'big', access: 'read' }))
  }]
}
const owner = { token: 'big-org-token', headers: { host: 'team-access.example' } }
const url = (n: number, size = 20) =>
  `http://team-access.example/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-big&page%5Bnumber%5D=${n}&page%5Bsize%5D=${size}`
const ids = (body: any) => body.data.map((r: { id: string }) => r.id)

t.test(`pagination on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed })
  const api = client(t, app)
  const all = ids((await api.list('ws-big', owner)).json())
  t.equal(all.length, 45, 'no page parameter: every row')
  t.same(all, teams.map((x) => `tws-${x.name}`), 'in creation order')

  t.test('the first page', async (t) => {
    const body = (await api.list('ws-big', owner, '&page%5Bnumber%5D=1&page%5Bsize%5D=20')).json()
    t.same(ids(body), all.slice(0, 20))
    t.same(body.meta.pagination, { 'current-page': 1, 'page-size': 20, 'prev-page': null, 'next-page': 2, 'total-pages': 3, 'total-count': 45 })
    t.same(body.links, { self: url(1), first: url(1), prev: null, next: url(2), last: url(3) })
  })

  t.test('a middle page', async (t) => {
    const body = (await api.list('ws-big', owner, '&page%5Bnumber%5D=2&page%5Bsize%5D=20')).json()
    t.same(ids(body), all.slice(20, 40))
    t.same(body.meta.pagination, { 'current-page': 2, 'page-size': 20, 'prev-page': 1, 'next-page': 3, 'total-pages': 3, 'total-count': 45 })
    t.same(body.links, { self: url(2), first: url(1), prev: url(1), next: url(3), last: url(3) })
  })

  t.test('the last page', async (t) => {
    const body = (await api.list('ws-big', owner, '&page%5Bnumber%5D=3&page%5Bsize%5D=20')).json()
    t.same(ids(body), all.slice(40))
    t.same(body.meta.pagination, { 'current-page': 3, 'page-size': 20, 'prev-page': 2, 'next-page': null, 'total-pages': 3, 'total-count': 45 })
    t.equal(body.links.next, null)
  })

  t.test('past the end: 200 with empty data', async (t) => {
    const res = await api.list('ws-big', owner, '&page%5Bnumber%5D=9&page%5Bsize%5D=20')
    t.equal(res.statusCode, 200)
    const body = res.json()
    t.same(body.data, [])
    t.same(body.meta.pagination, { 'current-page': 9, 'page-size': 20, 'prev-page': 3, 'next-page': null, 'total-pages': 3, 'total-count': 45 })
    t.same(body.links, { self: url(9), first: url(1), prev: url(3), next: null, last: url(3) })
  })

  t.test('a page number far past the end is still 200 with empty data', async (t) => {
    const res = await api.list('ws-big', owner, '&page%5Bnumber%5D=123456789012')
    t.equal(res.statusCode, 200)
    t.same(res.json().data, [])
    t.equal(res.json().meta.pagination['current-page'], 123456789012)
  })

  t.test('page[size] alone: the first page of that size', async (t) => {
    const body = (await api.list('ws-big', owner, '&page%5Bsize%5D=7')).json()
    t.same(ids(body), all.slice(0, 7))
    t.match(body.meta.pagination, { 'current-page': 1, 'page-size': 7, 'total-pages': 7 })
  })

  t.test('page[number] alone: that page of 20', async (t) => {
    const body = (await api.list('ws-big', owner, '&page%5Bnumber%5D=2')).json()
    t.same(ids(body), all.slice(20, 40))
    t.match(body.meta.pagination, { 'current-page': 2, 'page-size': 20 })
  })

  t.test('pages of 100 (the largest) and of 1 (the smallest)', async (t) => {
    t.same(ids((await api.list('ws-big', owner, '&page%5Bsize%5D=100')).json()), all)
    const one = (await api.list('ws-big', owner, '&page%5Bsize%5D=1&page%5Bnumber%5D=45')).json()
    t.same(ids(one), [all[44]])
    t.match(one.meta.pagination, { 'total-pages': 45, 'next-page': null })
  })

  t.test('pages follow the caller’s visibility', async (t) => {
    const body = (await api.list('ws-big', { token: 'member-token-1' }, '&page%5Bsize%5D=100')).json()
    t.equal(body.meta.pagination['total-count'], 40, 'the five secret rows are not counted')
    t.equal(body.data.length, 40)
  })

  t.test('an empty list is one empty page', async (t) => {
    await app.db.insertInto('workspaces').values({ id: 'ws-empty', organization_id: (await app.db.selectFrom('organizations').select('id').executeTakeFirstOrThrow()).id, name: 'empty' }).execute()
    const body = (await api.list('ws-empty', owner, '&page%5Bnumber%5D=1')).json()
    t.same(body.data, [])
    t.same(body.meta.pagination, { 'current-page': 1, 'page-size': 20, 'prev-page': null, 'next-page': null, 'total-pages': 1, 'total-count': 0 })
  })

  const bad: Array<[string, string, string]> = [
    ['&page%5Bsize%5D=0', 'page[size]', 'page[size] must be between 1 and 100'],
    ['&page%5Bsize%5D=101', 'page[size]', 'page[size] must be between 1 and 100'],
    ['&page%5Bsize%5D=-5', 'page[size]', 'page[size] must be between 1 and 100'],
    ['&page%5Bsize%5D=ten', 'page[size]', 'page[size] must be between 1 and 100'],
    ['&page%5Bsize%5D=1.5', 'page[size]', 'page[size] must be between 1 and 100'],
    ['&page%5Bsize%5D=', 'page[size]', 'page[size] must be between 1 and 100'],
    ['&page%5Bsize%5D=99999999999999999999', 'page[size]', 'page[size] must be between 1 and 100'],
    ['&page%5Bnumber%5D=0', 'page[number]', 'page[number] must be a positive integer'],
    ['&page%5Bnumber%5D=-1', 'page[number]', 'page[number] must be a positive integer'],
    ['&page%5Bnumber%5D=two', 'page[number]', 'page[number] must be a positive integer'],
    ['&page%5Bnumber%5D=1&page%5Bnumber%5D=2', 'page[number]', '']
  ]
  for (const [query, parameter, detail] of bad) {
    t.test(`bad page parameters (${decodeURIComponent(query)}) → 422`, async (t) => {
      const res = await api.listUrl(`${LIST}?filter%5Bworkspace%5D%5Bid%5D=ws-big${query}`, owner)
      t.equal(res.statusCode, 422)
      t.match(res.json(), { errors: [{ status: '422', source: { parameter }, ...(detail ? { detail } : {}) }] })
    })
  }
})
