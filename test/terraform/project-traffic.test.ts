import t from 'tap'
import { applySeedFile } from '../../src/directory/seed-file.js'
import { placeWorkspace } from '../../src/directory/projects.js'
import { DEMO_SEED } from '../../src/app.js'
import { build, ENGINE } from '../helper.js'

/**
 * DESIGN §11.6: the Terraform provider's (terraform-provider-tfe, through go-tfe) traffic for
 * `tfe_project`, `tfe_team_project_access` — create, refresh, update, import, destroy — and the
 * data sources `tfe_project` and `tfe_team_project_access`, replayed step by step against the demo
 * data, bodies byte for byte as go-tfe writes them (`type` first, attribute keys sorted, the
 * permission objects in struct order, relationships as type and id, a trailing newline; the
 * provider always sends both permission objects, `{}` when nothing is set), asserting what the
 * provider reads from each answer. Only a 404 tells the provider a resource is gone; a 404 on the
 * tag-binding reads it makes is tolerated (tags are outside this service).
 */
const TOKEN = 'acme-owners-demo-token'
const OPS = 'team-DemoTeamops12345'
const DEVS = 'team-DemoTeamdevs1234'
const STAGING = 'ws-DemoStaging00001'
const PROJECT_ID = /^prj-[a-zA-Z0-9]{16}$/ // the provider's projectIDRegexp
const NOT_FOUND = { errors: [{ status: '404', title: 'not found' }] }

