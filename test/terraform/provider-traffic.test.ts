import t from 'tap'
import { applySeedFile } from '../../src/directory/seed-file.js'
import { DEMO_SEED } from '../../src/app.js'
import { build, ENGINE } from '../helper.js'

/**
 * DESIGN §7: the Terraform provider's (terraform-provider-tfe, through go-tfe) traffic for each
 * command, replayed step by step as it sends it — query strings as it writes them, `include=`
 * included — against the demo data, asserting what the provider reads from each answer.
 */
const TOKEN = 'acme-owners-demo-token'
const WORKSPACE = 'ws-DemoProduction01'
const TEAM = 'team-DemoTeamops12345' // visible to the organization, with no access to prod yet

t.test(`the Terraform provider's traffic (${ENGINE})`, async (t) => {
  const app = await build(t)
  await applySeedFile(app.db, DEMO_SEED)
  const send = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => {
    const res = await app.inject({
      method,
      url: `/api/v2${path}`,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/vnd.api+json', 'user-agent': 'go-tfe' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) })
    })
    return { status: res.statusCode, body: res.body === '' ? undefined : res.json(), headers: res.headers }
  }
  let id = ''

  t.test('create tfe_team_access: ping, read workspace and team, POST with their ids, read back', async (t) => {
    const ping = await send('GET', '/ping')
    t.equal(ping.status, 204)
    t.equal(ping.headers['tfp-api-version'], '2.6')
    const ws = await send('GET', `/workspaces/${WORKSPACE}`)
    t.equal(ws.status, 200)
    t.match(ws.body.data, { type: 'workspaces', id: WORKSPACE, attributes: { name: 'prod' } })
    t.match(ws.body.data.id, /^ws-[a-zA-Z0-9]{16}$/, 'an id the provider accepts')
    const team = await send('GET', `/teams/${TEAM}`)
    t.equal(team.status, 200)
    t.match(team.body.data, { type: 'teams', id: TEAM, attributes: { name: 'ops' } })
    const created = await send('POST', '/team-workspaces', {
      data: {
        type: 'team-workspaces',
        attributes: { access: 'custom', runs: 'apply', variables: 'read', 'state-versions': 'read-outputs', 'sentinel-mocks': 'none', 'workspace-locking': false, 'run-tasks': false, 'policy-overrides': true },
        relationships: { team: { data: { type: 'teams', id: team.body.data.id } }, workspace: { data: { type: 'workspaces', id: ws.body.data.id } } }
      }
    })
    t.equal(created.status, 200)
    id = created.body.data.id
    const read = await send('GET', `/team-workspaces/${id}`)
    t.equal(read.status, 200)
    t.match(read.body.data, {
      type: 'team-workspaces',
      id,
      attributes: { access: 'custom', runs: 'apply', variables: 'read', 'state-versions': 'read-outputs', 'sentinel-mocks': 'none', 'workspace-locking': false, 'run-tasks': false, 'policy-overrides': true },
      relationships: { team: { data: { id: TEAM } }, workspace: { data: { id: WORKSPACE } } }
    })
  })

  t.test('refresh / plan: ping, then read every attribute and the team id', async (t) => {
    t.equal((await send('GET', '/ping')).status, 204)
    const read = await send('GET', `/team-workspaces/${id}`)
    t.equal(read.status, 200)
    t.equal(read.body.data.relationships.team.data.id, TEAM)
    t.same(Object.keys(read.body.data.attributes).sort(), ['access', 'policy-overrides', 'run-tasks', 'runs', 'sentinel-mocks', 'state-versions', 'variables', 'workspace-locking'])
  })

  t.test('update: PATCH without data.id (older providers), then with it (current), each read back', async (t) => {
    const older = await send('PATCH', `/team-workspaces/${id}`, { data: { type: 'team-workspaces', attributes: { access: 'write' } } })
    t.equal(older.status, 200)
    t.match((await send('GET', `/team-workspaces/${id}`)).body.data.attributes, { access: 'write', runs: 'apply', 'policy-overrides': false })
    const current = await send('PATCH', `/team-workspaces/${id}`, {
      data: { type: 'team-workspaces', id, attributes: { access: 'custom', runs: 'plan', variables: 'write', 'state-versions': 'write', 'sentinel-mocks': 'read', 'workspace-locking': true, 'run-tasks': true, 'policy-overrides': false } }
    })
    t.equal(current.status, 200)
    t.match((await send('GET', `/team-workspaces/${id}`)).body.data.attributes, { access: 'custom', runs: 'plan', variables: 'write', 'run-tasks': true })
  })

  t.test('import ORG/WORKSPACE/tws-…: the workspace by names, then the row', async (t) => {
    const ws = await send('GET', '/organizations/acme/workspaces/prod')
    t.equal(ws.status, 200)
    t.equal(ws.body.data.id, WORKSPACE)
    const read = await send('GET', `/team-workspaces/${id}`)
    t.equal(read.body.data.relationships.workspace.data.id, ws.body.data.id, 'the row belongs to the imported workspace')
  })

  t.test('data "tfe_team": the teams list, older (include=, following next-page) and current (filter[names])', async (t) => {
    let found: any
    for (let page: number | null = 1; page !== null && found === undefined;) {
      const list = await send('GET', `/organizations/acme/teams?include=${page === 1 ? '' : `&page%5Bnumber%5D=${page}`}`)
      t.equal(list.status, 200)
      found = list.body.data.find((x: any) => x.attributes.name === 'devs')
      page = list.body.meta.pagination['next-page']
    }
    t.equal(found?.id, 'team-DemoTeamdevs1234')
    const current = await send('GET', '/organizations/acme/teams?filter%5Bnames%5D=devs')
    t.equal(current.status, 200)
    t.same(current.body.data.map((x: any) => [x.id, x.attributes.name]), [['team-DemoTeamdevs1234', 'devs']])
    t.match(current.body.meta.pagination, { 'current-page': 1, 'next-page': null, 'total-count': 1 })
  })

  t.test('data "tfe_workspace": the workspace by names', async (t) => {
    const ws = await send('GET', '/organizations/acme/workspaces/staging')
    t.equal(ws.status, 200)
    t.match(ws.body.data, { id: 'ws-DemoStaging00001', type: 'workspaces', attributes: { name: 'staging' } })
  })

  t.test('data "tfe_team_access": the workspace, then the list by workspace (older) and by workspace and team (current)', async (t) => {
    t.equal((await send('GET', `/workspaces/${WORKSPACE}`)).status, 200)
    const older = await send('GET', `/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=${WORKSPACE}`)
    t.equal(older.status, 200)
    t.ok(older.body.data.some((x: any) => x.relationships.team.data.id === TEAM), 'the provider finds the team in the list')
    const current = await send('GET', `/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=${WORKSPACE}&filter%5Bteam%5D%5Bid%5D=${TEAM}`)
    t.equal(current.status, 200)
    t.same(current.body.data.map((x: any) => [x.id, x.relationships.team.data.id]), [[id, TEAM]])
  })

  t.test('destroy: DELETE, and a second DELETE is the 404 the provider takes as gone', async (t) => {
    t.equal((await send('DELETE', `/team-workspaces/${id}`)).status, 204)
    const again = await send('DELETE', `/team-workspaces/${id}`)
    t.equal(again.status, 404)
    t.same(again.body, { errors: [{ status: '404', title: 'not found' }] })
  })

  t.test('the reads the provider makes that are not served: the ordinary 404', async (t) => {
    for (const path of [`/workspaces/${WORKSPACE}/relationships/remote-state-consumers`, `/workspaces/${WORKSPACE}/effective-tag-bindings`]) {
      t.same((await send('GET', path)).body, { errors: [{ status: '404', title: 'not found' }] }, path)
    }
  })
})
