import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { bearer, build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { validateResponse } from '../openapi.js'
import { placeWorkspace } from '../../src/directory/projects.js'

/**
 * Projects and team-project access (DESIGN §11) through the API, on the fixture world: the default
 * project, create/show/list/update/delete with their refusals, team-project rows at every level
 * (implied values, custom defaults, `{}` under a fixed level), and what a project grant makes a
 * caller on the project's workspaces — from the next request, and no longer once it is gone.
 */
const NOT_FOUND = '{"errors":[{"status":"404","title":"not found"}]}'
const JSONAPI = { 'content-type': 'application/vnd.api+json' }

async function call (app: FastifyInstance, token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) {
  const response = await app.inject({ method, url: `/api/v2${url}`, headers: { ...bearer(token), ...JSONAPI }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) })
  return { status: response.statusCode, body: response.body, json: response.body === '' ? undefined : response.json() }
}

const projectBody = (name: string, description?: string | null) => ({ data: { type: 'projects', attributes: { name, ...(description === undefined ? {} : { description }) } } })
const rowBody = (team: string, project: string, access: string, objects: Record<string, unknown> = {}) =>
  ({ data: { type: 'team-projects', attributes: { access, ...objects }, relationships: { team: { data: { type: 'teams', id: team } }, project: { data: { type: 'projects', id: project } } } } })