t.test(`the Terraform provider's project traffic (${ENGINE})`, async (t) => {
  const app = await build(t)
  await applySeedFile(app.db, DEMO_SEED)
  /** A request as go-tfe sends it: a Content-Type on POST, PATCH and DELETE (bodiless or not), `raw` the body byte for byte. */
  const send = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, raw?: string) => {
    const res = await app.inject({
      method,
      url: `/api/v2/${path}`,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        accept: 'application/vnd.api+json',
        'user-agent': 'go-tfe',
        ...(method === 'GET' ? {} : { 'content-type': 'application/vnd.api+json' })
      },
      ...(raw === undefined ? {} : { payload: raw })
    })
    if (res.statusCode !== 204 && res.statusCode < 500) t.match(res.headers['content-type'], /^application\/vnd\.api\+json/, `${method} ${path}: a JSON:API answer`)
    return { status: res.statusCode, body: res.body === '' ? undefined : res.json() }
  }
  /** The state the provider keeps for a tfe_team_project_access, from a read of the row. */
  const accessState = (data: any) => ({
    id: data.id,
    access: data.attributes.access,
    team_id: data.relationships.team.data.id,
    project_id: data.relationships.project.data.id,
    project_access: data.attributes['project-access'],
    workspace_access: data.attributes['workspace-access']
  })
  let project = ''
  let row = ''

  t.test('create tfe_project (newest: framework resource): POST with the unknown description as "", state from the answer', async (t) => {
    t.equal((await send('GET', 'ping')).status, 204)
    const created = await send('POST', 'organizations/acme/projects', '{"data":{"type":"projects","attributes":{"description":"","name":"platform"}}}\n')
    t.equal(created.status, 201)
    project = created.body.data.id
    t.match(project, PROJECT_ID)
    t.match(created.body.data, { type: 'projects', attributes: { name: 'platform' }, relationships: { organization: { data: { id: 'acme', type: 'organizations' } } } })
    t.ok(created.body.data.attributes.description === '' || created.body.data.attributes.description === null, 'read back as "" (null decodes to "")')
  })

  t.test('create tfe_project (SDK provider): POST, then its update (DeleteAllTagBindings, PATCH), then its read (404 on tag-bindings tolerated)', async (t) => {
    const created = await send('POST', 'organizations/acme/projects', '{"data":{"type":"projects","attributes":{"description":"legacy one","name":"legacy"}}}\n')
    t.equal(created.status, 201)
    const id = created.body.data.id as string
    t.equal((await send('PATCH', `projects/${id}`, '{"data":{"type":"projects","relationships":{"tag-bindings":{"data":[]}}}}\n')).status, 200, 'DeleteAllTagBindings: a PATCH with no attributes')
    const updated = await send('PATCH', `projects/${id}`, '{"data":{"type":"projects","attributes":{"description":"legacy one","name":"legacy"}}}\n')
    t.equal(updated.status, 200)
    const read = await send('GET', `projects/${id}`)
    t.match(read.body.data.attributes, { name: 'legacy', description: 'legacy one' })
    t.equal(read.body.data.relationships.organization.data.id, 'acme', 'organization from the relationship')
    t.same((await send('GET', `projects/${id}/tag-bindings`)).body, NOT_FOUND, 'tag bindings: the 404 it tolerates')
    t.equal((await send('DELETE', `projects/${id}`)).status, 204)
  })

  t.test('refresh tfe_project, and import by its prj- id: GET with include=effective_tag_bindings', async (t) => {
    const read = await send('GET', `projects/${project}?include=effective_tag_bindings`)
    t.equal(read.status, 200)
    t.match(read.body.data, { id: project, type: 'projects', attributes: { name: 'platform' }, relationships: { organization: { data: { id: 'acme' } } } })
    t.notOk(read.body.data.relationships['effective-tag-bindings'], 'no tag bindings: the provider reads an empty map')
  })

  t.test('update tfe_project: DeleteAllTagBindings (no tags configured), then PATCH name and description', async (t) => {
    t.equal((await send('PATCH', `projects/${project}`, '{"data":{"type":"projects","relationships":{"tag-bindings":{"data":[]}}}}\n')).status, 200)
    const updated = await send('PATCH', `projects/${project}`, '{"data":{"type":"projects","attributes":{"description":"the platform team","name":"Platform"}}}\n')
    t.equal(updated.status, 200)
    t.match(updated.body.data, { id: project, attributes: { name: 'Platform', description: 'the platform team' }, relationships: { organization: { data: { id: 'acme' } } } }, 'state from the answer')
    // auto_destroy_activity_duration cleared: an explicit null, accepted and ignored
    const cleared = await send('PATCH', `projects/${project}`, '{"data":{"type":"projects","attributes":{"auto-destroy-activity-duration":null,"description":"the platform team","name":"Platform"}}}\n')
    t.equal(cleared.status, 200)
  })

  t.test('create tfe_team_project_access at a fixed level: read project and team, POST with {} objects, read back', async (t) => {
    t.equal((await send('GET', 'ping')).status, 204)
    const proj = await send('GET', `projects/${project}`)
    t.equal(proj.status, 200)
    const team = await send('GET', `teams/${OPS}`)
    t.equal(team.status, 200)
    const created = await send('POST', 'team-projects',
      `{"data":{"type":"team-projects","attributes":{"access":"write","project-access":{},"workspace-access":{}},"relationships":{"project":{"data":{"type":"projects","id":"${proj.body.data.id as string}"}},"team":{"data":{"type":"teams","id":"${team.body.data.id as string}"}}}}}\n`)
    t.equal(created.status, 201, 'any 2xx: the provider takes the id')
    row = created.body.data.id
    t.match(row, /^tprj-/)
    const read = await send('GET', `team-projects/${row}`)
    t.equal(read.status, 200)
    t.same(accessState(read.body.data), {
      id: row,
      access: 'write',
      team_id: OPS,
      project_id: project,
      project_access: { settings: 'read', teams: 'none', 'variable-sets': 'none' },
      workspace_access: { runs: 'apply', 'sentinel-mocks': 'read', 'state-versions': 'write', variables: 'write', create: false, locking: true, move: false, delete: false, 'run-tasks': false }
    }, 'every attribute the provider stores')
  })

  t.test('refresh tfe_team_project_access: ping, read', async (t) => {
    t.equal((await send('GET', 'ping')).status, 204)
    const read = await send('GET', `team-projects/${row}`)
    t.equal(read.status, 200)
    t.same(Object.keys(read.body.data.attributes).sort(), ['access', 'project-access', 'workspace-access'])
  })

  t.test('update tfe_team_project_access: access always, {} objects plus the keys that changed; each read back', async (t) => {
    // write -> custom with workspace_access { runs = "plan", locking = true }: locking was already true, so only runs is sent
    const toCustom = await send('PATCH', `team-projects/${row}`, '{"data":{"type":"team-projects","attributes":{"access":"custom","project-access":{},"workspace-access":{"runs":"plan"}}}}\n')
    t.equal(toCustom.status, 200)
    t.match(accessState((await send('GET', `team-projects/${row}`)).body.data), { access: 'custom', workspace_access: { runs: 'plan', locking: true, variables: 'write' } }, 'what the configuration says, no diff left')
    // a custom key changes: project_access { settings = "update" }, create = true
    const keys = await send('PATCH', `team-projects/${row}`, '{"data":{"type":"team-projects","attributes":{"access":"custom","project-access":{"settings":"update"},"workspace-access":{"create":true}}}}\n')
    t.equal(keys.status, 200)
    t.match(accessState((await send('GET', `team-projects/${row}`)).body.data), { access: 'custom', project_access: { settings: 'update' }, workspace_access: { runs: 'plan', create: true } })
    // back to a fixed level (the blocks removed from the configuration: no key changes)
    const back = await send('PATCH', `team-projects/${row}`, '{"data":{"type":"team-projects","attributes":{"access":"maintain","project-access":{},"workspace-access":{}}}}\n')
    t.equal(back.status, 200)
    t.same(accessState((await send('GET', `team-projects/${row}`)).body.data).workspace_access,
      { runs: 'apply', 'sentinel-mocks': 'read', 'state-versions': 'write', variables: 'write', create: true, locking: true, move: false, delete: true, 'run-tasks': true }, "maintain's values")
  })

  t.test('create tfe_team_project_access, custom: only the keys configured (false booleans are not sent)', async (t) => {
    t.equal((await send('GET', `projects/${project}`)).status, 200)
    t.equal((await send('GET', `teams/${DEVS}`)).status, 200)
    const created = await send('POST', 'team-projects',
      '{"data":{"type":"team-projects","attributes":{"access":"custom","project-access":{"settings":"read","teams":"read"},"workspace-access":{"runs":"plan","sentinel-mocks":"none","state-versions":"read-outputs","variables":"read","locking":true}},' +
      `"relationships":{"project":{"data":{"type":"projects","id":"${project}"}},"team":{"data":{"type":"teams","id":"${DEVS}"}}}}}\n`)
    t.equal(created.status, 201)
    const read = await send('GET', `team-projects/${created.body.data.id as string}`)
    t.same(accessState(read.body.data), {
      id: created.body.data.id,
      access: 'custom',
      team_id: DEVS,
      project_id: project,
      project_access: { settings: 'read', teams: 'read', 'variable-sets': 'none' },
      workspace_access: { runs: 'plan', 'sentinel-mocks': 'none', 'state-versions': 'read-outputs', variables: 'read', create: false, locking: true, move: false, delete: false, 'run-tasks': false }
    })
    t.equal((await send('DELETE', `team-projects/${created.body.data.id as string}`)).status, 204)
  })

  t.test('import tfe_team_project_access by its tprj- id: the read alone gives team_id and project_id', async (t) => {
    const read = await send('GET', `team-projects/${row}`)
    t.equal(read.status, 200)
    t.match(accessState(read.body.data), { id: row, team_id: OPS, project_id: project, access: 'maintain' })
    t.same((await send('GET', 'team-projects/tprj-doesnotexist00')).body, NOT_FOUND, 'an id that is not there: the 404 import reports')
  })

  t.test('data "tfe_project": the list by filter[names], then its workspaces by filter[project][id], then effective tag bindings (404 tolerated)', async (t) => {
    t.ok(await placeWorkspace(app.db, STAGING, project), 'the host places staging in the project')
    for (const name of ['Platform', 'platform']) {
      const list = await send('GET', `organizations/acme/projects?filter%5Bnames%5D=${name}`)
      t.equal(list.status, 200)
      const found = list.body.data.find((p: any) => p.attributes.name.toLowerCase() === name.toLowerCase())
      t.equal(found?.id, project, `${name}: found, compared case-insensitively`)
      t.match(found, { attributes: { description: 'the platform team' }, relationships: { organization: { data: { id: 'acme' } } } })
    }
    const workspaces: string[] = []
    for (let page = 0; ;) {
      const wl = await send('GET', `organizations/acme/workspaces?filter%5Bproject%5D%5Bid%5D=${project}${page === 0 ? '' : `&page%5Bnumber%5D=${page}`}`)
      t.equal(wl.status, 200)
      workspaces.push(...wl.body.data.map((w: any) => `${w.id as string} ${w.attributes.name as string}`))
      const { 'current-page': current, 'total-pages': total, 'next-page': next } = wl.body.meta.pagination
      if (current >= total) break
      page = next
    }
    t.same(workspaces, [`${STAGING} staging`], 'workspace_ids and workspace_names')
    t.same((await send('GET', `projects/${project}/effective-tag-bindings`)).body, NOT_FOUND, 'the 404 it tolerates')
    t.same((await send('GET', 'organizations/acme/projects?filter%5Bnames%5D=nope')).body.data, [], 'none: "could not find project"')
  })

  t.test('data "tfe_team_project_access": the project, then the list by project (older) and by project and team (newest), then the row', async (t) => {
    t.equal((await send('GET', `projects/${project}`)).status, 200)
    const older = await send('GET', `team-projects?filter%5Bproject%5D%5Bid%5D=${project}`)
    t.equal(older.status, 200)
    const found = older.body.data.find((x: any) => x.relationships.team.data.id === OPS)
    t.equal(found?.id, row, 'the provider finds the team in the list')
    const pagination = older.body.meta?.pagination ?? {}
    t.ok((pagination['current-page'] ?? 0) >= (pagination['total-pages'] ?? 0), 'and stops paging')
    const newest = await send('GET', `team-projects?filter%5Bproject%5D%5Bid%5D=${project}&filter%5Bteam%5D%5Bid%5D=${OPS}`)
    t.equal(newest.status, 200)
    t.same(newest.body.data.map((x: any) => [x.id, x.relationships.team.data.id]), [[row, OPS]])
    t.match(accessState((await send('GET', `team-projects/${row}`)).body.data), { access: 'maintain', team_id: OPS })
  })

  t.test('data "tfe_organization": default_project_id from a plain read of the organization', async (t) => {
    const org = await send('GET', 'organizations/acme')
    t.equal(org.status, 200)
    t.match(org.body.data, { id: 'acme', type: 'organizations', relationships: { 'default-project': { data: { type: 'projects', id: PROJECT_ID } } } })
  })

  t.test('destroy: the access (a second DELETE is the 404 taken as gone), then the project (422 while it holds a workspace)', async (t) => {
    t.equal((await send('DELETE', `team-projects/${row}`)).status, 204)
    t.same((await send('DELETE', `team-projects/${row}`)).body, NOT_FOUND)
    t.equal((await send('GET', `team-projects/${row}`)).status, 404, 'refresh: gone, dropped from state')
    const holds = await send('DELETE', `projects/${project}`)
    t.equal(holds.status, 422, 'the provider reports the error')
    t.match(holds.body, { errors: [{ status: '422', detail: /workspace/ }] })
    const defaultProject = (await send('GET', 'organizations/acme')).body.data.relationships['default-project'].data.id
    t.ok(await placeWorkspace(app.db, STAGING, defaultProject), 'staging moved back')
    t.equal((await send('DELETE', `projects/${project}`)).status, 204)
    t.same((await send('DELETE', `projects/${project}`)).body, NOT_FOUND, 'a second destroy: 404, done')
    t.equal((await send('GET', `projects/${project}?include=effective_tag_bindings`)).status, 404, 'refresh: gone')
  })
})
