import t from 'tap'
import { Migrator } from 'kysely'
import { migrations } from '../../migrations/index.js'
import { connect } from '../../src/db/connect.js'
import { withSearchPath } from '../../src/db/migrate.js'
import { IMPLICIT_PERMISSIONS } from '../../src/access/permissions.js'
import { build, ENGINE, freshLocation, snapshot } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { addBody, client, LIST, NOT_FOUND } from './client.js'

/** DESIGN §4's rules for filter[team][id] and policy-overrides, one test each. */
const seed = {
  ...world,
  organizations: world.organizations.map((o, i) => i === 0
    ? { ...o, 'team-access': [...o['team-access'], { id: 'tws-writers-dev', team: 'writers', workspace: 'dev', access: 'read' }] }
    : o)
}

t.test(`filter[team][id] on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed })
  const api = client(t, app)
  const ids = (res: { json: () => any }) => res.json().data.map((r: { id: string }) => r.id)
  const byTeam = (team: string, extra = '') => `${LIST}?filter%5Bteam%5D%5Bid%5D=${team}${extra}`

  t.test('alone: every row of the team across its organization’s workspaces, in creation order', async (t) => {
    const res = await api.listUrl(byTeam('team-writers'), { token: TOKENS.organization })
    t.equal(res.statusCode, 200)
    t.same(ids(res), ['tws-writers-prod', 'tws-writers-dev'])
    t.same(ids(await api.listUrl(byTeam('team-writers'), { token: TOKENS.reader })), ['tws-writers-prod', 'tws-writers-dev'], 'a member who reads every workspace (read-workspaces): a team visible to the organization')
    t.same(ids(await api.listUrl(byTeam('team-writers'), { token: TOKENS.otherSecretMember })), ['tws-writers-dev'],
      'a member who reads only ws-dev (team blue has a row there): not the row on ws-prod, which it cannot read')
    t.same(ids(await api.listUrl(byTeam('team-red'), { token: TOKENS.secretMember })), ['tws-red-prod'], 'a member of the secret team')
  })

  t.test('alone: a team the caller may not see, or that does not exist, is 404', async (t) => {
    const missing = await api.listUrl(byTeam('team-nope'), { token: TOKENS.organization })
    t.equal(missing.statusCode, 404)
    t.same(missing.json(), NOT_FOUND)
    for (const [who, token] of [['another member', TOKENS.writer], ['a workspace admin who is no owner', TOKENS.manager], ['another organization', TOKENS.otherOrganization]] as const) {
      const res = await api.listUrl(byTeam('team-red'), { token })
      t.equal(res.statusCode, 404, who)
      t.equal(res.body, missing.body, `${who}: byte-identical to a missing team`)
    }
  })

  t.test('with filter[workspace][id]: the rows of that team on that workspace', async (t) => {
    const both = (ws: string, team: string) => `${LIST}?filter%5Bworkspace%5D%5Bid%5D=${ws}&filter%5Bteam%5D%5Bid%5D=${team}`
    t.same(ids(await api.listUrl(both('ws-prod', 'team-red'), { token: TOKENS.organization })), ['tws-red-prod'])
    t.same(ids(await api.listUrl(both('ws-dev', 'team-red'), { token: TOKENS.organization })), [], 'none there')
    t.same(ids(await api.listUrl(both('ws-prod', 'team-red'), { token: TOKENS.writer })), [], 'a row the caller may not see is not listed')
    t.equal((await api.listUrl(both('ws-prod', 'team-writers'), { token: TOKENS.otherSecretMember })).statusCode, 404, 'a workspace the caller cannot read')
    t.equal((await api.listUrl(both('ws-nope', 'team-red'), { token: TOKENS.organization })).statusCode, 404, 'an unknown workspace')
  })

  t.test('pagination links keep both filters', async (t) => {
    const res = await api.listUrl(`${LIST}?filter%5Bworkspace%5D%5Bid%5D=ws-prod&filter%5Bteam%5D%5Bid%5D=team-red&page%5Bsize%5D=1`, { token: TOKENS.organization })
    t.same(res.json().meta.pagination, { 'current-page': 1, 'page-size': 1, 'prev-page': null, 'next-page': null, 'total-pages': 1, 'total-count': 1 })
    t.match(res.json().links.self, /\?filter%5Bworkspace%5D%5Bid%5D=ws-prod&filter%5Bteam%5D%5Bid%5D=team-red&page%5Bnumber%5D=1&page%5Bsize%5D=1$/)
    const alone = await api.listUrl(byTeam('team-writers', '&page%5Bsize%5D=1'), { token: TOKENS.organization })
    t.same(alone.json().meta.pagination, { 'current-page': 1, 'page-size': 1, 'prev-page': null, 'next-page': 2, 'total-pages': 2, 'total-count': 2 })
    t.match(alone.json().links.next, /\?filter%5Bteam%5D%5Bid%5D=team-writers&page%5Bnumber%5D=2&page%5Bsize%5D=1$/)
  })
})

t.test(`policy-overrides on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world })
  const api = client(t, app)
  const owner = { token: TOKENS.organization }

  t.test('custom-only: under a fixed level, true is 422 naming /data/attributes/policy-overrides, and nothing changes', async (t) => {
    const before = await snapshot(app.db)
    const add = await api.add(addBody('team-green', 'ws-prod', { access: 'admin', 'policy-overrides': true }), owner)
    t.equal(add.statusCode, 422)
    t.same(add.json(), { errors: [{ status: '422', title: 'invalid attribute', detail: "Policy overrides is read-only when access level is 'admin'; use the 'custom' access level to set this attribute.", source: { pointer: '/data/attributes/policy-overrides' } }] })
    const update = await api.update('tws-writers-prod', { data: { attributes: { 'policy-overrides': true } } }, owner)
    t.equal(update.statusCode, 422)
    t.match(update.json(), { errors: [{ source: { pointer: '/data/attributes/policy-overrides' } }] })
    t.same(await snapshot(app.db), before)
  })

  t.test('the value a fixed level implies (false) is accepted', async (t) => {
    const res = await api.add(addBody('team-green', 'ws-prod', { access: 'write', 'policy-overrides': false }), owner)
    t.equal(res.statusCode, 200)
    t.same(res.json().data.attributes, { access: 'write', ...IMPLICIT_PERMISSIONS.write })
    t.equal(res.json().data.attributes['policy-overrides'], false)
    await app.db.deleteFrom('team_workspaces').where('id', '=', res.json().data.id).execute()
  })

  t.test('custom sets it; a fixed level resets it', async (t) => {
    const added = await api.add(addBody('team-green', 'ws-prod', { access: 'custom', 'policy-overrides': true }), owner)
    t.equal(added.statusCode, 200)
    t.equal(added.json().data.attributes['policy-overrides'], true)
    const id = added.json().data.id
    t.equal((await app.db.selectFrom('team_workspaces').select('policy_overrides').where('id', '=', id).executeTakeFirstOrThrow()).policy_overrides, true)
    const reset = await api.update(id, { data: { type: 'team-workspaces', id, attributes: { access: 'write' } } }, owner)
    t.equal(reset.statusCode, 200)
    t.equal(reset.json().data.attributes['policy-overrides'], false)
    await app.db.deleteFrom('team_workspaces').where('id', '=', id).execute()
  })
})

