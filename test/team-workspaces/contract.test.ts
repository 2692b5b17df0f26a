import t, { type Test } from 'tap'
import { build, snapshot, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { addBody, client, LIST, NOT_FOUND } from './client.js'
import { CUSTOM_DEFAULTS, IMPLICIT_PERMISSIONS } from '../../src/access/permissions.js'

const owner = { token: TOKENS.organization }

t.test(`the team-workspaces contract (DESIGN §4) on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world })
  const api = client(t, app)
  const row = (id: string) => app.db.selectFrom('team_workspaces').selectAll().where('id', '=', id).executeTakeFirst()

  /** A refused request answers `status` with this error and changes nothing. */
  const refused = async (t: Test, send: () => Promise<{ statusCode: number, json: () => any }>, status: number, error: Record<string, unknown>) => {
    const before = await snapshot(app.db)
    const res = await send()
    t.equal(res.statusCode, status)
    t.match(res.json(), { errors: [{ status: String(status), ...error }] })
    t.same(await snapshot(app.db), before, 'nothing changed')
  }

  t.test('the resource: every attribute, both relationships with links under the prefix, a self link', async (t) => {
    const res = await api.show('tws-red-prod', owner)
    t.equal(res.statusCode, 200)
    t.same(res.json(), {
      data: {
        id: 'tws-red-prod',
        type: 'team-workspaces',
        attributes: { access: 'custom', runs: 'plan', variables: 'none', 'state-versions': 'none', 'sentinel-mocks': 'none', 'workspace-locking': true, 'run-tasks': false, 'policy-overrides': false },
        relationships: {
          team: { data: { id: 'team-red', type: 'teams' }, links: { related: '/api/v2/teams/team-red' } },
          workspace: { data: { id: 'ws-prod', type: 'workspaces' }, links: { related: '/api/v2/organizations/acme/workspaces/prod' } }
        },
        links: { self: '/api/v2/team-workspaces/tws-red-prod' }
      }
    })
  })

  t.test('show: an unknown id, an id of another organization and an absurd id are all 404', async (t) => {
    for (const id of ['tws-nope', 'tws-globex', 'x'.repeat(500), "tws-1' or '1'='1"]) {
      const res = await api.show(id, owner)
      t.equal(res.statusCode, 404, id.slice(0, 20))
      t.same(res.json(), NOT_FOUND)
    }
    const huge = await api.show('x'.repeat(5000), owner)
    t.equal(huge.statusCode, 414, 'past the router’s limit: 414, still a JSON:API document')
    t.match(huge.json(), { errors: [{ status: '414' }] })
  })

  t.test('list: every visible row, unpaginated, in creation order', async (t) => {
    const res = await api.list('ws-prod', owner)
    t.equal(res.statusCode, 200)
    const body = res.json()
    t.same(body.data.map((r: any) => r.id), ['tws-admins-prod', 'tws-writers-prod', 'tws-red-prod'], 'seed order = creation order')
    t.notOk('meta' in body || 'links' in body, 'no pagination members without page parameters')
  })

  t.test('list: a filter is required, and none may be empty', async (t) => {
    const cases: Array<[string, string]> = [
      [LIST, 'filter[workspace][id]'],
      [`${LIST}?include=`, 'filter[workspace][id]'],
      [`${LIST}?filter%5Bworkspace%5D%5Bid%5D=`, 'filter[workspace][id]'],
      [`${LIST}?filter%5Bteam%5D%5Bid%5D=`, 'filter[team][id]'],
      [`${LIST}?filter%5Bworkspace%5D%5Bid%5D=ws-prod&filter%5Bteam%5D%5Bid%5D=`, 'filter[team][id]']
    ]
    for (const [url, parameter] of cases) {
      const res = await api.listUrl(url, owner)
      t.equal(res.statusCode, 422, url)
      t.match(res.json(), { errors: [{ status: '422', source: { parameter } }] })
    }
  })

  t.test('list: an unknown workspace, one of another organization, or one the caller cannot read is 404', async (t) => {
    for (const ws of ['ws-nope', 'ws-globex']) {
      const res = await api.list(ws, owner)
      t.equal(res.statusCode, 404)
      t.same(res.json(), NOT_FOUND)
    }
    const unreadable = await api.list('ws-dev', { token: TOKENS.writer })
    t.equal(unreadable.statusCode, 404, 'a member whose teams have no access to the workspace')
    t.same(unreadable.json(), NOT_FOUND)
    const empty = await api.list('ws-dev', { token: TOKENS.reader })
    t.equal(empty.statusCode, 200)
    t.same(empty.json().data, [], 'a workspace the caller reads (read-workspaces) but with no row it sees is an empty list, not 404')
  })

  t.test('add: 200 and the new resource; the row holds what the level implies', async (t) => {
    const res = await api.add(addBody('team-green', 'ws-prod', { access: 'write' }), owner)
    t.equal(res.statusCode, 200, 'HCP Terraform answers 200 on creation')
    const data = res.json().data
    t.match(data.id, /^tws-[1-9A-HJ-NP-Za-km-z]{16}$/)
    t.same(data.attributes, { access: 'write', ...IMPLICIT_PERMISSIONS.write })
    t.same(data.relationships.team.data, { id: 'team-green', type: 'teams' })
    t.match(await row(data.id), { team_id: 'team-green', workspace_id: 'ws-prod', organization_id: 'org-acme', access: 'write', runs: 'apply', variables: 'write', state_versions: 'write', sentinel_mocks: 'read', workspace_locking: true, run_tasks: false })
    const shown = await api.show(data.id, owner)
    t.same(shown.json().data, data, 'show returns what add returned')
    await app.db.deleteFrom('team_workspaces').where('id', '=', data.id).execute()
  })

  t.test('add custom: omitted permissions take the custom defaults', async (t) => {
    const res = await api.add(addBody('team-green', 'ws-prod', { access: 'custom', variables: 'write', 'run-tasks': true, 'policy-overrides': false }), owner)
    t.equal(res.statusCode, 200)
    t.same(res.json().data.attributes, { access: 'custom', ...CUSTOM_DEFAULTS, variables: 'write', 'run-tasks': true, 'policy-overrides': false })
    t.match(await row(res.json().data.id), { access: 'custom', runs: 'read', variables: 'write', state_versions: 'none', sentinel_mocks: 'none', workspace_locking: false, run_tasks: true })
    await app.db.deleteFrom('team_workspaces').where('id', '=', res.json().data.id).execute()
  })

  t.test('add: the values a fixed level implies may be sent along', async (t) => {
    const res = await api.add(addBody('team-green', 'ws-prod', { access: 'plan', ...IMPLICIT_PERMISSIONS.plan }), owner)
    t.equal(res.statusCode, 200)
    await app.db.deleteFrom('team_workspaces').where('id', '=', res.json().data.id).execute()
  })

  t.test('add: a custom-only attribute under a fixed level is 422 with HCP Terraform’s detail', async (t) => {
    await refused(t, () => api.add(addBody('team-green', 'ws-prod', { access: 'read', runs: 'apply' }), owner), 422, {
      title: 'invalid attribute',
      detail: "Runs is read-only when access level is 'read'; use the 'custom' access level to set this attribute.",
      source: { pointer: '/data/attributes/runs' }
    })
  })

  t.test('add: the team already has access → 422 "Team has already been taken"', async (t) => {
    await refused(t, () => api.add(addBody('team-red', 'ws-prod', { access: 'read' }), owner), 422, {
      title: 'invalid attribute', detail: 'Team has already been taken'
    })
  })

  t.test('add: an unknown workspace or team, or a team of another organization, is 404', async (t) => {
    for (const [team, ws] of [['team-green', 'ws-nope'], ['team-nope', 'ws-prod'], ['team-globex', 'ws-prod'], ['team-green', 'ws-globex']]) {
      await refused(t, () => api.add(addBody(team!, ws!, { access: 'read' }), owner), 404, { title: 'not found' })
    }
  })

  const malformed: Array<[string, unknown, string]> = [
    ['no body', '', ''],
    ['not an object', '[]', ''],
    ['no data', {}, '/data'],
    ['wrong type', { data: { ...addBody('team-green', 'ws-prod', { access: 'read' }).data, type: 'teams' } }, '/data/type'],
    ['no type', { data: { attributes: { access: 'read' }, relationships: addBody('a', 'b', {}).data.relationships } }, '/data/type'],
    ['no access', addBody('team-green', 'ws-prod', {}), '/data/attributes/access'],
    ['access out of its enum', addBody('team-green', 'ws-prod', { access: 'owner' }), '/data/attributes/access'],
    ['access of the wrong JSON type', addBody('team-green', 'ws-prod', { access: 1 }), '/data/attributes/access'],
    ['runs out of its enum', addBody('team-green', 'ws-prod', { access: 'custom', runs: 'destroy' }), '/data/attributes/runs'],
    ['a boolean as a string', addBody('team-green', 'ws-prod', { access: 'custom', 'workspace-locking': 'true' }), '/data/attributes/workspace-locking'],
    ['an unknown attribute', addBody('team-green', 'ws-prod', { access: 'read', 'project-access': true }), '/data/attributes/project-access'],
    ['no relationships', { data: { type: 'team-workspaces', attributes: { access: 'read' } } }, '/data/relationships'],
    ['no team', { data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { workspace: { data: { type: 'workspaces', id: 'ws-prod' } } } } }, '/data/relationships/team'],
    ['team of the wrong type', { data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { team: { data: { type: 'users', id: 'team-green' } }, workspace: { data: { type: 'workspaces', id: 'ws-prod' } } } } }, '/data/relationships/team/data/type'],
    ['team without id', { data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { team: { data: { type: 'teams' } }, workspace: { data: { type: 'workspaces', id: 'ws-prod' } } } } }, '/data/relationships/team/data/id'],
    ['workspace id a number', { data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { team: { data: { type: 'teams', id: 'team-green' } }, workspace: { data: { type: 'workspaces', id: 7 } } } } }, '/data/relationships/workspace/data/id'],
    ['an unknown relationship', { data: { ...addBody('team-green', 'ws-prod', { access: 'read' }).data, relationships: { ...addBody('team-green', 'ws-prod', {}).data.relationships, project: { data: { type: 'projects', id: 'prj-1' } } } } }, '/data/relationships/project'],
    ['an unknown top-level member', { ...addBody('team-green', 'ws-prod', { access: 'read' }), included: [] }, '/included']
  ]
  for (const [name, body, pointer] of malformed) {
    t.test(`add, malformed (${name}) → 422 naming the field`, async (t) => {
      await refused(t, () => api.add(body, owner), 422, { source: { pointer } })
    })
  }

  t.test('add, malformed: the detail names the member at fault once', async (t) => {
    const details: Array<[unknown, string]> = [
      [{ data: { type: 'team-workspaces', attributes: { access: 'read' } } }, '/data/relationships is required'],
      [addBody('team-green', 'ws-prod', {}), '/data/attributes/access is required'],
      [addBody('team-green', 'ws-prod', { access: 'read', 'project-access': true }), '/data/attributes has an unknown member "project-access"'],
      [addBody('team-green', 'ws-prod', { access: 'owner' }), '/data/attributes/access must be one of "read", "plan", "write", "admin", "custom"']
    ]
    for (const [body, detail] of details) {
      const res = await api.add(body, owner)
      t.equal(res.statusCode, 422)
      t.equal(res.json().errors[0].detail, detail)
    }
  })

  t.test('add: invalid JSON → 400; a body that is not JSON → 415', async (t) => {
    await refused(t, () => api.add('{"data":', owner), 400, { title: 'bad request' })
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      await refused(t, () => api.add(JSON.stringify(addBody('team-green', 'ws-prod', { access: 'read' })), { ...owner, headers: { 'content-type': type } }), 415, { title: 'invalid content type' })
    }
    const charset = await api.add(addBody('team-green', 'ws-prod', { access: 'read' }), { ...owner, headers: { 'content-type': 'application/json; charset=utf-8' } })
    t.equal(charset.statusCode, 200, 'application/json with a charset is fine')
    await app.db.deleteFrom('team_workspaces').where('id', '=', charset.json().data.id).execute()
  })

  t.test('update: switching to a fixed level resets every permission', async (t) => {
    const res = await api.update('tws-red-prod', { data: { attributes: { access: 'read' } } }, owner)
    t.equal(res.statusCode, 200)
    t.same(res.json().data.attributes, { access: 'read', ...IMPLICIT_PERMISSIONS.read })
    t.match(await row('tws-red-prod'), { access: 'read', runs: 'read', variables: 'read', state_versions: 'read', sentinel_mocks: 'none', workspace_locking: false, run_tasks: false })
  })

  t.test('update: switching to custom keeps every permission the body omits', async (t) => {
    const res = await api.update('tws-red-prod', { data: { type: 'team-workspaces', attributes: { access: 'custom', runs: 'plan' } } }, owner)
    t.equal(res.statusCode, 200)
    t.same(res.json().data.attributes, { access: 'custom', ...IMPLICIT_PERMISSIONS.read, runs: 'plan' })
  })

  t.test('update: staying on custom keeps every permission the body omits', async (t) => {
    const res = await api.update('tws-red-prod', { data: { attributes: { 'workspace-locking': true } } }, owner)
    t.equal(res.statusCode, 200)
    t.same(res.json().data.attributes, { access: 'custom', ...IMPLICIT_PERMISSIONS.read, runs: 'plan', 'workspace-locking': true })
    t.match(await row('tws-red-prod'), { access: 'custom', runs: 'plan', variables: 'read', workspace_locking: true })
  })

  t.test('update: a custom-only attribute under a fixed level is 422 — named or current level', async (t) => {
    await refused(t, () => api.update('tws-red-prod', { data: { attributes: { access: 'write', 'run-tasks': true, 'policy-overrides': false } } }, owner), 422, {
      title: 'invalid attribute',
      detail: "Run tasks is read-only when access level is 'write'; use the 'custom' access level to set this attribute.",
      source: { pointer: '/data/attributes/run-tasks' }
    })
    await refused(t, () => api.update('tws-writers-prod', { data: { attributes: { variables: 'read' } } }, owner), 422, {
      detail: "Variables is read-only when access level is 'write'; use the 'custom' access level to set this attribute.",
      source: { pointer: '/data/attributes/variables' }
    })
    const same = await api.update('tws-writers-prod', { data: { attributes: { variables: 'write' } } }, owner)
    t.equal(same.statusCode, 200, 'the value the level implies is accepted')
  })

  t.test('update: data.type and data.id, when present, must be right', async (t) => {
    await refused(t, () => api.update('tws-red-prod', { data: { type: 'teams', attributes: { access: 'read' } } }, owner), 422, { source: { pointer: '/data/type' } })
    await refused(t, () => api.update('tws-red-prod', { data: { id: 'tws-writers-prod', attributes: { access: 'read' } } }, owner), 422, { source: { pointer: '/data/id' } })
    await refused(t, () => api.update('tws-red-prod', { data: { attributes: { access: 'owner' } } }, owner), 422, { source: { pointer: '/data/attributes/access' } })
    await refused(t, () => api.update('tws-red-prod', { data: { attributes: { colour: 'red' } } }, owner), 422, { source: { pointer: '/data/attributes/colour' } })
    await refused(t, () => api.update('tws-red-prod', { data: {} }, owner), 422, { source: { pointer: '/data/attributes' } })
  })

  t.test('update: an unknown id, or one of another organization, is 404', async (t) => {
    await refused(t, () => api.update('tws-nope', { data: { attributes: { access: 'read' } } }, owner), 404, { title: 'not found' })
    await refused(t, () => api.update('tws-globex', { data: { attributes: { access: 'read' } } }, owner), 404, { title: 'not found' })
  })

  t.test('remove: 204 with no body; a second remove is 404', async (t) => {
    const added = await api.add(addBody('team-green', 'ws-dev', { access: 'read' }), owner)
    const id = added.json().data.id
    const res = await api.remove(id, owner)
    t.equal(res.statusCode, 204)
    t.equal(res.body, '')
    t.notOk(await row(id))
    const again = await api.remove(id, owner)
    t.equal(again.statusCode, 404)
    t.same(again.json(), NOT_FOUND)
  })

  t.test('effective access: the higher of a team row and organization access applies', async (t) => {
    // managers hold manage-workspaces; a read row on ws-dev does not lower them
    const added = await api.add(addBody('team-managers', 'ws-dev', { access: 'read' }), owner)
    t.equal(added.statusCode, 200)
    const byManager = await api.update(added.json().data.id, { data: { attributes: { access: 'plan' } } }, { token: TOKENS.manager })
    t.equal(byManager.statusCode, 200, 'a read row does not take manage-workspaces away')
    // a workspace admin through a row on ws-prod is nobody on ws-dev
    const elsewhere = await api.update('tws-blue-dev', { data: { attributes: { access: 'plan' } } }, { token: TOKENS.workspaceAdmin })
    t.equal(elsewhere.statusCode, 404, 'admin of one workspace is not admin of another')
    await app.db.deleteFrom('team_workspaces').where('id', '=', added.json().data.id).execute()
  })

  t.test('errors are JSON:API documents with the JSON:API media type', async (t) => {
    const res = await api.show('tws-nope', owner)
    t.match(res.headers['content-type'], /^application\/vnd\.api\+json/)
    const bad = await api.add({}, owner)
    t.match(bad.headers['content-type'], /^application\/vnd\.api\+json/)
  })
})
