import t from 'tap'
import { bearer, build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { tokenDigest } from '../../src/auth/token-digest.js'

/**
 * DESIGN §11.4's table, row by row: for each request, every kind of caller — owners (a user, the
 * organization's token), a manage-projects team, a read-projects team, a project admin through its
 * row (`teams` manage), rows whose custom `settings` is update or delete, a member with a read row
 * on the project, a member with none, another organization — and what each gets: the answer, or the
 * 404 of a missing id, byte for byte.
 */
const NOT_FOUND = '{"errors":[{"status":"404","title":"not found"}]}'
const JSONAPI = { 'content-type': 'application/vnd.api+json' }

const CALLERS = {
  owner: TOKENS.owner,
  organization: TOKENS.organization,
  manager: 'projects-manager-token',
  projectReader: 'projects-reader-token',
  projectAdmin: TOKENS.secretMember, // red: a row with teams manage
  settingsUpdate: 'settings-update-token',
  settingsDelete: 'settings-delete-token',
  rowReader: TOKENS.writer, // writers: a read row on the project
  noRow: TOKENS.reader, // read-workspaces, nothing on projects
  otherOrganization: TOKENS.otherOrganization
} as const
type Caller = keyof typeof CALLERS

t.test(`who may, for every request of DESIGN §11.4 (${ENGINE})`, async (t) => {
  const app = await build(t, { seed: world })
  const call = async (who: Caller, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) => {
    const res = await app.inject({ method, url: `/api/v2${url}`, headers: { ...bearer(CALLERS[who]), ...JSONAPI }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) })
    return { status: res.statusCode, body: res.body, json: res.body === '' ? undefined : res.json() }
  }
  // the extra callers: teams with the project flags, and teams whose rows set settings
  const team = async (id: string, flags: Record<string, boolean>, token: string) => {
    await app.db.insertInto('teams').values({ id, organization_id: 'org-acme', name: id, visibility: 'secret', ...flags }).execute()
    await app.db.insertInto('tokens').values({ id: `at-${id}`, kind: 'team', team_id: id, digest: tokenDigest(token) }).execute()
  }
  await team('team-pm', { manage_projects: true, manage_workspaces: true }, CALLERS.manager)
  await team('team-pr', { read_projects: true, read_workspaces: true }, CALLERS.projectReader)
  await team('team-su', {}, CALLERS.settingsUpdate)
  await team('team-sd', {}, CALLERS.settingsDelete)

  const project = async (name: string) => {
    const id = (await call('owner', 'POST', '/organizations/acme/projects', { data: { type: 'projects', attributes: { name } } })).json.data.id as string
    const give = async (teamId: string, access: string, objects: Record<string, unknown> = {}) =>
      (await call('owner', 'POST', '/team-projects', { data: { type: 'team-projects', attributes: { access, ...objects }, relationships: { team: { data: { type: 'teams', id: teamId } }, project: { data: { type: 'projects', id } } } } })).json.data.id as string
    const rows = {
      red: await give('team-red', 'custom', { 'project-access': { teams: 'manage' } }),
      su: await give('team-su', 'custom', { 'project-access': { settings: 'update' } }),
      sd: await give('team-sd', 'custom', { 'project-access': { settings: 'delete' } }),
      writers: await give('team-writers', 'read')
    }
    return { id, rows }
  }
  const platform = await project('platform')

  const everyone = Object.keys(CALLERS) as Caller[]
  const check = async (t: Tap, request: (who: Caller) => Promise<{ status: number, body: string }>, may: Caller[], status: number) => {
    for (const who of everyone) {
      const res = await request(who)
      if (may.includes(who)) t.equal(res.status, status, `${who}: ${status} (${res.body.slice(0, 200)})`)
      else t.equal(res.body, NOT_FOUND, `${who}: the 404 of a missing one`)
    }
  }
  type Tap = typeof t

  t.test('GET /organizations/:org/projects: members, each the projects it reads', async (t) => {
    const seen: Record<string, string[]> = {}
    for (const who of everyone) {
      const res = await call(who, 'GET', '/organizations/acme/projects')
      seen[who] = res.status === 200 ? res.json.data.map((p: any) => p.attributes.name).sort() : [res.body]
    }
    const all = ['Default Project', 'platform']
    t.same(seen, {
      owner: all,
      organization: all,
      manager: all,
      projectReader: all,
      projectAdmin: ['platform'],
      settingsUpdate: ['platform'],
      settingsDelete: ['platform'],
      rowReader: ['platform'],
      noRow: [],
      otherOrganization: [NOT_FOUND]
    })
  })

  t.test('GET /projects/:id: who reads it', async (t) => {
    await check(t, async (who) => await call(who, 'GET', `/projects/${platform.id}`), ['owner', 'organization', 'manager', 'projectReader', 'projectAdmin', 'settingsUpdate', 'settingsDelete', 'rowReader'], 200)
  })

  t.test("a project's team-count counts the rows the caller is shown (issue 43, item 8)", async (t) => {
    for (const who of ['owner', 'organization', 'manager', 'projectReader', 'projectAdmin', 'settingsUpdate', 'settingsDelete', 'rowReader'] as const) {
      const shown = (await call(who, 'GET', `/team-projects?filter[project][id]=${platform.id}`)).json.data.length as number
      const counted = (await call(who, 'GET', `/projects/${platform.id}`)).json.data.attributes['team-count'] as number
      const listed = (await call(who, 'GET', '/organizations/acme/projects?filter[names]=platform')).json.data[0].attributes['team-count'] as number
      t.same([counted, listed], [shown, shown], `${who}: ${shown} rows shown, ${counted} counted`)
    }
    const rowReader = (await call('rowReader', 'GET', `/projects/${platform.id}`)).json.data.attributes['team-count']
    t.equal(rowReader, 1, 'a member with a read row is shown the organization-visible rows only (its own)')
  })

  t.test('a project admin renaming its own project learns nothing of projects it cannot read (issue 43, item 8)', async (t) => {
    const hidden = (await call('owner', 'POST', '/organizations/acme/projects', { data: { type: 'projects', attributes: { name: 'hidden payroll' } } })).json.data.id as string
    t.equal((await call('projectAdmin', 'GET', `/projects/${hidden}`)).body, NOT_FOUND, 'a project red cannot read')
    const rename = async (name: string) => await call('projectAdmin', 'PATCH', `/projects/${platform.id}`, { data: { attributes: { name } } })
    const clash = await rename('HIDDEN PAYROLL')
    t.equal(clash.body, NOT_FOUND, 'a name a hidden project holds: the 404 of a caller who may not, not "taken"')
    t.equal((await call('owner', 'GET', `/projects/${platform.id}`)).json.data.attributes.name, 'platform', 'nothing changed')
    const seen = await rename('Default Project')
    t.equal(seen.status, 404, 'the default project, which red does not read either')
    await project('red reads this') // red holds a row on it
    const visible = await rename('red reads this')
    t.same([visible.status, visible.json.errors[0].detail], [422, 'Name has already been taken'], 'a name a project red reads holds: 422, as ever')
    t.equal((await call('owner', 'PATCH', `/projects/${platform.id}`, { data: { attributes: { name: 'hidden payroll' } } })).status, 422, 'an owner reads every project: 422')
    t.equal((await rename('platform two')).status, 200, 'a free name: renamed')
    t.equal((await rename('platform')).status, 200)
  })

  t.test("a project's permissions are the caller's", async (t) => {
    const permissions = async (who: Caller) => (await call(who, 'GET', `/projects/${platform.id}`)).json.data.attributes.permissions
    t.match(await permissions('owner'), { 'can-update': true, 'can-destroy': true, 'can-read-teams': true, 'can-manage-teams': true })
    t.match(await permissions('projectAdmin'), { 'can-update': true, 'can-destroy': true, 'can-manage-teams': true })
    t.match(await permissions('settingsUpdate'), { 'can-update': true, 'can-destroy': false, 'can-manage-teams': false })
    t.match(await permissions('settingsDelete'), { 'can-update': true, 'can-destroy': true, 'can-manage-teams': false })
    t.match(await permissions('rowReader'), { 'can-update': false, 'can-destroy': false, 'can-read-teams': false, 'can-manage-teams': false })
    t.match(await permissions('projectReader'), { 'can-update': false, 'can-destroy': false, 'can-manage-teams': false })
  })

  t.test('POST /organizations/:org/projects: owners and manage-projects', async (t) => {
    let n = 0
    await check(t, async (who) => await call(who, 'POST', '/organizations/acme/projects', { data: { type: 'projects', attributes: { name: `made ${n++}` } } }), ['owner', 'organization', 'manager'], 201)
  })

  t.test('PATCH /projects/:id: project admins and settings update or delete', async (t) => {
    await check(t, async (who) => await call(who, 'PATCH', `/projects/${platform.id}`, { data: { attributes: { description: `by ${who}` } } }),
      ['owner', 'organization', 'manager', 'projectAdmin', 'settingsUpdate', 'settingsDelete'], 200)
  })

  t.test('DELETE /projects/:id: project admins and settings delete', async (t) => {
    for (const who of everyone) {
      const doomed = await project(`doomed by ${who}`)
      const res = await call(who, 'DELETE', `/projects/${doomed.id}`)
      if (['owner', 'organization', 'manager', 'projectAdmin', 'settingsDelete'].includes(who)) t.equal(res.status, 204, who)
      else t.equal(res.body, NOT_FOUND, `${who}: the 404 of a missing one`)
    }
  })

  t.test('GET /team-projects: who reads the project; secret teams only to project admins and their members', async (t) => {
    const seen: Record<string, string[]> = {}
    for (const who of everyone) {
      const res = await call(who, 'GET', `/team-projects?filter%5Bproject%5D%5Bid%5D=${platform.id}`)
      seen[who] = res.status === 200 ? res.json.data.map((r: any) => r.relationships.team.data.id).sort() : [res.body]
    }
    const all = ['team-red', 'team-sd', 'team-su', 'team-writers']
    t.same(seen, {
      owner: all,
      organization: all,
      manager: all,
      projectAdmin: all,
      // a read-projects team, and rows without teams manage: the organization-visible team's row and their own
      projectReader: ['team-writers'],
      settingsUpdate: ['team-su', 'team-writers'],
      settingsDelete: ['team-sd', 'team-writers'],
      rowReader: ['team-writers'],
      noRow: [NOT_FOUND],
      otherOrganization: [NOT_FOUND]
    })
    await check(t, async (who) => await call(who, 'GET', `/team-projects/${platform.rows.su}`), ['owner', 'organization', 'manager', 'projectAdmin', 'settingsUpdate'], 200)
  })

  t.test('POST, PATCH, DELETE /team-projects: project admins, for teams they read, never more than they hold', async (t) => {
    const add = (who: Caller, teamId: string, access = 'custom') => call(who, 'POST', '/team-projects', { data: { type: 'team-projects', attributes: { access }, relationships: { team: { data: { type: 'teams', id: teamId } }, project: { data: { type: 'projects', id: platform.id } } } } })
    /** green's row on the project, made anew by the owner (custom, at its defaults) */
    const freshGreen = async () => {
      const list = await call('owner', 'GET', `/team-projects?filter%5Bproject%5D%5Bid%5D=${platform.id}&filter%5Bteam%5D%5Bid%5D=team-green`)
      for (const row of list.json.data) await call('owner', 'DELETE', `/team-projects/${row.id as string}`)
      return (await add('owner', 'team-green')).json.data.id as string
    }
    // a custom row at its defaults: within what red's row (custom, teams manage) holds
    await check(t, async (who) => {
      const list = await call('owner', 'GET', `/team-projects?filter%5Bproject%5D%5Bid%5D=${platform.id}&filter%5Bteam%5D%5Bid%5D=team-green`)
      for (const row of list.json.data) await call('owner', 'DELETE', `/team-projects/${row.id as string}`)
      return await add(who, 'team-green')
    }, ['owner', 'organization', 'manager', 'projectAdmin'], 201)
    const green = await freshGreen()
    t.equal((await add('projectAdmin', 'team-blue', 'custom')).body, NOT_FOUND, 'nor a secret team it cannot see')
    t.equal((await add('projectAdmin', 'team-owners')).body, NOT_FOUND, "never the owners team's, but as an owner")
    t.equal((await add('owner', 'team-owners')).status, 201, 'an owner may')
    await check(t, async (who) => await call(who, 'PATCH', `/team-projects/${green}`, { data: { attributes: { access: 'custom', 'workspace-access': { runs: 'read' } } } }), ['owner', 'organization', 'manager', 'projectAdmin'], 200)
    t.equal((await call('projectAdmin', 'PATCH', `/team-projects/${green}`, { data: { attributes: { access: 'read' } } })).body, NOT_FOUND, "red's custom row (state versions and variables none) gives no read row")
    t.equal((await call('projectAdmin', 'PATCH', `/team-projects/${green}`, { data: { attributes: { access: 'maintain' } } })).body, NOT_FOUND, 'nor maintain')
    await check(t, async (who) => await call(who, 'DELETE', `/team-projects/${await freshGreen()}`), ['owner', 'organization', 'manager', 'projectAdmin'], 204)
  })
})
