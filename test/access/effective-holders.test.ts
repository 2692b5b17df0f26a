import t from 'tap'
import { bearer, build, ENGINE } from '../helper.js'
import { IMPLICIT_PERMISSIONS } from '../../src/access/permissions.js'

/**
 * DESIGN §10.2: a workspace's effective access names every team that holds anything there, once,
 * by team name — whichever grant it holds: only an organization-wide flag (each of the five), only
 * a team-project row on the workspace's project, only a team-access row there, or all three — and
 * no other team: not a team whose flags grant nothing on workspaces (manage-teams,
 * manage-membership), not one whose rows are on another workspace and another project, not a team
 * of another organization however flagged. Team names sort otherwise than their ids, so the order
 * is the names'. The same for one user through its teams (`filter[user]`).
 */
const seed = {
  users: ['alice', 'pat', 'zed'].map((u) => ({ id: `user-${u}`, username: u, tokens: [`${u}-token`] })),
  organizations: [
    {
      id: 'org-acme',
      name: 'acme',
      teams: [
        { id: 'team-1-owners', name: 'owners', owners: true, members: ['alice'] },
        { id: 'team-2-mw', name: 'h-manage-workspaces', 'organization-access': { 'manage-workspaces': true } },
        { id: 'team-3-rw', name: 'g-read-workspaces', visibility: 'organization', 'organization-access': { 'read-workspaces': true } },
        // with their prerequisites here, which the test then takes away (below)
        { id: 'team-4-mp', name: 'f-manage-projects', 'organization-access': { 'manage-workspaces': true, 'manage-projects': true }, members: ['pat'] },
        { id: 'team-5-rp', name: 'e-read-projects', visibility: 'organization', 'organization-access': { 'read-workspaces': true, 'read-projects': true } },
        { id: 'team-6-project', name: 'd-project-row', members: ['pat'] },
        { id: 'team-7-row', name: 'c-workspace-row', visibility: 'organization', members: ['pat'] },
        { id: 'team-8-all', name: 'b-all-three', 'organization-access': { 'read-workspaces': true }, members: ['pat'] },
        { id: 'team-9-managers', name: 'a-managers', 'organization-access': { 'manage-teams': true, 'manage-membership': true }, members: ['pat'] },
        { id: 'team-10-elsewhere', name: 'a-elsewhere', members: ['pat'] },
        { id: 'team-11-idle', name: 'a-idle' }
      ],
      projects: [{ id: 'prj-platform', name: 'platform' }, { id: 'prj-other', name: 'other' }],
      workspaces: [{ id: 'ws-api', name: 'api', project: 'platform' }, { id: 'ws-web', name: 'web', project: 'other' }],
      'team-access': [
        { id: 'tws-row-api', team: 'c-workspace-row', workspace: 'api', access: 'plan' },
        { id: 'tws-all-api', team: 'b-all-three', workspace: 'api', access: 'custom', runs: 'apply', variables: 'none' },
        { id: 'tws-elsewhere-web', team: 'a-elsewhere', workspace: 'web', access: 'admin' }
      ],
      'project-access': [
        { id: 'tprj-project-platform', team: 'd-project-row', project: 'platform', access: 'write' },
        { id: 'tprj-all-platform', team: 'b-all-three', project: 'platform', access: 'maintain' },
        { id: 'tprj-elsewhere-other', team: 'a-elsewhere', project: 'other', access: 'admin' }
      ]
    },
    {
      id: 'org-globex',
      name: 'globex',
      teams: [
        { id: 'team-g-owners', name: 'owners', owners: true, members: ['zed'] },
        { id: 'team-g-flags', name: 'flags', 'organization-access': { 'manage-workspaces': true, 'read-workspaces': true, 'manage-projects': true, 'read-projects': true } }
      ],
      workspaces: [{ id: 'ws-globex', name: 'globex' }]
    }
  ]
}

const flag = (kind: string, access: 'admin' | 'read', team: string) => ({ kind, access, team })
const project = (team: string, id: string, projectAccess: string, access: string) =>
  ({ kind: 'team-project', access, team, 'team-project': id, project: 'prj-platform', 'project-access': projectAccess })

