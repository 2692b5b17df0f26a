import t, { type Test } from 'tap'
import { build, snapshot, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { addBody, client, NOT_FOUND } from './client.js'

/**
 * DESIGN §3, cell by cell: every kind of caller × every operation. Allowed writes are undone
 * after each cell; denied calls must leave every table as it was, and their 404 must be
 * byte-identical to the 404 of an id that does not exist.
 */
const ALL = ['tws-admins-prod', 'tws-writers-prod', 'tws-red-prod']
const VISIBLE = ['tws-writers-prod'] // the only organization-visible team with a row on ws-prod

// DESIGN §7 on top: the workspace read (effective access ≥ read on ws-prod), the secret team
// team-red read (owners, and its members), the teams list, and filter[team][id]=team-red.
// DESIGN §3: listing or showing ws-prod's rows takes the same workspace read, through either
// filter: filter[team][id]=team-writers (a team every member sees, with one row, on ws-prod)
// lists that row only to callers who read ws-prod.
type Reads = { readWorkspace: 200 | 404 | 401, readSecretTeam: 200 | 404 | 401, teams: string[] | 404 | 401, teamFilter: string[] | 404 | 401 }
type Expect = Reads & { list: string[] | 404 | 401, showVisible: 200 | 404 | 401, showSecret: 200 | 404 | 401, write: boolean | 401, visibleTeamFilter: string[] | 404 | 401 }
const ALL_TEAMS = ['admins', 'blue', 'green', 'managers', 'owners', 'readers', 'red', 'writers']
const VISIBLE_TEAMS = ['green', 'writers']
const ownerReads: Reads = { readWorkspace: 200, readSecretTeam: 200, teams: ALL_TEAMS, teamFilter: ['tws-red-prod'] }
const memberReads = (ownTeams: string[], readsWorkspace: boolean): Reads =>
  ({ readWorkspace: readsWorkspace ? 200 : 404, readSecretTeam: ownTeams.includes('red') ? 200 : 404, teams: [...VISIBLE_TEAMS, ...ownTeams].sort(), teamFilter: ownTeams.includes('red') ? ['tws-red-prod'] : 404 })
const owner: Expect = { list: ALL, showVisible: 200, showSecret: 200, write: true, visibleTeamFilter: VISIBLE, ...ownerReads }
const admin = (ownTeams: string[]): Expect => ({ list: ALL, showVisible: 200, showSecret: 200, write: true, visibleTeamFilter: VISIBLE, ...memberReads(ownTeams, true) })
const member = (secret: boolean, reads: Reads): Expect => reads.readWorkspace === 200
  ? { list: secret ? ['tws-writers-prod', 'tws-red-prod'] : VISIBLE, showVisible: 200, showSecret: secret ? 200 : 404, write: false, visibleTeamFilter: VISIBLE, ...reads }
  // a member who cannot read ws-prod: its rows are not there for it, whichever way it asks
  : { list: 404, showVisible: 404, showSecret: 404, write: false, visibleTeamFilter: [], ...reads }
const stranger: Expect = { list: 404, showVisible: 404, showSecret: 404, write: false, readWorkspace: 404, readSecretTeam: 404, teams: 404, teamFilter: 404, visibleTeamFilter: 404 }

const MATRIX: Array<[string, string | null, Expect]> = [
  ['organization token', TOKENS.organization, owner],
  ['owners-team token', TOKENS.ownersTeam, owner],
  ['owner user', TOKENS.owner, owner],
  ['workspace admin through team access', TOKENS.workspaceAdmin, admin(['admins'])],
  ['member of a manage-workspaces team', TOKENS.manager, admin(['managers'])],
  ['writer', TOKENS.writer, member(false, memberReads([], true))],
  ['member of a read-workspaces team', TOKENS.reader, member(false, memberReads(['readers'], true))],
  ['member of the secret team on the workspace', TOKENS.secretMember, member(true, memberReads(['red'], true))],
  ['member of another secret team', TOKENS.otherSecretMember, member(false, memberReads(['blue'], false))],
  ['non-owner team token', TOKENS.nonOwnerTeam, member(false, memberReads([], true))],
  ['user of another organization', TOKENS.otherOrganization, stranger],
  ['user in no team', TOKENS.noTeam, stranger],
  ['no token', null, { list: 401, showVisible: 401, showSecret: 401, write: 401, readWorkspace: 401, readSecretTeam: 401, teams: 401, teamFilter: 401, visibleTeamFilter: 401 }]
]

t.test(`authorization matrix on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world })
  const api = client(t, app)
  const missing = await api.show('tws-does-not-exist', { token: TOKENS.organization })
  t.equal(missing.statusCode, 404)
  t.same(missing.json(), NOT_FOUND)
  const missingWorkspace = await app.inject({ url: '/api/v2/workspaces/ws-does-not-exist', headers: { authorization: `Bearer ${TOKENS.organization}` } })
  t.equal(missingWorkspace.body, missing.body, 'every resource’s 404 is the one document')

  /** A denial must look exactly like a missing id, byte for byte, and change nothing. */
  const denied = async (t: Test, res: { statusCode: number, body: string, headers: Record<string, unknown> }, before: unknown, status: 404 | 401) => {
    t.equal(res.statusCode, status)
    if (status === 404) {
      t.equal(res.body, missing.body, 'byte-identical to the 404 of a missing id')
      t.equal(res.headers['content-type'], missing.headers['content-type'])
    }
    t.same(await snapshot(app.db), before, 'nothing changed')
  }

  for (const [name, token, expect] of MATRIX) {
    t.test(name, async (t) => {
      const call = { token }

      t.test('list ws-prod', async (t) => {
        for (const extra of ['', '&page%5Bsize%5D=100']) {
          const res = await api.list('ws-prod', call, extra)
          if (typeof expect.list === 'number') {
            t.equal(res.statusCode, expect.list, `list${extra}`)
            if (expect.list === 404) t.equal(res.body, missing.body, 'byte-identical to the 404 of a missing id')
            continue
          }
          t.equal(res.statusCode, 200)
          t.same(res.json().data.map((r: { id: string }) => r.id).sort(), [...expect.list].sort())
          if (extra !== '') t.equal(res.json().meta.pagination['total-count'], expect.list.length, 'the count is of the rows listed')
        }
      })

      t.test('show a visible row', async (t) => {
        const res = await api.show('tws-writers-prod', call)
        t.equal(res.statusCode, expect.showVisible)
        if (expect.showVisible === 200) t.equal(res.json().data.id, 'tws-writers-prod')
        else if (expect.showVisible === 404) t.equal(res.body, missing.body)
      })

      t.test('show a secret row', async (t) => {
        const res = await api.show('tws-red-prod', call)
        t.equal(res.statusCode, expect.showSecret)
        if (expect.showSecret === 200) t.equal(res.json().data.id, 'tws-red-prod')
        else if (expect.showSecret === 404) t.equal(res.body, missing.body)
      })

      t.test('read the workspace (by id and by name)', async (t) => {
        for (const url of ['/api/v2/workspaces/ws-prod', '/api/v2/organizations/acme/workspaces/prod']) {
          const res = await app.inject({ url, headers: token === null ? {} : { authorization: `Bearer ${token}` } })
          t.equal(res.statusCode, expect.readWorkspace, url)
          if (expect.readWorkspace === 200) t.equal(res.json().data.id, 'ws-prod')
          else if (expect.readWorkspace === 404) t.equal(res.body, missingWorkspace.body, 'byte-identical to a missing workspace')
        }
      })

      t.test('read the secret team', async (t) => {
        const res = await app.inject({ url: '/api/v2/teams/team-red', headers: token === null ? {} : { authorization: `Bearer ${token}` } })
        t.equal(res.statusCode, expect.readSecretTeam)
        if (expect.readSecretTeam === 404) t.equal(res.body, missingWorkspace.body, 'byte-identical to a missing team')
      })

      t.test('list the organization’s teams', async (t) => {
        const res = await app.inject({ url: '/api/v2/organizations/acme/teams', headers: token === null ? {} : { authorization: `Bearer ${token}` } })
        if (typeof expect.teams === 'number') return t.equal(res.statusCode, expect.teams)
        t.same(res.json().data.map((x: { attributes: { name: string } }) => x.attributes.name), expect.teams)
      })

      t.test('list by filter[team][id] of the secret team', async (t) => {
        const res = await api.listUrl('/api/v2/team-workspaces?filter%5Bteam%5D%5Bid%5D=team-red', call)
        if (typeof expect.teamFilter === 'number') {
          t.equal(res.statusCode, expect.teamFilter)
          if (expect.teamFilter === 404) t.equal(res.body, missing.body)
          return
        }
        t.same(res.json().data.map((r: { id: string }) => r.id), expect.teamFilter)
      })

      t.test('list by filter[team][id] of a team visible to the organization, with a row on ws-prod', async (t) => {
        for (const extra of ['', '&page%5Bsize%5D=100']) {
          const res = await api.listUrl(`/api/v2/team-workspaces?filter%5Bteam%5D%5Bid%5D=team-writers${extra}`, call)
          if (typeof expect.visibleTeamFilter === 'number') {
            t.equal(res.statusCode, expect.visibleTeamFilter)
            if (expect.visibleTeamFilter === 404) t.equal(res.body, missing.body)
            continue
          }
          t.equal(res.statusCode, 200)
          t.same(res.json().data.map((r: { id: string }) => r.id), expect.visibleTeamFilter)
          if (extra !== '') t.equal(res.json().meta.pagination['total-count'], expect.visibleTeamFilter.length, 'the count is of the rows listed')
        }
      })

      t.test('add', async (t) => {
        const before = await snapshot(app.db)
        const res = await api.add(addBody('team-green', 'ws-prod', { access: 'read' }), call)
        if (expect.write !== true) return await denied(t, res, before, expect.write === 401 ? 401 : 404)
        t.equal(res.statusCode, 200)
        const id = res.json().data.id
        t.ok(await app.db.selectFrom('team_workspaces').select('id').where('id', '=', id).executeTakeFirst(), 'the row exists')
        await app.db.deleteFrom('team_workspaces').where('id', '=', id).execute()
      })

      t.test('update', async (t) => {
        const before = await snapshot(app.db)
        const res = await api.update('tws-red-prod', { data: { attributes: { access: 'plan' } } }, call)
        if (expect.write !== true) return await denied(t, res, before, expect.write === 401 ? 401 : 404)
        t.equal(res.statusCode, 200)
        const row = await app.db.selectFrom('team_workspaces').selectAll().where('id', '=', 'tws-red-prod').executeTakeFirstOrThrow()
        t.equal(row.access, 'plan', 'the row changed')
        await app.db.updateTable('team_workspaces').set({ access: 'custom', runs: 'plan', variables: 'none', state_versions: 'none', sentinel_mocks: 'none', workspace_locking: true, run_tasks: false })
          .where('id', '=', 'tws-red-prod').execute()
        t.same(await snapshot(app.db), before, 'restored')
      })

      t.test('remove', async (t) => {
        const before = await snapshot(app.db)
        const row = await app.db.selectFrom('team_workspaces').selectAll().where('id', '=', 'tws-red-prod').executeTakeFirstOrThrow()
        const res = await api.remove('tws-red-prod', call)
        if (expect.write !== true) return await denied(t, res, before, expect.write === 401 ? 401 : 404)
        t.equal(res.statusCode, 204)
        t.equal(res.body, '')
        t.notOk(await app.db.selectFrom('team_workspaces').select('id').where('id', '=', 'tws-red-prod').executeTakeFirst(), 'the row is gone')
        await app.db.insertInto('team_workspaces').values(row).execute()
        t.same(await snapshot(app.db), before, 'restored')
      })
    })
  }
})
