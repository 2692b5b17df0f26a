import t from 'tap'
import { applySeedFile } from '../../src/directory/seed-file.js'
import { directory } from '../../src/directory/host-directory.js'
import { DEMO_SEED } from '../../src/app.js'
import { bearer, build, ENGINE, snapshot } from '../helper.js'
import { validateResponse } from '../openapi.js'

/**
 * DESIGN §14.1 beyond who may: names (required, letters, digits, `-`, `_`, at most 90; unique in
 * the organization), the settings clients send kept as sent and answered with HCP Terraform's
 * defaults for the rest (a refresh after a create answers every attribute sent unchanged), PATCH
 * merging them, what another source manages refusing the API (422), and the audit events: create,
 * update (a move names both projects), destroy after its team access's remove_team — all on the
 * demo data, whose workspaces the demo seed manages.
 */
const OWNER = 'acme-owners-demo-token'
const ORGANIZATION = 'acme-organization-demo-token'
const NOT_FOUND = { errors: [{ status: '404', title: 'not found' }] }

t.test(`workspace writes (${ENGINE})`, async (t) => {
  const app = await build(t)
  await applySeedFile(app.db, DEMO_SEED)
  const send = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown, token = OWNER) => {
    const res = await app.inject({ method, url: `/api/v2/${url}`, headers: { ...bearer(token), 'content-type': 'application/vnd.api+json' }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) })
    return { status: res.statusCode, body: res.body, json: res.body === '' ? undefined : res.json() }
  }
  const create = async (attributes: Record<string, unknown>, relationships?: unknown, token = OWNER) =>
    await send('POST', 'organizations/acme/workspaces', { data: { type: 'workspaces', attributes, ...(relationships === undefined ? {} : { relationships }) } }, token)
  const trail = async () => (await app.inject({ url: '/api/v2/organization/audit-trail', headers: bearer(ORGANIZATION) })).json().data as any[]

  t.test('names: required, letters, digits, - and _, at most 90; 422 changes nothing', async (t) => {
    const before = await snapshot(app.db)
    for (const [why, attributes] of [
      ['no name', {}],
      ['an empty name', { name: '' }],
      ['a space', { name: 'no spaces' }],
      ['a dot', { name: 'a.b' }],
      ['a slash', { name: 'a/b' }],
      ['91 characters', { name: 'a'.repeat(91) }],
      ['a name that is not a string', { name: 7 }],
      ['an unknown attribute', { name: 'fine', 'no-such-setting': true }],
      ['a setting of the wrong type', { name: 'fine', 'auto-apply': 'yes' }],
      ['an execution mode there is not', { name: 'fine', 'execution-mode': 'elsewhere' }],
      ['execution-mode with operations', { name: 'fine', 'execution-mode': 'local', operations: false }]
    ] as const) {
      const res = await create(attributes)
      t.equal(res.status, 422, why)
      t.equal(res.json.errors[0].status, '422', `${why}: a JSON:API error`)
    }
    t.equal((await create({ name: 'a'.repeat(90) })).status, 201, '90 characters')
    t.equal((await create({ name: 'Mixed_Case-09' })).status, 201, 'letters, digits, - and _')
    t.same((await snapshot(app.db)).team_workspaces, before.team_workspaces)
  })

  t.test('a name the organization has: 422 Name has already been taken, and no event', async (t) => {
    const before = (await trail()).length
    for (const name of ['prod', 'Mixed_Case-09']) {
      const res = await create({ name })
      t.equal(res.status, 422)
      t.same(res.json.errors[0], { status: '422', title: 'invalid attribute', detail: 'Name has already been taken', source: { pointer: '/data/attributes/name' } })
    }
    const made = (await create({ name: 'taken-later' })).json.data.id as string
    t.same((await send('PATCH', `workspaces/${made}`, { data: { type: 'workspaces', attributes: { name: 'Mixed_Case-09' } } })).json.errors[0].detail, 'Name has already been taken', 'a rename to it')
    t.equal((await trail()).length, before + 1, 'the one create, nothing for the refusals')
    t.equal((await create({ name: 'Mixed_case-09' })).status, 201, 'names differ by case (HCP Terraform)')
  })

  t.test('twenty concurrent creates of one name: one workspace, one event', async (t) => {
    const before = (await trail()).length
    const results = await Promise.all(Array.from({ length: 20 }, async () => await create({ name: 'racing' })))
    t.same(results.map((r) => r.status).sort(), [201, ...Array(19).fill(422)])
    t.equal((await trail()).length, before + 1)
  })

  t.test('every setting sent is answered unchanged by the create and by a refresh; the rest are the defaults', async (t) => {
    const sent = {
      name: 'everything',
      description: 'all of it',
      'agent-pool-id': 'apool-123',
      'allow-destroy-plan': false,
      'assessments-enabled': true,
      'auto-apply': true,
      'auto-apply-run-trigger': true,
      'auto-destroy-at': '2100-01-01T00:00:00Z',
      'inherits-project-auto-destroy': false,
      'execution-mode': 'agent',
      'file-triggers-enabled': false,
      'global-remote-state': true,
      'project-remote-state': true,
      'queue-all-runs': true,
      'source-name': 'a portal',
      'source-url': 'https://portal.example/ws',
      'speculative-enabled': false,
      'structured-run-output-enabled': false,
      'terraform-version': '~> 1.9.0',
      'trigger-patterns': ['modules/**/*.tf'],
      'vcs-repo': { identifier: 'acme/infra', branch: 'main', 'ingress-submodules': true, 'oauth-token-id': 'ot-abc', 'tags-regex': '' },
      'working-directory': 'envs/prod',
      'hyok-enabled': false,
      'setting-overwrites': { 'execution-mode': true, 'agent-pool': true }
    }
    const created = await create(sent, { tags: { data: [{ type: 'tags', attributes: { name: 'team-a' } }, { type: 'tags', attributes: { name: 'prod' } }] } })
    t.equal(created.status, 201)
    t.same(validateResponse('createWorkspace', created.json).errors ?? null, null, 'as schemas/openapi.json says')
    const read = await send('GET', `workspaces/${created.json.data.id as string}?include=effective_tag_bindings`)
    t.equal(read.status, 200)
    t.same(read.json, created.json, 'a refresh answers what the create answered')
    const { 'agent-pool-id': agentPool, 'vcs-repo': vcs, ...plain } = sent
    t.match(read.json.data.attributes, { ...plain, operations: true, 'tag-names': ['team-a', 'prod'], 'trigger-prefixes': [] })
    t.same(read.json.data.attributes['vcs-repo'], { ...vcs, 'display-identifier': 'acme/infra', 'github-app-installation-id': null })
    t.same(read.json.data.relationships['agent-pool'], { data: { id: agentPool, type: 'agent-pools' } })

    const bare = await create({ name: 'bare' })
    t.same(Object.fromEntries(Object.entries(bare.json.data.attributes).filter(([key]) => !['name', 'created-at', 'permissions', 'actions'].includes(key))), {
      description: null,
      'allow-destroy-plan': true,
      'assessments-enabled': false,
      'auto-apply': false,
      'auto-apply-run-trigger': false,
      'auto-destroy-at': null,
      'auto-destroy-activity-duration': null,
      'inherits-project-auto-destroy': true,
      'execution-mode': 'remote',
      'file-triggers-enabled': true,
      'global-remote-state': false,
      'project-remote-state': false,
      'migration-environment': null,
      operations: true,
      'queue-all-runs': false,
      'source-name': null,
      'source-url': null,
      'speculative-enabled': true,
      'structured-run-output-enabled': true,
      'terraform-version': 'latest',
      'trigger-prefixes': [],
      'trigger-patterns': [],
      'tag-names': [],
      'working-directory': '',
      'hyok-enabled': false,
      'vcs-repo': null,
      'setting-overwrites': { 'execution-mode': false, 'agent-pool': false },
      locked: false,
      'resource-count': 0
    }, "HCP Terraform's defaults")
    t.same(bare.json.data.relationships['agent-pool'], { data: null })
    const seeded = (await send('GET', 'workspaces/ws-DemoProduction01')).json.data.attributes
    t.match(seeded, { 'auto-apply': false, 'execution-mode': 'remote', 'terraform-version': 'latest', 'vcs-repo': null }, "a seed's workspace answers the defaults too")
  })

  t.test('PATCH merges: unsent settings keep their value, vcs-repo key by key, null back to the default, execution-mode and operations one thing', async (t) => {
    const id = (await create({ name: 'merging', 'auto-apply': true, operations: false, 'vcs-repo': { identifier: 'acme/a', branch: 'main' }, 'auto-destroy-activity-duration': '14d' })).json.data.id as string
    const patch = async (attributes: Record<string, unknown>) => (await send('PATCH', `workspaces/${id}`, { data: { type: 'workspaces', attributes } })).json.data.attributes
    t.match(await patch({}), { 'auto-apply': true, operations: false, 'execution-mode': 'local', 'setting-overwrites': { 'execution-mode': true } }, 'operations false: local execution')
    t.match(await patch({ 'speculative-enabled': false }), { 'auto-apply': true, 'speculative-enabled': false, 'auto-destroy-activity-duration': '14d' })
    t.match(await patch({ 'vcs-repo': { branch: 'release' } }), { 'vcs-repo': { identifier: 'acme/a', branch: 'release' } }, 'a vcs-repo key changed, the others kept')
    t.match(await patch({ 'execution-mode': 'remote' }), { 'execution-mode': 'remote', operations: true }, 'execution-mode replaces operations')
    t.match(await patch({ operations: false }), { 'execution-mode': 'local', operations: false }, 'and the other way round')
    t.match(await patch({ 'vcs-repo': null, 'auto-destroy-activity-duration': null }), { 'vcs-repo': null, 'auto-destroy-activity-duration': null }, 'null: removed (RemoveVCSConnection), back to the default')
    t.match(await patch({ 'trigger-prefixes': ['a/'] }), { 'trigger-prefixes': ['a/'] })
    t.match(await patch({ 'trigger-prefixes': [] }), { 'trigger-prefixes': [] }, 'an empty list clears it')
    t.match(await patch({ description: 'now described' }), { description: 'now described', 'auto-apply': true })
    t.match(await patch({ description: null }), { description: null })
    const res = await send('PATCH', `workspaces/${id}`, { data: { type: 'workspaces', id: 'ws-someoneelse0001', attributes: {} } })
    t.equal(res.status, 422, 'data.id not the one in the path')
  })

  t.test('tags by name: concurrent additions add up; a caller who may not change the workspace: 404', async (t) => {
    const id = (await create({ name: 'tagged', 'tag-names': ['base'] })).json.data.id as string
    const names = Array.from({ length: 10 }, (_, i) => `t${i}`)
    const added = await Promise.all(names.map(async (name) => await send('POST', `workspaces/${id}/relationships/tags`, { data: [{ type: 'tags', attributes: { name } }] })))
    t.same(added.map((r) => r.status), names.map(() => 204))
    const kept = (await send('GET', `workspaces/${id}`)).json.data.attributes['tag-names'] as string[]
    t.same([...kept].sort(), ['base', ...names].sort(), 'every one kept')
    t.same((await send('DELETE', `workspaces/${id}/relationships/tags`, { data: names.map((name) => ({ type: 'tags', attributes: { name } })) })).status, 204)
    t.same((await send('GET', `workspaces/${id}`)).json.data.attributes['tag-names'], ['base'])
    t.same((await send('POST', `workspaces/${id}/relationships/tags`, { data: [{ type: 'tags', attributes: { name: 'x' } }] }, 'bob-demo-token')).json, NOT_FOUND, 'a member who cannot read it')
    t.same((await send('POST', 'workspaces/ws-DemoProduction01/relationships/tags', { data: [{ type: 'tags', attributes: { name: 'x' } }] }, 'bob-demo-token')).json, NOT_FOUND, 'a reader who is not its admin')
    t.equal((await send('POST', 'workspaces/ws-DemoProduction01/relationships/tags', { data: [{ type: 'tags', attributes: { name: 'x' } }] })).status, 422, "the seed's workspace")
  })

  t.test("what the seed manages refuses the API: 422 naming the demo seed; the host's: 422 naming the host", async (t) => {
    const before = await snapshot(app.db)
    const seedRefusal = { errors: [{ status: '422', title: 'invalid attribute', detail: 'managed by the demo seed (seeds/demo.json)', source: { pointer: '/data' } }] }
    t.same((await send('PATCH', 'workspaces/ws-DemoProduction01', { data: { type: 'workspaces', attributes: { name: 'renamed' } } })).json, seedRefusal, 'a rename')
    t.same((await send('PATCH', 'organizations/acme/workspaces/prod', { data: { type: 'workspaces', attributes: { 'auto-apply': true } } })).json, seedRefusal, 'a setting, by name')
    t.same((await send('DELETE', 'workspaces/ws-DemoProduction01')).json, seedRefusal, 'a delete')
    t.same((await send('POST', 'organizations/acme/workspaces/staging/actions/safe-delete')).json, seedRefusal, 'a safe-delete by name')
    t.same((await send('PATCH', 'workspaces/ws-DemoProduction01', { data: { type: 'workspaces', attributes: { name: 'renamed' } } }, 'bob-demo-token')).json, NOT_FOUND,
      'a caller who may not change it learns nothing of who manages it')

    const host = await directory(app.db).createWorkspace({ organizationId: 'org-DemoAcme00000001', name: 'hosts' })
    const hostRefusal = { errors: [{ status: '422', title: 'invalid attribute', detail: 'managed by the host application', source: { pointer: '/data' } }] }
    t.same((await send('PATCH', `workspaces/${host.id}`, { data: { type: 'workspaces', attributes: { name: 'renamed' } } })).json, hostRefusal)
    t.same((await send('DELETE', `workspaces/${host.id}`)).json, hostRefusal)
    t.match((await send('GET', `workspaces/${host.id}`)).json.data.attributes, { permissions: { 'can-update': false, 'can-destroy': false }, actions: { 'is-destroyable': false } })
    await directory(app.db).removeWorkspace(host.id)
    t.same(await snapshot(app.db), before, 'nothing changed')
  })

  t.test('the audit events: create, update (a move names both projects), destroy after the remove_team of each row', async (t) => {
    const platform = (await send('POST', 'organizations/acme/projects', { data: { type: 'projects', attributes: { name: 'platform' } } })).json.data.id as string
    const from = (await trail()).length
    const id = (await create({ name: 'audited' })).json.data.id as string
    await send('PATCH', `workspaces/${id}`, { data: { type: 'workspaces', attributes: { name: 'audited-2' } } })
    await send('PATCH', `workspaces/${id}`, { data: { type: 'workspaces', attributes: { name: 'audited-2' } } })
    await send('PATCH', `workspaces/${id}`, { data: { type: 'workspaces', relationships: { project: { data: { type: 'projects', id: platform } } } } })
    for (const team of ['team-DemoTeamdevs1234', 'team-DemoTeamred12345']) {
      t.equal((await send('POST', 'team-workspaces', { data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { team: { data: { type: 'teams', id: team } }, workspace: { data: { type: 'workspaces', id } } } } })).status, 200)
    }
    t.equal((await send('DELETE', `workspaces/${id}`)).status, 204)
    t.same(await app.db.selectFrom('team_workspaces').select('id').where('workspace_id', '=', id).execute(), [], 'its team access went with it')
    const events = (await trail()).slice(from).map((e) => [e.resource.type, e.resource.action, e.resource.id === id || e.resource.id, e.resource.meta, e.auth.description])
    // one statement's events tie in time: the two remove_team in either order, both before the destroy
    const removes = events.slice(5, 7).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
    t.same([...events.slice(0, 5), ...removes, ...events.slice(7)], [
      ['workspace', 'create', true, { workspace: 'audited' }, 'owners'],
      ['workspace', 'update', true, { workspace: 'audited-2' }, 'owners'],
      ['workspace', 'update', true, { workspace: 'audited-2', project: 'Default Project -> platform' }, 'owners'],
      ['workspace', 'add_team', true, { team: 'devs', permissions: 'access=read runs=read variables=read state-versions=read sentinel-mocks=none workspace-locking=false run-tasks=false policy-overrides=false' }, 'owners'],
      ['workspace', 'add_team', true, { team: 'red', permissions: 'access=read runs=read variables=read state-versions=read sentinel-mocks=none workspace-locking=false run-tasks=false policy-overrides=false' }, 'owners'],
      ['workspace', 'remove_team', true, { team: 'devs' }, 'owners'],
      ['workspace', 'remove_team', true, { team: 'red' }, 'owners'],
      ['workspace', 'destroy', true, { workspace: 'audited-2' }, 'owners']
    ], 'a rename to the same name changes nothing and records nothing')
    t.equal((await send('DELETE', `workspaces/${id}`)).status, 404, 'a second delete: 404')
  })

  t.test('a creator learns nothing of a workspace it cannot read by taking its name', async (t) => {
    const platform = (await send('GET', 'organizations/acme/projects?filter%5Bnames%5D=platform')).json.data[0].id as string
    t.equal((await send('POST', 'team-projects', {
      data: { type: 'team-projects', attributes: { access: 'custom', 'workspace-access': { create: true } }, relationships: { team: { data: { type: 'teams', id: 'team-DemoTeamred12345' } }, project: { data: { type: 'projects', id: platform } } } }
    })).status, 201)
    const red = 'acme-red-demo-token'
    const onPlatform = { project: { data: { type: 'projects', id: platform } } }
    t.equal((await send('GET', 'workspaces/ws-DemoStaging00001', undefined, red)).status, 404, 'red does not read staging')
    t.same((await create({ name: 'staging' }, onPlatform, red)).json, NOT_FOUND, "its name, taken out of red's sight: the 404 of a caller who may not")
    t.equal((await create({ name: 'reds' }, onPlatform, red)).status, 201)
    t.same((await create({ name: 'reds' }, onPlatform, red)).json.errors[0].detail, 'Name has already been taken', 'a name red reads: 422, as ever')
  })
})
