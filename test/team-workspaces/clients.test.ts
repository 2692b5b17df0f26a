import t from 'tap'
import { build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { addBody, client, LIST } from './client.js'

/** The request shapes go-tfe, the Terraform provider and terrasnek send, one test each. */
const JSONAPI = { 'content-type': 'application/vnd.api+json' }
const owner = { token: TOKENS.organization }

t.test(`what real clients send, on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world })
  const api = client(t, app)

  t.test('percent-encoded filter keys (go-tfe), and raw brackets', async (t) => {
    const encoded = await api.listUrl(`${LIST}?filter%5Bworkspace%5D%5Bid%5D=ws-prod`, owner)
    t.equal(encoded.statusCode, 200)
    t.equal(encoded.json().data.length, 3)
    const raw = await api.listUrl(`${LIST}?filter[workspace][id]=ws-prod`, owner)
    t.same(raw.json(), encoded.json())
    const paged = await api.listUrl(`${LIST}?filter%5Bworkspace%5D%5Bid%5D=ws-prod&page%5Bnumber%5D=1&page%5Bsize%5D=2`, owner)
    t.equal(paged.json().data.length, 2, 'encoded page keys too')
  })

  t.test('Content-Type on GET and DELETE (go-tfe sends it on every request)', async (t) => {
    const show = await api.show('tws-writers-prod', { ...owner, headers: JSONAPI })
    t.equal(show.statusCode, 200)
    const list = await api.list('ws-prod', { ...owner, headers: JSONAPI })
    t.equal(list.statusCode, 200)
    const added = await api.add(addBody('team-green', 'ws-dev', { access: 'read' }), owner)
    const removed = await api.remove(added.json().data.id, { ...owner, headers: JSONAPI })
    t.equal(removed.statusCode, 204)
  })

  t.test('add as go-tfe sends it: only the attributes set, relationships by type and id', async (t) => {
    const res = await api.add({
      data: {
        type: 'team-workspaces',
        attributes: { access: 'custom', runs: 'apply', 'workspace-locking': true },
        relationships: { team: { data: { type: 'teams', id: 'team-green' } }, workspace: { data: { type: 'workspaces', id: 'ws-dev' } } }
      }
    }, owner)
    t.equal(res.statusCode, 200)
    t.equal(res.json().data.relationships.team.data.id, 'team-green', 'the provider reads the team id here')
    await app.db.deleteFrom('team_workspaces').where('id', '=', res.json().data.id).execute()
  })

  t.test('PATCH without data.id (go-tfe)', async (t) => {
    const res = await api.update('tws-blue-dev', { data: { type: 'team-workspaces', attributes: { access: 'plan' } } }, owner)
    t.equal(res.statusCode, 200)
    t.equal(res.json().data.attributes.access, 'plan')
  })

  t.test('PATCH without data.type (terrasnek)', async (t) => {
    const res = await api.update('tws-blue-dev', { data: { attributes: { access: 'write' } } }, owner)
    t.equal(res.statusCode, 200)
    t.equal(res.json().data.attributes.access, 'write')
  })

  t.test('PATCH with the matching data.id (the Terraform provider)', async (t) => {
    const res = await api.update('tws-blue-dev', { data: { type: 'team-workspaces', id: 'tws-blue-dev', attributes: { access: 'read' } } }, owner)
    t.equal(res.statusCode, 200)
    t.equal(res.json().data.attributes.access, 'read')
  })

  t.test('PATCH sending the whole resource back (read, modify, write)', async (t) => {
    const shown = (await api.show('tws-writers-prod', owner)).json()
    const res = await api.update('tws-writers-prod', { data: { type: 'team-workspaces', id: 'tws-writers-prod', attributes: shown.data.attributes } }, owner)
    t.equal(res.statusCode, 200, 'the implied values of a fixed level are accepted')
    t.same(res.json().data.attributes, shown.data.attributes)
  })

  t.test('DELETE with an empty body', async (t) => {
    const added = await api.add(addBody('team-green', 'ws-dev', { access: 'read' }), owner)
    const res = await api.remove(added.json().data.id, { ...owner, headers: JSONAPI }, '')
    t.equal(res.statusCode, 204)
  })

  t.test('DELETE with the body null', async (t) => {
    const added = await api.add(addBody('team-green', 'ws-dev', { access: 'read' }), owner)
    const res = await api.remove(added.json().data.id, { ...owner, headers: JSONAPI }, 'null')
    t.equal(res.statusCode, 204)
    t.notOk(await app.db.selectFrom('team_workspaces').select('id').where('id', '=', added.json().data.id).executeTakeFirst())
  })
})
