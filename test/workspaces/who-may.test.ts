import t from 'tap'
import { bearer, build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { tokenDigest } from '../../src/auth/token-digest.js'

/**
 * DESIGN §14.1's "who may", row by row, for workspaces through the API: create (owners, the
 * organization's token, a manage-workspaces team, a team whose project row lets it create there),
 * rename (workspace admins), move (owners, manage-projects, workspace-access move on both projects),
 * delete (owners, manage-workspaces, workspace admins, workspace-access delete on its project) —
 * and for everyone else the 404 of a missing organization or workspace, byte for byte. A move
 * changes who reads the workspace from the very next request.
 */
const NOT_FOUND = '{"errors":[{"status":"404","title":"not found"}]}'
const JSONAPI = { 'content-type': 'application/vnd.api+json' }

const CALLERS = {
  owner: TOKENS.owner,
  organization: TOKENS.organization,
  ownersTeam: TOKENS.ownersTeam,
  manager: 'managers-team-token', // the managers team's own token: manage-workspaces
  projectManager: 'project-manager-token', // manage-projects (and manage-workspaces, its prerequisite)
  creator: 'creator-token', // a project row on platform: workspace-access create
  mover: 'mover-token', // rows on platform and tools: workspace-access move on both
  halfMover: 'half-mover-token', // workspace-access move on platform only
  deleter: 'deleter-token', // a project row on platform: workspace-access delete
  platformReader: 'platform-reader-token', // a read row on platform
  toolsReader: 'tools-reader-token', // a read row on tools
  workspaceAdmin: TOKENS.workspaceAdmin, // admins: an admin row on each workspace made below
  reader: TOKENS.reader, // read-workspaces
  writer: TOKENS.writer, // writers: a write row on each workspace made below
  noTeam: TOKENS.noTeam,
  otherOrganization: TOKENS.otherOrganization
} as const
type Caller = keyof typeof CALLERS
const everyone = Object.keys(CALLERS) as Caller[]

t.test(`who may write workspaces, DESIGN §14.1 (${ENGINE})`, async (t) => {
  const app = await build(t, { seed: world })
  const call = async (who: Caller, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) => {
    const res = await app.inject({ method, url: `/api/v2${url}`, headers: { ...bearer(CALLERS[who]), ...JSONAPI }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) })
    return { status: res.statusCode, body: res.body, json: res.body === '' ? undefined : res.json() }
  }
  const team = async (id: string, flags: Record<string, boolean>, token: string) => {
    if (id !== 'team-managers') await app.db.insertInto('teams').values({ id, organization_id: 'org-acme', name: id, visibility: 'secret', ...flags }).execute()
    await app.db.insertInto('tokens').values({ id: `at-${id}`, kind: 'team', team_id: id, digest: tokenDigest(token) }).execute()
  }
  await team('team-managers', {}, CALLERS.manager)
  await team('team-pm', { manage_projects: true, manage_workspaces: true }, CALLERS.projectManager)
  for (const [id, token] of [['team-creator', CALLERS.creator], ['team-mover', CALLERS.mover], ['team-half', CALLERS.halfMover], ['team-deleter', CALLERS.deleter],
    ['team-platform', CALLERS.platformReader], ['team-tools', CALLERS.toolsReader]] as const) await team(id, {}, token)

  const project = async (name: string) => (await call('owner', 'POST', '/organizations/acme/projects', { data: { type: 'projects', attributes: { name } } })).json.data.id as string
  const give = async (teamId: string, projectId: string, access: string, workspaceAccess: Record<string, boolean> = {}) => {
    const res = await call('owner', 'POST', '/team-projects', {
      data: { type: 'team-projects', attributes: { access, ...(access === 'custom' ? { 'workspace-access': workspaceAccess } : {}) }, relationships: { team: { data: { type: 'teams', id: teamId } }, project: { data: { type: 'projects', id: projectId } } } }
    })
    t.equal(res.status, 201, `${teamId} on ${projectId}`)
  }
  const platform = await project('platform')
  const tools = await project('tools')
  await give('team-creator', platform, 'custom', { create: true })
  await give('team-mover', platform, 'custom', { move: true })
  await give('team-mover', tools, 'custom', { move: true })
  await give('team-half', platform, 'custom', { move: true })
  await give('team-half', tools, 'custom', {})
  await give('team-deleter', platform, 'custom', { delete: true })
  await give('team-platform', platform, 'read')
  await give('team-tools', tools, 'read')

  const body = (name: string, projectId?: string) => ({ data: { type: 'workspaces', attributes: { name }, ...(projectId === undefined ? {} : { relationships: { project: { data: { type: 'projects', id: projectId } } } }) } })
  /** A workspace the owner makes in `projectId`, with an admin row for the admins team and a write row for the writers. */
  let made = 0
  const workspace = async (projectId = platform) => {
    const created = await call('owner', 'POST', '/organizations/acme/workspaces', body(`ws-${made++}`, projectId))
    t.equal(created.status, 201)
    const id = created.json.data.id as string
    for (const [teamId, access] of [['team-admins', 'admin'], ['team-writers', 'write']]) {
      const row = await call('owner', 'POST', '/team-workspaces', { data: { type: 'team-workspaces', attributes: { access }, relationships: { team: { data: { type: 'teams', id: teamId } }, workspace: { data: { type: 'workspaces', id } } } } })
      t.equal(row.status, 200)
    }
    return id
  }
  const check = async (t: Tap, request: (who: Caller) => Promise<{ status: number, body: string }>, may: Caller[], status: number) => {
    for (const who of everyone) {
      const res = await request(who)
      if (may.includes(who)) t.equal(res.status, status, `${who}: ${status} (${res.body.slice(0, 200)})`)
      else t.equal(res.body, NOT_FOUND, `${who}: the 404 of a missing one`)
    }
  }
  type Tap = typeof t

  t.test('POST /organizations/:org/workspaces, in the default project: owners and manage-workspaces', async (t) => {
    const missing = await call('owner', 'POST', '/organizations/nope/workspaces', body('anything'))
    t.equal(missing.body, NOT_FOUND, 'a missing organization')
    await check(t, async (who) => await call(who, 'POST', '/organizations/acme/workspaces', body(`default-by-${who}`)),
      ['owner', 'organization', 'ownersTeam', 'manager', 'projectManager'], 201)
  })

  t.test('POST in a project: and the teams whose row there lets them create; a project of another organization is not there', async (t) => {
    await check(t, async (who) => await call(who, 'POST', '/organizations/acme/workspaces', body(`platform-by-${who}`, platform)),
      ['owner', 'organization', 'ownersTeam', 'manager', 'projectManager', 'creator'], 201)
    await check(t, async (who) => await call(who, 'POST', '/organizations/acme/workspaces', body(`tools-by-${who}`, tools)),
      ['owner', 'organization', 'ownersTeam', 'manager', 'projectManager'], 201)
    t.equal((await call('creator', 'POST', '/organizations/acme/workspaces', body('creator-default'))).body, NOT_FOUND, 'the creator in the default project: as a missing organization')
    t.equal((await call('owner', 'POST', '/organizations/acme/workspaces', body('nowhere', 'prj-doesnotexist0001'))).body, NOT_FOUND, 'a project that does not exist')
    const globex = (await app.db.selectFrom('projects').select('id').where('organization_id', '=', 'org-globex').executeTakeFirstOrThrow()).id
    t.equal((await call('owner', 'POST', '/organizations/acme/workspaces', body('elsewhere', globex))).body, NOT_FOUND, "another organization's project")
    t.equal((await call('otherOrganization', 'POST', '/organizations/globex/workspaces', body('theirs', platform))).body, NOT_FOUND, "acme's project in globex")
  })

  t.test('creating grants the creator nothing: no team-access row, and no more than its project row gave', async (t) => {
    const created = await call('creator', 'POST', '/organizations/acme/workspaces', body('creators-own', platform))
    t.equal(created.status, 201)
    const id = created.json.data.id as string
    t.same(await app.db.selectFrom('team_workspaces').select('id').where('workspace_id', '=', id).execute(), [], 'no row')
    t.match(created.json.data.attributes.permissions, { 'can-update': false, 'can-destroy': false, 'can-read-settings': true }, 'it reads it through its project row, and may not change it')
    t.match((await app.db.selectFrom('workspaces').select('managed_by').where('id', '=', id).executeTakeFirstOrThrow()), { managed_by: 'api' })
  })

  t.test('PATCH a rename: workspace admins; a reader, a writer, a mover: 404', async (t) => {
    const id = await workspace()
    await check(t, async (who) => await call(who, 'PATCH', `/workspaces/${id}`, { data: { type: 'workspaces', attributes: { name: `renamed-by-${who}` } } }),
      ['owner', 'organization', 'ownersTeam', 'manager', 'projectManager', 'workspaceAdmin'], 200)
    await check(t, async (who) => await call(who, 'PATCH', `/workspaces/${id}`, { data: { type: 'workspaces', attributes: { 'auto-apply': who.length % 2 === 0 } } }),
      ['owner', 'organization', 'ownersTeam', 'manager', 'projectManager', 'workspaceAdmin'], 200)
    const named = (await call('owner', 'GET', `/workspaces/${id}`)).json.data.attributes.name as string
    await check(t, async (who) => await call(who, 'PATCH', `/organizations/acme/workspaces/${named}`, { data: { type: 'workspaces', attributes: { description: `by ${who}` } } }),
      ['owner', 'organization', 'ownersTeam', 'manager', 'projectManager', 'workspaceAdmin'], 200)
  })

  t.test('PATCH a move: owners, manage-projects, or workspace-access move on both projects', async (t) => {
    const move = (to: string) => ({ data: { type: 'workspaces', relationships: { project: { data: { type: 'projects', id: to } } } } })
    for (const who of everyone) {
      const id = await workspace(platform)
      const res = await call(who, 'PATCH', `/workspaces/${id}`, move(tools))
      const may = ['owner', 'organization', 'ownersTeam', 'projectManager', 'mover'].includes(who)
      if (may) {
        t.equal(res.status, 200, `${who}: moved`)
        t.equal(res.json.data.relationships.project.data.id, tools)
      } else t.equal(res.body, NOT_FOUND, `${who}: the 404 of a missing one`)
    }
    const id = await workspace(platform)
    t.equal((await call('halfMover', 'PATCH', `/workspaces/${id}`, move(tools))).body, NOT_FOUND, 'move on the project it leaves only: 404')
    t.equal((await call('mover', 'PATCH', `/workspaces/${id}`, move('prj-doesnotexist0001'))).body, NOT_FOUND, 'a project that does not exist: 404')
    t.equal((await call('manager', 'PATCH', `/workspaces/${id}`, move(tools))).body, NOT_FOUND, 'manage-workspaces is no move between projects')
    t.equal((await call('workspaceAdmin', 'PATCH', `/workspaces/${id}`, move(tools))).body, NOT_FOUND, 'nor is being its admin')
    const back = await workspace(tools)
    t.equal((await call('mover', 'PATCH', `/workspaces/${back}`, move(platform))).status, 200, 'move on both: either way')
    t.equal((await call('owner', 'GET', `/workspaces/${id}`)).json.data.relationships.project.data.id, platform, 'the refused moves moved nothing')
  })

  t.test('a move changes who reads the workspace from the very next request', async (t) => {
    const id = await workspace(platform)
    t.equal((await call('platformReader', 'GET', `/workspaces/${id}`)).status, 200, "platform's reader reads it")
    t.equal((await call('toolsReader', 'GET', `/workspaces/${id}`)).body, NOT_FOUND, "tools' reader does not")
    t.equal((await call('mover', 'PATCH', `/workspaces/${id}`, { data: { type: 'workspaces', relationships: { project: { data: { type: 'projects', id: tools } } } } })).status, 200)
    t.equal((await call('platformReader', 'GET', `/workspaces/${id}`)).body, NOT_FOUND, "platform's reader: gone at once")
    t.equal((await call('toolsReader', 'GET', `/workspaces/${id}`)).status, 200, "tools' reader: reads it at once")
    const names = async (who: Caller) => (await call(who, 'GET', '/organizations/acme/workspaces?page%5Bsize%5D=100')).json.data.map((w: any) => w.id)
    t.notOk((await names('platformReader')).includes(id), 'and in lists')
    t.ok((await names('toolsReader')).includes(id))
  })

  t.test('DELETE: owners, manage-workspaces, workspace admins, workspace-access delete on its project', async (t) => {
    const may: Caller[] = ['owner', 'organization', 'ownersTeam', 'manager', 'projectManager', 'workspaceAdmin', 'deleter']
    for (const who of everyone) {
      const id = await workspace(platform)
      const res = await call(who, 'DELETE', `/workspaces/${id}`)
      if (may.includes(who)) {
        t.equal(res.status, 204, `${who}: deleted`)
        t.equal((await call('owner', 'GET', `/workspaces/${id}`)).body, NOT_FOUND, `${who}: gone`)
      } else t.equal(res.body, NOT_FOUND, `${who}: the 404 of a missing one`)
    }
    const inTools = await workspace(tools)
    t.equal((await call('deleter', 'DELETE', `/workspaces/${inTools}`)).body, NOT_FOUND, "delete on platform is nothing on tools' workspaces")
    for (const who of may) {
      const id = await workspace(platform)
      t.equal((await call(who, 'POST', `/workspaces/${id}/actions/safe-delete`)).status, 204, `${who}: safe-delete, the same`)
    }
    const byName = await workspace(platform)
    const name = (await call('owner', 'GET', `/workspaces/${byName}`)).json.data.attributes.name as string
    t.equal((await call('writer', 'DELETE', `/organizations/acme/workspaces/${name}`)).body, NOT_FOUND, 'by name: a writer may not')
    t.equal((await call('deleter', 'DELETE', `/organizations/acme/workspaces/${name}`)).status, 204, 'by name: the deleter may')
  })

  t.test("a workspace's permissions are the caller's", async (t) => {
    const id = await workspace(platform)
    const permissions = async (who: Caller) => (await call(who, 'GET', `/workspaces/${id}`)).json.data.attributes.permissions
    t.match(await permissions('owner'), { 'can-update': true, 'can-destroy': true, 'can-force-delete': true, 'can-queue-run': false })
    t.match(await permissions('workspaceAdmin'), { 'can-update': true, 'can-destroy': true })
    t.match(await permissions('deleter'), { 'can-update': false, 'can-destroy': true, 'can-force-delete': true })
    t.match(await permissions('writer'), { 'can-update': false, 'can-destroy': false, 'can-force-delete': false, 'can-read-settings': true })
    t.match(await permissions('reader'), { 'can-update': false, 'can-destroy': false })
    t.match((await call('owner', 'GET', '/workspaces/ws-prod')).json.data.attributes, { permissions: { 'can-update': false, 'can-destroy': false }, actions: { 'is-destroyable': false } },
      "the seed's workspace: nobody may change it through the API")
  })
})
