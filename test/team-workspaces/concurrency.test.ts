import t from 'tap'
import { build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { addBody, client } from './client.js'

t.test(`20 concurrent identical adds on ${ENGINE}: exactly one succeeds`, async (t) => {
  const app = await build(t, { seed: world })
  const api = client(t, app)
  const body = addBody('team-green', 'ws-prod', { access: 'write' })
  const results = await Promise.all(Array.from({ length: 20 }, () => api.add(body, { token: TOKENS.organization })))
  const statuses = results.map((r) => r.statusCode)
  t.equal(statuses.filter((s) => s === 200).length, 1, 'one 200')
  t.equal(statuses.filter((s) => s === 422).length, 19, 'nineteen 422')
  for (const r of results.filter((x) => x.statusCode === 422)) {
    t.match(r.json(), { errors: [{ status: '422', title: 'invalid attribute', detail: 'Team has already been taken' }] })
  }
  const rows = await app.db.selectFrom('team_workspaces').select('id')
    .where('team_id', '=', 'team-green').where('workspace_id', '=', 'ws-prod').execute()
  t.equal(rows.length, 1, 'one row')
})

t.test(`concurrent updates of different attributes of a custom row on ${ENGINE}: none is lost`, async (t) => {
  const app = await build(t, { seed: world })
  const api = client(t, app)
  const owner = { token: TOKENS.organization }
  const changes = [{ runs: 'apply' }, { variables: 'write' }, { 'state-versions': 'read-outputs' }, { 'sentinel-mocks': 'read' }, { 'workspace-locking': false }, { 'run-tasks': true }]
  const results = await Promise.all(changes.map((attributes) => api.update('tws-red-prod', { data: { attributes } }, owner)))
  t.same(results.map((r) => r.statusCode), changes.map(() => 200))
  const row = await app.db.selectFrom('team_workspaces').selectAll().where('id', '=', 'tws-red-prod').executeTakeFirstOrThrow()
  t.match(row, { access: 'custom', runs: 'apply', variables: 'write', state_versions: 'read-outputs', sentinel_mocks: 'read', workspace_locking: false, run_tasks: true })
})

t.test(`an update that would change nothing is judged against the row as a concurrent write left it, on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world })
  const api = client(t, app)
  const owner = { token: TOKENS.organization }
  // tws-red-prod is custom with runs=plan: the body changes nothing, unless the level changes first.
  // A transaction switches the row to write (runs=apply) and holds it while the update is sent (on
  // PostgreSQL the update waits for the row's lock; on PGlite, for the one connection), then commits:
  // the update must then be judged against write, which refuses runs=plan, not answered from the
  // row as it was when the statement began.
  let update: ReturnType<typeof api.update> | undefined
  await app.db.transaction().execute(async (trx) => {
    await trx.updateTable('team_workspaces').set({ access: 'write', runs: 'apply', variables: 'write', state_versions: 'write', sentinel_mocks: 'read', workspace_locking: true, run_tasks: false })
      .where('id', '=', 'tws-red-prod').execute()
    update = api.update('tws-red-prod', { data: { attributes: { runs: 'plan' } } }, owner)
    await new Promise((resolve) => setTimeout(resolve, 200))
  })
  const res = await update!
  t.equal(res.statusCode, 422, 'the level the row has now refuses the body')
  t.match(res.json(), { errors: [{ status: '422', title: 'invalid attribute', source: { pointer: '/data/attributes/runs' } }] })
  const row = await app.db.selectFrom('team_workspaces').select(['access', 'runs']).where('id', '=', 'tws-red-prod').executeTakeFirstOrThrow()
  t.same(row, { access: 'write', runs: 'apply' }, 'the concurrent write stands')
})
