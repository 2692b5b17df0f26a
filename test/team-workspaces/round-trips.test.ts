import t from 'tap'
import Fastify from 'fastify'
import teamAccess from '../../src/plugin.js'
import { connect } from '../../src/db/connect.js'
import { migrate } from '../../src/db/migrate.js'
import { applySeed } from '../../src/directory/seed.js'
import { freshLocation, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { addBody, client, LIST } from './client.js'

/**
 * The SQL round trips of each operation, token resolution included, counted by a Kysely log
 * hook on the database the plugin uses, so that the cost per call cannot silently grow.
 * A success is one statement, whatever the operation: a token seen in the last minute names its
 * caller without a lookup, and the statement itself checks that the token still does
 * (src/auth/token-identities.ts). A token not seen lately costs its lookup first (+1). A refusal
 * costs at most two more: the write's question "why nothing?" (taken, or the row's level), and
 * the lookup that makes sure the refusal is not owed to a revoked token (then it is 401).
 */
const BUDGET = { show: 1, list: 1, add: 1, update: 1, remove: 1 }
const REFUSAL = 2

t.test(`round trips per operation on ${ENGINE}`, async (t) => {
  let queries = 0
  // Kysely's log hook sees every statement the driver sends, however it was built
  const connection = await connect(await freshLocation(t), { log: () => { queries++ } })
  t.teardown(() => connection.close())
  const counted = connection.db
  await migrate(connection.db)
  await applySeed(connection.db, world)
  const app = Fastify()
  await app.register(teamAccess, { prefix: '/api/v2', database: counted, migrate: false })
  t.teardown(() => app.close())
  const api = client(t, app)
  const count = async (send: () => Promise<{ statusCode: number }>, status: number) => {
    queries = 0
    const res = await send()
    if (res.statusCode !== status) throw new Error(`expected ${status}, got ${res.statusCode}`)
    return queries
  }
  const owner = { token: TOKENS.organization }
  const member = { token: TOKENS.writer }

  t.test('a token not seen lately: its lookup, then the statement; seen: the statement alone', async (t) => {
    t.equal(await count(() => api.show('tws-writers-prod', member), 200), 2, 'first request: the lookup, then the statement')
    t.equal(await count(() => api.show('tws-writers-prod', member), 200), 1, 'next request: the statement')
    await count(() => api.list('ws-prod', owner), 200) // the owner's token is seen from now on too
  })

  t.test('show', async (t) => {
    t.ok(await count(() => api.show('tws-writers-prod', member), 200) <= BUDGET.show, `≤ ${BUDGET.show}`)
    t.ok(await count(() => api.show('tws-red-prod', member), 404) <= BUDGET.show + 1, 'a denial: the statement, and the token looked up again')
  })
  t.test('list', async (t) => {
    t.ok(await count(() => api.list('ws-prod', owner), 200) <= BUDGET.list)
    t.ok(await count(() => api.list('ws-prod', member, '&page%5Bsize%5D=1&page%5Bnumber%5D=2'), 200) <= BUDGET.list, 'paginated, count included')
    t.ok(await count(() => api.listUrl(`${LIST}?filter%5Bteam%5D%5Bid%5D=team-writers&page%5Bsize%5D=1`, member), 200) <= BUDGET.list, 'by team, paginated, count included')
  })
  t.test('add', async (t) => {
    t.ok(await count(() => api.add(addBody('team-green', 'ws-prod', { access: 'read' }), owner), 200) <= BUDGET.add)
    t.ok(await count(() => api.add(addBody('team-green', 'ws-prod', { access: 'read' }), owner), 422) <= BUDGET.add + REFUSAL, 'already taken')
    t.ok(await count(() => api.add(addBody('team-green', 'ws-dev', { access: 'read' }), member), 404) <= BUDGET.add + REFUSAL, 'denied')
  })
  t.test('update', async (t) => {
    t.ok(await count(() => api.update('tws-red-prod', { data: { attributes: { runs: 'apply' } } }, owner), 200) <= BUDGET.update)
    t.ok(await count(() => api.update('tws-writers-prod', { data: { attributes: { runs: 'plan' } } }, owner), 422) <= BUDGET.update + REFUSAL, 'refused by the row’s level')
    t.ok(await count(() => api.update('tws-red-prod', { data: { attributes: { access: 'read' } } }, member), 404) <= BUDGET.update + REFUSAL, 'denied')
  })
  t.test('remove', async (t) => {
    t.ok(await count(() => api.remove('tws-red-prod', member), 404) <= BUDGET.remove + 1, 'denied: the statement, and the token looked up again')
    t.ok(await count(() => api.remove('tws-red-prod', owner), 204) <= BUDGET.remove)
  })
  t.test('a write’s audit event costs no round trip: the one statement', async (t) => {
    const events = async () => (await connection.db.selectFrom('audit_events').select('id').execute()).length
    const before = await events()
    t.equal(await count(() => api.add(addBody('team-blue', 'ws-prod', { access: 'read' }), owner), 200), 1, 'add')
    const id = (await connection.db.selectFrom('team_workspaces').select('id').where('team_id', '=', 'team-blue').where('workspace_id', '=', 'ws-prod').executeTakeFirstOrThrow()).id
    t.equal(await count(() => api.update(id, { data: { attributes: { access: 'write' } } }, owner), 200), 1, 'update')
    t.equal(await count(() => api.update(id, { data: { attributes: { access: 'write' } } }, owner), 200), 1, 'an update that changes nothing: the one statement, which records nothing')
    t.equal(await count(() => api.remove(id, owner), 204), 1, 'remove')
    t.equal(await events(), before + 3, 'and each recorded its event')
  })
  t.test('the host\'s check: one statement for one workspace, and one for a page of them', async (t) => {
    const caller = { kind: 'user' as const, userId: 'user-writer' }
    queries = 0
    await app.teamAccess.effectiveAccess({ caller, workspaceId: 'ws-prod' })
    t.equal(queries, 1, 'effectiveAccess')
    const workspaceIds = ['ws-prod', 'ws-dev', ...Array.from({ length: 48 }, (_, i) => `ws-missing-${i}`)]
    queries = 0
    const many = await app.teamAccess.effectiveAccessMany({ caller, workspaceIds })
    t.equal(queries, 1, 'effectiveAccessMany of 50 workspaces')
    t.equal(many.size, 50)
  })
  t.test('the counter counts', async (t) => {
    t.equal(await count(() => api.show('tws-writers-prod', member), 200), 1, 'the one statement')
  })
})
