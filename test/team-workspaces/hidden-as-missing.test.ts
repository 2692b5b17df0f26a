import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { client, LIST } from './client.js'

/**
 * DESIGN §3: listing or showing a workspace's team access takes read access on the workspace. To
 * a member who cannot read it, the workspace and every row on it are not there — byte for byte
 * the answer of an id that does not exist (status, body, headers), through show, through
 * filter[workspace][id] (alone, with filter[team][id], paginated or not), and through
 * filter[team][id], where a row on a hidden workspace is as absent as a row that was never made:
 * not listed, not counted, no page of its own.
 *
 * The caller is blue-member: team blue (secret) has a row on ws-dev and none on ws-prod or ws-stage,
 * so it reads ws-dev alone. Team writers (visible to the organization) has a row on each of the
 * three workspaces: one the caller reads, two it cannot.
 */
const seed = {
  ...world,
  organizations: world.organizations.map((o, i) => i === 0
    ? {
        ...o,
        workspaces: [...o.workspaces, { id: 'ws-stage', name: 'stage' }],
        'team-access': [...o['team-access'],
          { id: 'tws-writers-dev', team: 'writers', workspace: 'dev', access: 'read' },
          { id: 'tws-writers-stage', team: 'writers', workspace: 'stage', access: 'write' }]
      }
    : o)
}
// every request carries the same request id, which the answer echoes: then only the clock differs
const CALLER = { token: TOKENS.otherSecretMember, headers: { 'x-request-id': 'hidden-or-missing' } }
const HIDDEN_ROWS = ['tws-admins-prod', 'tws-writers-prod', 'tws-red-prod', 'tws-writers-stage']
const q = (params: Record<string, string>) => `${LIST}?${Object.entries(params).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`
const PAGES: Array<Record<string, string>> = [{}, { 'page[size]': '1' }, { 'page[size]': '1', 'page[number]': '2' }, { 'page[number]': '3' }]

/** Everything a client sees of an answer, but the clock. */
const seen = (res: LightMyRequestResponse) => {
  const { date, ...headers } = res.headers
  return { status: res.statusCode, headers, body: res.body }
}

/** `res` is, byte for byte, the answer `expected`; and that answer is the one it should be. */
const same = (t: Test, res: LightMyRequestResponse, expected: LightMyRequestResponse, status: number, what: string) => {
  t.equal(expected.statusCode, status, `${what}: the reference answer is ${status}`)
  t.same(seen(res), seen(expected), `${what}: status, headers and body are those of the reference`)
  t.equal(res.body, expected.body, `${what}: the very same bytes`)
}

t.test(`a workspace the caller cannot read, and its rows, answer as missing ones on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed })
  const api = client(t, app)

  t.test('the caller reads ws-dev, and neither ws-prod nor ws-stage', async (t) => {
    const read = async (id: string) => (await app.inject({ url: `/api/v2/workspaces/${id}`, headers: { authorization: `Bearer ${CALLER.token}` } })).statusCode
    t.same([await read('ws-dev'), await read('ws-prod'), await read('ws-stage')], [200, 404, 404])
  })

  t.test('show: a row on a hidden workspace is a missing row, whatever its team', async (t) => {
    const missing = await api.show('tws-does-not-exist', CALLER)
    for (const id of HIDDEN_ROWS) same(t, await api.show(id, CALLER), missing, 404, id)
    const owner = await api.show('tws-writers-prod', { token: TOKENS.organization })
    t.equal(owner.statusCode, 200, 'the row exists: an owner reads it')
    t.equal((await api.show('tws-writers-dev', CALLER)).statusCode, 200, 'a row of the same team on the workspace the caller reads')
  })

  t.test('filter[workspace][id]: a hidden workspace is a missing one, paginated or not', async (t) => {
    for (const page of PAGES) {
      const missing = await api.listUrl(q({ 'filter[workspace][id]': 'ws-does-not-exist', ...page }), CALLER)
      for (const ws of ['ws-prod', 'ws-stage']) {
        same(t, await api.listUrl(q({ 'filter[workspace][id]': ws, ...page }), CALLER), missing, 404, `${ws} ${JSON.stringify(page)}`)
      }
    }
    t.equal((await api.list('ws-dev', CALLER)).statusCode, 200, 'the workspace it reads is listed')
  })

  t.test('both filters: a hidden workspace is a missing one, for a team the caller sees or not', async (t) => {
    for (const page of PAGES) {
      for (const team of ['team-writers', 'team-red', 'team-blue', 'team-does-not-exist']) {
        const missing = await api.listUrl(q({ 'filter[workspace][id]': 'ws-does-not-exist', 'filter[team][id]': team, ...page }), CALLER)
        same(t, await api.listUrl(q({ 'filter[workspace][id]': 'ws-prod', 'filter[team][id]': team, ...page }), CALLER), missing, 404, `ws-prod ${team} ${JSON.stringify(page)}`)
      }
    }
  })

  t.test('filter[team][id]: a team the caller may not see is a missing one', async (t) => {
    for (const page of PAGES) {
      const missing = await api.listUrl(q({ 'filter[team][id]': 'team-does-not-exist', ...page }), CALLER)
      same(t, await api.listUrl(q({ 'filter[team][id]': 'team-red', ...page }), CALLER), missing, 404, `team-red ${JSON.stringify(page)}`)
    }
  })

  t.test('filter[team][id]: rows on hidden workspaces are as absent as rows never made', async (t) => {
    const byTeam = (page: Record<string, string>) => q({ 'filter[team][id]': 'team-writers', ...page })
    const asked = async () => await Promise.all(PAGES.map(async (page) => await api.listUrl(byTeam(page), CALLER)))
    const withHidden = await asked()
    t.same(withHidden[0]!.json().data.map((r: { id: string }) => r.id), ['tws-writers-dev'], 'only the row on the workspace the caller reads')
    t.same(withHidden[1]!.json().meta.pagination, { 'current-page': 1, 'page-size': 1, 'prev-page': null, 'next-page': null, 'total-pages': 1, 'total-count': 1 },
      'counted: only that row')
    t.same(withHidden[2]!.json().data, [], 'no second page')
    t.notMatch(withHidden.map((r) => r.body).join('\n'), /prod|stage/, 'no name of a hidden workspace, anywhere')
    t.equal((await api.listUrl(byTeam({}), { token: TOKENS.organization })).json().data.length, 3, 'an owner lists all three')

    // the same requests in a world where the rows on hidden workspaces were never made
    const hidden = await app.db.selectFrom('team_workspaces').selectAll().where('id', 'in', ['tws-writers-prod', 'tws-writers-stage']).execute()
    t.equal(hidden.length, 2)
    await app.db.deleteFrom('team_workspaces').where('id', 'in', hidden.map((r) => r.id)).execute()
    const without = await asked()
    await app.db.insertInto('team_workspaces').values(hidden).execute()
    PAGES.forEach((page, i) => same(t, withHidden[i]!, without[i]!, 200, `team-writers ${JSON.stringify(page)}`))
  })
})