t.test(`a workspace's answer names each team that holds anything there, once, and no other (${ENGINE})`, async (t) => {
  const app = await build(t, { seed })
  // a flag alone, as a host's own SQL may leave it (the API and seeds ask for its prerequisite): each flag grants on its own
  await app.db.updateTable('teams').set({ manage_workspaces: false }).where('id', '=', 'team-4-mp').execute()
  await app.db.updateTable('teams').set({ read_workspaces: false }).where('id', '=', 'team-5-rp').execute()
  const get = async (query = '') => await app.inject({ url: `/api/v2/workspaces/ws-api/effective-access${query}`, headers: bearer('alice-token') })

  const res = await get()
  t.equal(res.statusCode, 200)
  const answer = res.json().data as Array<{ id: string, attributes: { access: string, grants: unknown[] } & Record<string, unknown> }>
  t.same(answer.map((x) => [x.id, x.attributes.access, x.attributes.grants]), [
    ['team-8-all:ws-api', 'admin', [
      flag('organization-access.read-workspaces', 'read', 'team-8-all'),
      { kind: 'team-access', access: 'custom', team: 'team-8-all', 'team-workspace': 'tws-all-api' },
      project('team-8-all', 'tprj-all-platform', 'maintain', 'admin')
    ]],
    ['team-7-row:ws-api', 'plan', [{ kind: 'team-access', access: 'plan', team: 'team-7-row', 'team-workspace': 'tws-row-api' }]],
    ['team-6-project:ws-api', 'write', [project('team-6-project', 'tprj-project-platform', 'write', 'write')]],
    ['team-5-rp:ws-api', 'read', [flag('organization-access.read-projects', 'read', 'team-5-rp')]],
    ['team-4-mp:ws-api', 'admin', [flag('organization-access.manage-projects', 'admin', 'team-4-mp')]],
    ['team-3-rw:ws-api', 'read', [flag('organization-access.read-workspaces', 'read', 'team-3-rw')]],
    ['team-2-mw:ws-api', 'admin', [flag('organization-access.manage-workspaces', 'admin', 'team-2-mw')]],
    ['team-1-owners:ws-api', 'admin', [flag('owners', 'admin', 'team-1-owners')]]
  ], 'by team name: a flag only, a project row only, a row only, all three (once); nothing of the teams that hold nothing here, nor of another organization')
  const { access: _, grants: __, ...permissions } = answer.find((x) => x.id === 'team-5-rp:ws-api')!.attributes
  t.same(permissions, IMPLICIT_PERMISSIONS.read, 'a flag gives what its level implies')

  const pat = (await get('?filter%5Buser%5D=pat')).json().data
  t.equal(pat.length, 1)
  t.same(pat[0].relationships.teams.data.map((x: { id: string }) => x.id), ['team-8-all', 'team-7-row', 'team-6-project', 'team-4-mp'],
    'a user through the teams of its that hold anything there, by name')
  t.same(pat[0].attributes.access, 'admin')
  t.same(pat[0].attributes.grants.map((g: { kind: string, team: string }) => `${g.kind} ${g.team}`), [
    'organization-access.read-workspaces team-8-all', 'team-access team-8-all', 'team-project team-8-all',
    'team-access team-7-row', 'team-project team-6-project', 'organization-access.manage-projects team-4-mp'
  ])

  const web = (await app.inject({ url: '/api/v2/workspaces/ws-web/effective-access', headers: bearer('alice-token') })).json().data as Array<{ id: string }>
  t.same(web.map((x) => x.id), ['team-10-elsewhere:ws-web', 'team-8-all:ws-web', 'team-5-rp:ws-web', 'team-4-mp:ws-web', 'team-3-rw:ws-web', 'team-2-mw:ws-web', 'team-1-owners:ws-web'],
    'on a workspace of another project: the rows there and on that project, and the flags; none of the rows of api and platform')
  const globex = (await app.inject({ url: '/api/v2/workspaces/ws-globex/effective-access', headers: bearer('zed-token') })).json().data as Array<{ id: string }>
  t.same(globex.map((x) => x.id), ['team-g-flags:ws-globex', 'team-g-owners:ws-globex'], "another organization: its own teams' flags only")
})