t.test(`projects and team-project access (${ENGINE})`, async (t) => {
  const app = await build(t, { seed: world })
  const owner = TOKENS.owner

  t.test('every organization has its default project, holding every workspace', async (t) => {
    const list = await call(app, owner, 'GET', '/organizations/acme/projects')
    t.equal(list.status, 200)
    t.same(list.json.data.map((p: any) => [p.attributes.name, p.attributes['workspace-count']]), [['Default Project', 2]])
    t.same(list.json.data[0].attributes.permissions, { 'can-read': true, 'can-update': true, 'can-destroy': false, 'can-read-teams': true, 'can-manage-teams': true }, 'never destroyable')
    t.same(validateResponse('listProjects', list.json).errors ?? null, null)
    const defaults = await app.db.selectFrom('projects').select(['organization_id', 'name']).where('is_default', '=', true).orderBy('organization_id').execute()
    t.same(defaults, [{ organization_id: 'org-acme', name: 'Default Project' }, { organization_id: 'org-globex', name: 'Default Project' }])
    const placed = await app.db.selectFrom('workspaces as w').innerJoin('projects as p', 'p.id', 'w.project_id').select(['w.id', 'p.is_default']).execute()
    t.ok(placed.length === 3 && placed.every((w) => w.is_default), 'every workspace in its default project')
  })

  let platform = ''
  t.test('create, show, update; the 422s', async (t) => {
    const created = await call(app, owner, 'POST', '/organizations/acme/projects', projectBody('platform', 'the platform team'))
    t.equal(created.status, 201, created.body)
    t.same(validateResponse('createProject', created.json).errors ?? null, null)
    platform = created.json.data.id
    t.match(platform, /^prj-[1-9A-HJ-NP-Za-km-z]{16}$/)
    t.match(created.json.data.attributes, { name: 'platform', description: 'the platform team', 'workspace-count': 0, 'team-count': 0 })
    t.same(created.json.data.relationships.organization.data, { id: 'acme', type: 'organizations' })

    for (const [name, why] of [['PLATFORM', 'taken, case-insensitively'], ['ab', 'too short'], [' lead', 'a leading space'], ['a/b', 'a slash'], ['x'.repeat(41), 'too long']]) {
      const refused = await call(app, owner, 'POST', '/organizations/acme/projects', projectBody(name!))
      t.equal(refused.status, 422, `${why}: ${refused.body}`)
    }
    t.equal((await call(app, owner, 'POST', '/organizations/acme/projects', projectBody('has spaces_ok-1'))).status, 201, 'spaces, - and _ inside')

    const shown = await call(app, owner, 'GET', `/projects/${platform}?include=effective_tag_bindings`)
    t.equal(shown.status, 200)
    t.equal(shown.json.data.attributes.name, 'platform')
    const renamed = await call(app, owner, 'PATCH', `/projects/${platform}`, { data: { type: 'projects', attributes: { name: 'Platform', description: null } } })
    t.equal(renamed.status, 200, renamed.body)
    t.match(renamed.json.data.attributes, { name: 'Platform', description: null })
    const events = await app.db.selectFrom('audit_events').select(['action', 'meta']).where('resource_type', '=', 'project').orderBy('occurred_at').execute()
    t.same(events.map((e) => [e.action, (e.meta as any).project]), [['create', 'platform'], ['create', 'has spaces_ok-1'], ['update', 'Platform']])
  })

  t.test('who reads projects: members who may; everyone else the 404 of a missing one', async (t) => {
    // the reader (read-workspaces, no read-projects) reads no project but the ones its teams hold rows on
    const readerList = await call(app, TOKENS.reader, 'GET', '/organizations/acme/projects')
    t.equal(readerList.status, 200)
    t.same(readerList.json.data, [])
    for (const token of [TOKENS.reader, TOKENS.otherOrganization, TOKENS.noTeam, TOKENS.writer]) {
      const shown = await call(app, token, 'GET', `/projects/${platform}`)
      t.equal(shown.status, 404)
      t.equal(shown.body, NOT_FOUND, 'byte for byte')
    }
    t.equal((await call(app, TOKENS.otherOrganization, 'GET', '/organizations/acme/projects')).body, NOT_FOUND, 'no member of the organization')
    t.equal((await call(app, TOKENS.writer, 'POST', '/organizations/acme/projects', projectBody('nope'))).body, NOT_FOUND, 'a member without manage-projects creates none')
    t.equal((await call(app, owner, 'GET', '/projects/prj-doesnotexist00')).body, NOT_FOUND)
  })

  t.test('team-project rows: levels, implied values, custom defaults, {} under a fixed level', async (t) => {
    const read = await call(app, owner, 'POST', '/team-projects', rowBody('team-green', platform, 'read', { 'project-access': {}, 'workspace-access': {} }))
    t.equal(read.status, 201, read.body)
    t.same(validateResponse('addTeamProjectAccess', read.json).errors ?? null, null)
    t.same(read.json.data.attributes, {
      access: 'read',
      'project-access': { settings: 'read', teams: 'none', 'variable-sets': 'none' },
      'workspace-access': { runs: 'read', 'sentinel-mocks': 'none', 'state-versions': 'read', variables: 'read', create: false, locking: false, move: false, delete: false, 'run-tasks': false }
    })
    const fixedWithKey = await call(app, owner, 'PATCH', `/team-projects/${read.json.data.id}`, { data: { attributes: { access: 'write', 'workspace-access': { runs: 'plan' } } } })
    t.equal(fixedWithKey.status, 422, 'a key set under a fixed level')
    t.equal(fixedWithKey.json.errors[0].source.pointer, '/data/attributes/workspace-access/runs')
    const keptFixed = await call(app, owner, 'PATCH', `/team-projects/${read.json.data.id}`, { data: { attributes: { 'project-access': { teams: 'manage' } } } })
    t.equal(keptFixed.status, 422, 'a key set while the row keeps its fixed level')
    const taken = await call(app, owner, 'POST', '/team-projects', rowBody('team-green', platform, 'admin'))
    t.equal(taken.status, 422)
    t.equal(taken.json.errors[0].detail, 'Team has already been taken')

    const custom = await call(app, owner, 'POST', '/team-projects', rowBody('team-blue', platform, 'custom', { 'workspace-access': { runs: 'plan', locking: true } }))
    t.equal(custom.status, 201, custom.body)
    t.same(custom.json.data.attributes['project-access'], { settings: 'read', teams: 'none', 'variable-sets': 'none' }, 'custom defaults')
    t.match(custom.json.data.attributes['workspace-access'], { runs: 'plan', locking: true, 'state-versions': 'none', variables: 'none', 'sentinel-mocks': 'none', create: false })
    const maintain = await call(app, owner, 'PATCH', `/team-projects/${custom.json.data.id}`, { data: { attributes: { access: 'maintain' } } })
    t.equal(maintain.status, 200)
    t.same(maintain.json.data.attributes['workspace-access'], { runs: 'apply', 'sentinel-mocks': 'read', 'state-versions': 'write', variables: 'write', create: true, locking: true, move: false, delete: true, 'run-tasks': true })
    const back = await call(app, owner, 'PATCH', `/team-projects/${custom.json.data.id}`, { data: { attributes: { access: 'custom', 'workspace-access': { runs: 'read' } } } })
    t.equal(back.status, 200)
    t.match(back.json.data.attributes, { access: 'custom', 'workspace-access': { runs: 'read', locking: true } }, 'custom from a fixed level keeps its values')
    t.equal((await call(app, owner, 'DELETE', `/team-projects/${custom.json.data.id}`)).status, 204)
    t.equal((await call(app, owner, 'DELETE', `/team-projects/${custom.json.data.id}`)).body, NOT_FOUND, 'a second delete')

    const list = await call(app, owner, 'GET', `/team-projects?filter[project][id]=${platform}`)
    t.same(list.json.data.map((r: any) => r.relationships.team.data.id), ['team-green'])
    t.equal((await call(app, owner, 'GET', '/team-projects')).status, 422, 'the project filter is required')
    const events = await app.db.selectFrom('audit_events').select(['action', 'meta']).where('resource_type', '=', 'team-project').orderBy('occurred_at').execute()
    t.same(events.map((e) => e.action), ['create', 'create', 'update', 'update', 'destroy'])
    t.match((events[0]!.meta as any), { team: 'green', project: 'Platform', permissions: /^access=read settings=read teams=none/ })
  })

  t.test('a project grant reaches its workspaces from the next request, and stops with it', async (t) => {
    const red = TOKENS.secretMember // member of red, which has a custom row on prod only
    const addOnDev = () => call(app, red, 'POST', '/team-workspaces', {
      data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { team: { data: { type: 'teams', id: 'team-green' } }, workspace: { data: { type: 'workspaces', id: 'ws-dev' } } } }
    })
    t.equal((await call(app, red, 'GET', '/workspaces/ws-dev')).status, 404, 'red reads no dev yet')
    const row = await call(app, owner, 'POST', '/team-projects', rowBody('team-red', platform, 'maintain'))
    t.equal(row.status, 201)
    t.equal((await call(app, red, 'GET', '/workspaces/ws-dev')).status, 404, 'dev is not in the project yet')
    t.ok(await placeWorkspace(app.db, 'ws-dev', platform), 'dev moved into the project')
    t.equal((await call(app, red, 'GET', '/workspaces/ws-dev')).status, 200, 'maintain on the project: reads dev')
    const added = await addOnDev()
    t.equal(added.status, 200, `maintain makes a workspace admin: ${added.body}`)
    const why = await call(app, owner, 'GET', '/workspaces/ws-dev/effective-access?filter[user]=red-member')
    t.match(why.json.data[0].attributes, { access: 'admin', grants: [{ kind: 'team-project', 'team-project': row.json.data.id, project: platform, 'project-access': 'maintain' }] })
    t.same(await app.teamAccess.effectiveAccess({ caller: { kind: 'user', userId: 'user-red' }, workspaceId: 'ws-dev' }), {
      access: 'admin', permissions: { runs: 'apply', variables: 'write', 'state-versions': 'write', 'sentinel-mocks': 'read', 'workspace-locking': true, 'run-tasks': true, 'policy-overrides': false }
    }, "the host's check agrees")
    const reachedOn = async (workspace: string) => (await call(app, owner, 'GET', '/teams/team-red/effective-access')).json.data
      .find((x: any) => x.relationships.workspace.data.id === workspace)
    t.match((await reachedOn('ws-dev'))?.attributes, { access: 'admin', grants: [{ kind: 'team-project', 'team-project': row.json.data.id, project: platform, 'project-access': 'maintain' }] },
      "the team's answer reaches dev through the same grant")

    const refused = await call(app, owner, 'DELETE', `/projects/${platform}`)
    t.equal(refused.status, 422, 'a project holding a workspace')
    t.match(refused.json.errors[0].detail, /holds 1 workspace/)
    const defaultProject = (await call(app, owner, 'GET', '/organizations/acme/projects?filter[names]=default%20project')).json.data[0].id
    t.equal((await call(app, owner, 'DELETE', `/projects/${defaultProject}`)).status, 422, 'the default project')

    // moved out: the grant stops at once
    t.ok(await placeWorkspace(app.db, 'ws-dev', defaultProject))
    t.equal((await call(app, red, 'GET', '/workspaces/ws-dev')).status, 404, 'a workspace moved out stops granting')
    t.equal(await reachedOn('ws-dev'), undefined, "nor does the team's answer reach it")
    t.ok(await placeWorkspace(app.db, 'ws-dev', platform))
    t.equal((await call(app, red, 'GET', '/workspaces/ws-dev')).status, 200)
    t.equal((await call(app, owner, 'DELETE', `/team-projects/${row.json.data.id}`)).status, 204)
    t.equal((await call(app, red, 'GET', '/workspaces/ws-dev')).status, 404, 'a row removed stops granting')
  })

  t.test('deleting a project takes its rows with their events', async (t) => {
    const other = (await call(app, owner, 'POST', '/organizations/acme/projects', projectBody('short-lived'))).json.data.id
    const row = (await call(app, owner, 'POST', '/team-projects', rowBody('team-writers', other, 'write'))).json.data.id
    t.equal((await call(app, owner, 'DELETE', `/projects/${other}`)).status, 204)
    t.equal((await call(app, owner, 'GET', `/projects/${other}`)).status, 404)
    const events = await app.db.selectFrom('audit_events').select(['resource_type', 'action', 'resource_id']).where('resource_id', 'in', [other, row]).orderBy('occurred_at').execute()
    t.same(events.map((e) => `${e.resource_type} ${e.action}`), ['project create', 'team-project create', 'team-project destroy', 'project destroy'])
  })

  t.test('a workspace names its project; the organization its default project; filter[project][id]', async (t) => {
    const org = await call(app, TOKENS.writer, 'GET', '/organizations/acme')
    t.equal(org.status, 200, 'a member reads its organization')
    const defaultProject = org.json.data.relationships['default-project'].data.id
    t.match(org.json.data, { id: 'acme', type: 'organizations', attributes: { name: 'acme', 'external-id': /^org-/ }, relationships: { 'default-project': { data: { type: 'projects' } } } })
    // HCP Terraform's permissions: an owner's can-update tells the mirror a token reads the whole organization (DESIGN §13.1)
    const none = { 'can-update': false, 'can-destroy': false, 'can-create-team': false, 'can-create-workspace': false, 'can-create-project': false, 'can-manage-users': false }
    t.same(org.json.data.attributes.permissions, none, 'a member of a team with no organization access: nothing')
    t.equal(org.json.data.attributes.mirror, null, 'not a mirrored organization')
    const owners = (await call(app, owner, 'GET', '/organizations/acme')).json.data.attributes.permissions
    t.same(owners, Object.fromEntries(Object.keys(none).map((key) => [key, true])), 'an owner: everything')
    t.equal((await call(app, TOKENS.otherOrganization, 'GET', '/organizations/acme')).body, NOT_FOUND, 'no member: the 404 of a missing one')
    t.equal((await call(app, owner, 'GET', '/organizations/nope')).body, NOT_FOUND)
    const prod = await call(app, owner, 'GET', '/workspaces/ws-prod')
    t.same(prod.json.data.relationships.project, { data: { id: defaultProject, type: 'projects' } })
    const inPlatform = await call(app, owner, 'GET', `/organizations/acme/workspaces?filter%5Bproject%5D%5Bid%5D=${platform}`)
    t.same(inPlatform.json.data.map((w: any) => w.id), ['ws-dev'])
    t.match(inPlatform.json.links.self, /filter%5Bproject%5D%5Bid%5D=/)
    const inDefault = await call(app, owner, 'GET', `/organizations/acme/workspaces?filter%5Bproject%5D%5Bid%5D=${defaultProject}&search%5Bname%5D=pro`)
    t.same(inDefault.json.data.map((w: any) => w.id), ['ws-prod'], 'with search[name] too')
  })

  t.test('manage-projects requires manage-workspaces, read-projects requires read-workspaces (422 naming the flag)', async (t) => {
    const create = (flags: Record<string, boolean>) => call(app, owner, 'POST', '/organizations/acme/teams', { data: { type: 'teams', attributes: { name: `t-${Object.keys(flags).join('-')}-${Object.values(flags).join('-')}`, 'organization-access': flags } } })
    const lacking = await create({ 'manage-projects': true })
    t.equal(lacking.status, 422)
    t.same(lacking.json.errors[0].source, { pointer: '/data/attributes/organization-access/manage-projects' })
    t.match(lacking.json.errors[0].detail, 'manage-projects requires manage-workspaces')
    t.equal((await create({ 'read-projects': true })).status, 422)
    t.equal((await create({ 'manage-projects': true, 'manage-workspaces': true })).status, 201)
    const reads = await create({ 'read-projects': true, 'read-workspaces': true })
    t.equal(reads.status, 201)
    const dropped = await call(app, owner, 'PATCH', `/teams/${reads.json.data.id}`, { data: { type: 'teams', attributes: { 'organization-access': { 'read-workspaces': false } } } })
    t.equal(dropped.status, 422, 'an update that takes the prerequisite away')
    t.same(dropped.json.errors[0].source, { pointer: '/data/attributes/organization-access/read-projects' })
    await t.rejects(app.teamAccess.directory.createTeam({ organizationId: 'org-acme', name: 'host-made', organizationAccess: { 'manage-projects': true } }), { code: 'invalid', message: 'manage-projects requires manage-workspaces' }, 'the host too')
  })

  t.test("a team's project rows count: a manager of memberships hands out no more than it holds", async (t) => {
    const { tokenDigest } = await import('../../src/auth/token-digest.js')
    await app.db.insertInto('teams').values([
      { id: 'team-hr', organization_id: 'org-acme', name: 'hr', visibility: 'secret', manage_membership: true },
      { id: 'team-plain', organization_id: 'org-acme', name: 'plain', visibility: 'organization' }
    ]).execute()
    await app.db.insertInto('users').values({ id: 'user-hr', username: 'hr' }).execute()
    await app.db.insertInto('team_memberships').values({ team_id: 'team-hr', user_id: 'user-hr' }).execute()
    await app.db.insertInto('tokens').values({ id: 'at-hr', kind: 'user', user_id: 'user-hr', digest: tokenDigest('hr-token') }).execute()
    const members = (method: 'POST' | 'DELETE') => call(app, 'hr-token', method, '/teams/team-plain/relationships/users', { data: [{ type: 'users', id: 'hr' }] })
    t.equal((await members('POST')).status, 204, 'a team that grants nothing: hr may join it')
    t.equal((await members('DELETE')).status, 204)
    const row = (await call(app, owner, 'POST', '/team-projects', rowBody('team-plain', platform, 'maintain'))).json.data.id
    const refused = await members('POST')
    t.equal(refused.status, 404, 'maintain on a project hr holds nothing of: beyond hr')
    t.equal(refused.body, NOT_FOUND)
    t.equal((await call(app, 'hr-token', 'GET', '/teams/team-plain')).json.data.attributes.permissions['can-update-membership'], false, 'the permission says so')
    t.equal((await call(app, owner, 'DELETE', `/team-projects/${row}`)).status, 204)
    t.equal((await members('POST')).status, 204, 'the row gone, hr may again')
  })
})