t.test(`existing rows read back policy-overrides false after the migration (${ENGINE})`, async (t) => {
  const connection = await connect(await freshLocation(t))
  t.teardown(() => connection.close())
  // migrations run as migrate() runs them: on one connection, with the plugin's schema as search_path
  await withSearchPath(connection.db, connection.schema, async (db) => {
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, migrationTableName: 'team_access_migrations', migrationLockTableName: 'team_access_migrations_lock', migrationTableSchema: connection.schema })
    t.notOk((await migrator.migrateTo('0005_row_team_visibility')).error, 'migrated up to the one before')
    await db.insertInto('organizations').values({ id: 'org-m', name: 'm' }).execute()
    await db.insertInto('teams').values({ id: 'team-m', organization_id: 'org-m', name: 'm' }).execute()
    await db.insertInto('workspaces').values({ id: 'ws-m', organization_id: 'org-m', name: 'm' }).execute()
    await db.insertInto('team_workspaces').values({ id: 'tws-old', organization_id: 'org-m', team_id: 'team-m', workspace_id: 'ws-m', access: 'custom', runs: 'apply', variables: 'write', state_versions: 'write', sentinel_mocks: 'read', workspace_locking: true, run_tasks: true }).execute()
    t.notOk((await migrator.migrateToLatest()).error, 'then to the latest')
  })
  const row = await connection.db.selectFrom('team_workspaces').selectAll().where('id', '=', 'tws-old').executeTakeFirstOrThrow()
  t.equal(row.policy_overrides, false)
})
