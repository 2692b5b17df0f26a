import t from 'tap'
import { build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { addBody, client } from '../team-workspaces/client.js'
import { recordFigure } from './figures.js'

const owner = { token: TOKENS.organization }

t.test(`races on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world })
  const api = client(t, app)
  const rowOf = (id: string) => app.db.selectFrom('team_workspaces').selectAll().where('id', '=', id).executeTakeFirst()

  t.test('50 concurrent identical adds × 20 rounds: exactly one success each round', async (t) => {
    const rounds: string[] = []
    for (let round = 0; round < 20; round++) {
      const results = await Promise.all(Array.from({ length: 50 }, () => api.add(addBody('team-green', 'ws-prod', { access: 'read' }), owner)))
      const statuses = results.map((r) => r.statusCode)
      const ok = statuses.filter((s) => s === 200).length
      const taken = statuses.filter((s) => s === 422).length
      rounds.push(`${ok}/${taken}`)
      if (ok !== 1 || taken !== 49) t.fail(`round ${round}: ${ok} successes, ${taken} taken, others ${statuses.filter((s) => s !== 200 && s !== 422)}`)
      const rows = await app.db.selectFrom('team_workspaces').select('id').where('team_id', '=', 'team-green').where('workspace_id', '=', 'ws-prod').execute()
      if (rows.length !== 1) t.fail(`round ${round}: ${rows.length} rows`)
      await app.db.deleteFrom('team_workspaces').where('team_id', '=', 'team-green').execute()
    }
    t.ok(rounds.every((r) => r === '1/49'), '1 success and 49 "already taken" in every round')
    await recordFigure(`concurrent identical adds (${ENGINE})`, `20 rounds × 50: ${rounds.filter((r) => r === '1/49').length}/20 rounds with exactly one success, 0 duplicates`, 'exactly 1 success per round')
  })

  t.test('concurrent PATCHes of different attributes of one custom row: none is lost', async (t) => {
    let lost = 0
    for (let round = 0; round < 10; round++) {
      await app.db.updateTable('team_workspaces').set({ access: 'custom', runs: 'read', variables: 'none', state_versions: 'none', sentinel_mocks: 'none', workspace_locking: false, run_tasks: false }).where('id', '=', 'tws-red-prod').execute()
      const changes = [{ runs: 'apply' }, { variables: 'write' }, { 'state-versions': 'read-outputs' }, { 'sentinel-mocks': 'read' }, { 'workspace-locking': true }, { 'run-tasks': true }]
      const results = await Promise.all(changes.map((attributes) => api.update('tws-red-prod', { data: { attributes } }, owner)))
      if (results.some((r) => r.statusCode !== 200)) t.fail(`round ${round}: ${results.map((r) => r.statusCode)}`)
      const row = await rowOf('tws-red-prod')
      // every serial order of these six gives the same row: all six applied
      const want = { runs: 'apply', variables: 'write', state_versions: 'read-outputs', sentinel_mocks: 'read', workspace_locking: true, run_tasks: true }
      if (Object.entries(want).some(([k, v]) => (row as any)[k] !== v)) lost++
    }
    t.equal(lost, 0, '10 rounds of 6 concurrent PATCHes, no lost update')
    await recordFigure(`concurrent PATCHes (${ENGINE})`, `10 rounds × 6 attributes: ${lost} lost updates`, '0 lost updates')
  })

  t.test('DELETE × DELETE: one 204, the other 404', async (t) => {
    const odd: string[] = []
    for (let round = 0; round < 20; round++) {
      const id = (await api.add(addBody('team-green', 'ws-dev', { access: 'read' }), owner)).json().data.id
      const statuses = (await Promise.all([api.remove(id, owner), api.remove(id, owner)])).map((r) => r.statusCode).sort()
      if (statuses.join() !== '204,404') odd.push(statuses.join())
    }
    t.same(odd, [])
    await recordFigure(`DELETE × DELETE (${ENGINE})`, `20 rounds: ${20 - odd.length} with one 204 and one 404, no 5xx`, 'one 204, one 404')
  })

  t.test('PATCH × DELETE: the delete wins or comes second; never a 5xx, never a row left by a 404', async (t) => {
    const odd: string[] = []
    for (let round = 0; round < 20; round++) {
      const id = (await api.add(addBody('team-green', 'ws-dev', { access: 'read' }), owner)).json().data.id
      const [patch, del] = await Promise.all([api.update(id, { data: { attributes: { access: 'write' } } }, owner), api.remove(id, owner)])
      const pair = `${patch.statusCode}/${del.statusCode}`
      if (!['200/204', '404/204'].includes(pair)) odd.push(pair)
      if (await rowOf(id)) odd.push('row left behind')
    }
    t.same(odd, [])
    await recordFigure(`PATCH × DELETE (${ENGINE})`, '20 rounds: every one 200/204 or 404/204, no row left, no 5xx', 'the delete always lands; no 5xx')
  })
})
