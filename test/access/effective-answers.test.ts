import t, { type Test } from 'tap'
import { bearer, build, ENGINE } from '../helper.js'
import { validateResponse } from '../openapi.js'
import { IMPLICIT_PERMISSIONS } from '../../src/access/permissions.js'
import type { Caller } from '../../src/auth/caller.js'

/**
 * DESIGN §10.2: GET /workspaces/:id/effective-access (owners and workspace admins) and
 * GET /teams/:id/effective-access (owners and who acts through the team) — who may ask, row by
 * row, everyone else getting the 404 of a missing id byte for byte; what they answer; and the host's
 * `teamAccess.explain`, which answers the same.
 */
const users = ['alice', 'dave', 'frank', 'bob', 'carol', 'erin', 'nobody', 'zed']
const seed = {
  users: users.map((u) => ({ id: `user-${u}`, username: u, tokens: [`${u}-token`] })),
  organizations: [
    {
      id: 'org-acme',
      name: 'acme',
      tokens: ['acme-org-token'],
      teams: [
        { id: 'team-owners', name: 'owners', owners: true, members: ['alice'], tokens: ['owners-team-token'] },
        { id: 'team-ops', name: 'ops', visibility: 'organization', 'organization-access': { 'manage-workspaces': true }, members: ['dave'] },
        { id: 'team-leads', name: 'leads', members: ['frank'] },
        { id: 'team-devs', name: 'devs', visibility: 'organization', members: ['bob', 'carol'], tokens: ['devs-team-token'] },
        { id: 'team-red', name: 'red', members: ['bob'], tokens: ['red-team-token'] },
        { id: 'team-readers', name: 'readers', 'organization-access': { 'read-workspaces': true }, members: ['erin', 'bob'] },
        { id: 'team-empty', name: 'empty', members: ['nobody'] }
      ],
      workspaces: [{ id: 'ws-prod', name: 'prod' }, { id: 'ws-staging', name: 'staging' }],
      'team-access': [
        { id: 'tws-leads-prod', team: 'leads', workspace: 'prod', access: 'admin' },
        { id: 'tws-devs-prod', team: 'devs', workspace: 'prod', access: 'plan' },
        { id: 'tws-devs-staging', team: 'devs', workspace: 'staging', access: 'write' },
        { id: 'tws-red-prod', team: 'red', workspace: 'prod', access: 'custom', runs: 'apply', 'sentinel-mocks': 'read' },
        { id: 'tws-readers-staging', team: 'readers', workspace: 'staging', access: 'custom', 'state-versions': 'read-outputs' }
      ]
    },
    {
      id: 'org-other',
      name: 'other',
      tokens: ['other-org-token'],
      teams: [{ id: 'team-zowners', name: 'owners', owners: true, members: ['zed'] }],
      workspaces: [{ id: 'ws-elsewhere', name: 'elsewhere' }]
    }
  ]
}

const workspaceUrl = (id: string, query = '') => `/api/v2/workspaces/${id}/effective-access${query}`
const teamUrl = (id: string, query = '') => `/api/v2/teams/${id}/effective-access${query}`

t.test(`who may ask, and what they are told, on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed })
  const get = async (url: string, token?: string) => await app.inject({ url, headers: { 'content-type': 'application/vnd.api+json', ...(token === undefined ? {} : bearer(token)) } })

  /** 200 (and a valid document), or the 404 of a missing id: same status, same headers that matter, same bytes. */
  async function expectAnswer (t: Test, url: string, missingUrl: string, token: string, allowed: boolean, operation: 'workspaceEffectiveAccess' | 'teamEffectiveAccess') {
    const res = await get(url, token)
    if (allowed) {
      t.equal(res.statusCode, 200, `${token}: ${url} answers`)
      const { valid, errors } = validateResponse(operation, res.json())
      t.ok(valid, `${token}: the answer validates against schemas/openapi.json`, { errors })
      return
    }
    const missing = await get(missingUrl, token)
    t.equal(res.statusCode, 404, `${token}: ${url} is not found`)
    t.equal(res.body, missing.body, `${token}: the same bytes as a missing id`)
    t.equal(res.headers['content-type'], missing.headers['content-type'])
    t.equal(res.headers['content-length'], missing.headers['content-length'])
  }

  t.test('a workspace: owners and workspace admins; anyone else 404 as a missing workspace', async (t) => {
    const who: Array<[string, boolean]> = [
      ['acme-org-token', true], // the organization token: an owner
      ['alice-token', true], // an owner through the owners team
      ['owners-team-token', true], // the owners team's token
      ['dave-token', true], // manage-workspaces: admin on every workspace
      ['frank-token', true], // an admin row on prod
      ['bob-token', false], // plan, custom and read there: a reader, no admin
      ['carol-token', false],
      ['erin-token', false], // read-workspaces
      ['devs-team-token', false], // a team token with a row there
      ['red-team-token', false],
      ['nobody-token', false], // a member with nothing there
      ['other-org-token', false], // another organization's owner
      ['zed-token', false]
    ]
    for (const [token, allowed] of who) {
      await expectAnswer(t, workspaceUrl('ws-prod'), workspaceUrl('ws-missing'), token, allowed, 'workspaceEffectiveAccess')
      await expectAnswer(t, workspaceUrl('ws-prod', '?filter%5Buser%5D=bob'), workspaceUrl('ws-missing', '?filter%5Buser%5D=bob'), token, allowed, 'workspaceEffectiveAccess')
    }
    await expectAnswer(t, workspaceUrl('ws-staging'), workspaceUrl('ws-missing'), 'frank-token', false, 'workspaceEffectiveAccess')
    await expectAnswer(t, workspaceUrl('ws-elsewhere'), workspaceUrl('ws-missing'), 'alice-token', false, 'workspaceEffectiveAccess')
    await expectAnswer(t, workspaceUrl('ws-elsewhere'), workspaceUrl('ws-missing'), 'zed-token', true, 'workspaceEffectiveAccess')
  })

  t.test('a team: owners, and its members and its own token; anyone else 404 as a missing team', async (t) => {
    const who: Array<[string, string, boolean]> = [
      ['team-devs', 'acme-org-token', true],
      ['team-devs', 'alice-token', true],
      ['team-devs', 'owners-team-token', true],
      ['team-devs', 'bob-token', true], // members
      ['team-devs', 'carol-token', true],
      ['team-devs', 'devs-team-token', true], // the team's own token
      ['team-devs', 'red-team-token', false], // another team's token
      ['team-devs', 'dave-token', false], // manage-workspaces is no ownership
      ['team-devs', 'frank-token', false], // a workspace admin
      ['team-devs', 'erin-token', false],
      ['team-devs', 'other-org-token', false],
      ['team-devs', 'zed-token', false],
      ['team-red', 'bob-token', true], // a secret team, to its member
      ['team-red', 'red-team-token', true],
      ['team-red', 'carol-token', false],
      ['team-ops', 'dave-token', true],
      ['team-zowners', 'zed-token', true],
      ['team-zowners', 'alice-token', false]
    ]
    for (const [team, token, allowed] of who) {
      await expectAnswer(t, teamUrl(team), teamUrl('team-missing'), token, allowed, 'teamEffectiveAccess')
      await expectAnswer(t, teamUrl(team, '?page%5Bsize%5D=1&page%5Bnumber%5D=2'), teamUrl('team-missing', '?page%5Bsize%5D=1&page%5Bnumber%5D=2'), token, allowed, 'teamEffectiveAccess')
    }
  })

  t.test('without a usable token: 401; bad parameters: 422', async (t) => {
    t.equal((await get(workspaceUrl('ws-prod'))).statusCode, 401)
    t.equal((await get(teamUrl('team-devs'), 'no-such-token')).statusCode, 401)
    t.equal((await get(workspaceUrl('ws-prod', '?filter%5Buser%5D='), 'alice-token')).statusCode, 422, 'an empty filter[user]')
    t.equal((await get(teamUrl('team-devs', '?page%5Bsize%5D=101'), 'alice-token')).statusCode, 422)
    t.equal((await get(teamUrl('team-devs', '?page%5Bnumber%5D=0'), 'alice-token')).statusCode, 422)
    t.equal((await get(teamUrl('team-devs', '?include=users'), 'alice-token')).statusCode, 400, 'include is accepted empty only')
    t.equal((await get(teamUrl('team-devs', '?include=&unknown=1'), 'alice-token')).statusCode, 200, 'unknown parameters are ignored')
  })

  t.test('a workspace: every team that holds access, by name, with its grants', async (t) => {
    const res = await get(workspaceUrl('ws-prod'), 'dave-token')
    const answer = res.json().data as Array<{ id: string, attributes: Record<string, unknown>, relationships: { team: { data: { id: string } } } }>
    t.same(answer.map((x) => x.relationships.team.data.id), ['team-devs', 'team-leads', 'team-ops', 'team-owners', 'team-readers', 'team-red'], 'by team name; the empty team holds nothing')
    const of = (team: string) => answer.find((x) => x.relationships.team.data.id === team)!
    t.same(of('team-owners').attributes, { access: 'admin', ...IMPLICIT_PERMISSIONS.admin, grants: [{ kind: 'owners', access: 'admin', team: 'team-owners' }] })
    t.same(of('team-ops').attributes.grants, [{ kind: 'organization-access.manage-workspaces', access: 'admin', team: 'team-ops' }])
    t.same(of('team-readers').attributes, { access: 'read', ...IMPLICIT_PERMISSIONS.read, grants: [{ kind: 'organization-access.read-workspaces', access: 'read', team: 'team-readers' }] })
    t.same(of('team-leads').attributes.grants, [{ kind: 'team-access', access: 'admin', team: 'team-leads', 'team-workspace': 'tws-leads-prod' }])
    t.same(of('team-red').attributes, {
      access: 'custom',
      runs: 'apply',
      variables: 'none',
      'state-versions': 'none',
      'sentinel-mocks': 'read',
      'workspace-locking': false,
      'run-tasks': false,
      'policy-overrides': false,
      grants: [{ kind: 'team-access', access: 'custom', team: 'team-red', 'team-workspace': 'tws-red-prod' }]
    })
    t.match(of('team-devs'), {
      id: 'team-devs:ws-prod',
      type: 'effective-access',
      relationships: {
        team: { data: { id: 'team-devs', type: 'teams' }, links: { related: '/api/v2/teams/team-devs' } },
        workspace: { data: { id: 'ws-prod', type: 'workspaces' }, links: { related: '/api/v2/organizations/acme/workspaces/prod' } }
      }
    })
    const staging = (await get(workspaceUrl('ws-staging'), 'alice-token')).json().data as typeof answer
    t.same(staging.find((x) => x.relationships.team.data.id === 'team-readers')!.attributes, {
      access: 'read',
      runs: 'read',
      variables: 'read',
      'state-versions': 'read',
      'sentinel-mocks': 'none',
      'workspace-locking': false,
      'run-tasks': false,
      'policy-overrides': false,
      grants: [
        { kind: 'organization-access.read-workspaces', access: 'read', team: 'team-readers' },
        { kind: 'team-access', access: 'custom', team: 'team-readers', 'team-workspace': 'tws-readers-staging' }
      ]
    }, 'a read grant and a custom row: the higher level, each permission the strongest')
  })

  t.test('filter[user]: one user\'s access, through its teams', async (t) => {
    const res = await get(workspaceUrl('ws-prod', '?filter%5Buser%5D=bob'), 'frank-token')
    t.same(res.json(), {
      data: [{
        id: 'user-bob:ws-prod',
        type: 'effective-access',
        attributes: {
          access: 'plan',
          runs: 'apply',
          variables: 'read',
          'state-versions': 'read',
          'sentinel-mocks': 'read',
          'workspace-locking': false,
          'run-tasks': false,
          'policy-overrides': false,
          grants: [
            { kind: 'team-access', access: 'plan', team: 'team-devs', 'team-workspace': 'tws-devs-prod' },
            { kind: 'organization-access.read-workspaces', access: 'read', team: 'team-readers' },
            { kind: 'team-access', access: 'custom', team: 'team-red', 'team-workspace': 'tws-red-prod' }
          ]
        },
        relationships: {
          user: { data: { id: 'user-bob', type: 'users' } },
          teams: { data: [{ id: 'team-devs', type: 'teams' }, { id: 'team-readers', type: 'teams' }, { id: 'team-red', type: 'teams' }] },
          workspace: { data: { id: 'ws-prod', type: 'workspaces' }, links: { related: '/api/v2/organizations/acme/workspaces/prod' } }
        }
      }]
    })
    const alice = (await get(workspaceUrl('ws-prod', '?filter%5Buser%5D=alice'), 'acme-org-token')).json()
    t.same(alice.data[0].attributes.grants, [{ kind: 'owners', access: 'admin', team: 'team-owners' }])
    const none = { data: [] }
    t.same((await get(workspaceUrl('ws-prod', '?filter%5Buser%5D=nobody'), 'alice-token')).json(), none, 'a member who holds nothing')
    // a name that names no member of the organization is a 422, the same for a user of another organization and for none at all
    const zed = await get(workspaceUrl('ws-prod', '?filter%5Buser%5D=zed'), 'alice-token')
    const ghost = await get(workspaceUrl('ws-prod', '?filter%5Buser%5D=ghost'), 'alice-token')
    t.equal(zed.statusCode, 422, 'a user of another organization')
    t.same(ghost.json(), JSON.parse(zed.body.replace('\\"zed\\"', '\\"ghost\\"')), 'no such user: the same answer')
    t.match(ghost.json(), { errors: [{ status: '422', title: 'invalid parameter', source: { parameter: 'filter[user]' } }] })
  })

  t.test('a team: the workspaces it reaches, by name, paginated as §4', async (t) => {
    const all = (await get(teamUrl('team-devs'), 'bob-token')).json()
    t.same(all.data.map((x: { id: string }) => x.id), ['team-devs:ws-prod', 'team-devs:ws-staging'])
    t.same(all.data[1].attributes, { access: 'write', ...IMPLICIT_PERMISSIONS.write, grants: [{ kind: 'team-access', access: 'write', team: 'team-devs', 'team-workspace': 'tws-devs-staging' }] })
    t.same(all.meta.pagination, { 'current-page': 1, 'page-size': 20, 'prev-page': null, 'next-page': null, 'total-pages': 1, 'total-count': 2 }, 'always paginated: page 1 of 20 by default')
    const second = (await get(teamUrl('team-devs', '?page%5Bsize%5D=1&page%5Bnumber%5D=2'), 'bob-token')).json()
    t.same(second.data.map((x: { id: string }) => x.id), ['team-devs:ws-staging'])
    t.same(second.meta.pagination, { 'current-page': 2, 'page-size': 1, 'prev-page': 1, 'next-page': null, 'total-pages': 2, 'total-count': 2 })
    t.equal(second.links.first, 'http://localhost:80/api/v2/teams/team-devs/effective-access?page%5Bnumber%5D=1&page%5Bsize%5D=1')
    t.equal(second.links.next, null)
    const past = (await get(teamUrl('team-devs', '?page%5Bsize%5D=1&page%5Bnumber%5D=9'), 'bob-token')).json()
    t.same(past.data, [], 'a page past the end is empty')
    const readers = (await get(teamUrl('team-readers'), 'erin-token')).json()
    t.same(readers.data.map((x: { id: string }) => x.id), ['team-readers:ws-prod', 'team-readers:ws-staging'], 'read-workspaces reaches every workspace')
    const empty = (await get(teamUrl('team-empty'), 'nobody-token')).json()
    t.same([empty.data, empty.meta.pagination['total-count']], [[], 0], 'a team that reaches nothing')
  })

  t.test('the host asks the same: teamAccess.explain', async (t) => {
    const user = (id: string): Caller => ({ kind: 'user', userId: id })
    const onProd = await app.teamAccess.explain({ caller: user('user-dave'), workspaceId: 'ws-prod' })
    t.same(onProd?.map((x) => [x.teamId, x.access]), [['team-devs', 'plan'], ['team-leads', 'admin'], ['team-ops', 'admin'], ['team-owners', 'admin'], ['team-readers', 'read'], ['team-red', 'custom']])
    t.same(onProd?.find((x) => x.teamId === 'team-leads')?.grants, [{ kind: 'team-access', access: 'admin', permissions: IMPLICIT_PERMISSIONS.admin, teamId: 'team-leads', teamWorkspaceId: 'tws-leads-prod' }])
    const bob = await app.teamAccess.explain({ caller: user('user-frank'), workspaceId: 'ws-prod', username: 'bob' })
    t.match(bob, { userId: 'user-bob', access: 'plan', teamIds: ['team-devs', 'team-readers', 'team-red'] })
    const devs = await app.teamAccess.explain({ caller: { kind: 'team', teamId: 'team-devs' }, teamId: 'team-devs' })
    t.same([devs?.total, devs?.rows.map((x) => x.workspace.id)], [2, ['ws-prod', 'ws-staging']], 'no page: every workspace')
    const paged = await app.teamAccess.explain({ caller: { kind: 'organization', organizationId: 'org-acme' }, teamId: 'team-devs', page: { number: 2, size: 1 } })
    t.same([paged?.total, paged?.rows.map((x) => x.workspace.id)], [2, ['ws-staging']])
    t.equal(await app.teamAccess.explain({ caller: user('user-bob'), workspaceId: 'ws-prod' }), undefined, 'not a workspace admin')
    t.equal(await app.teamAccess.explain({ caller: user('user-carol'), teamId: 'team-red' }), undefined, 'not a member')
    t.equal(await app.teamAccess.explain({ caller: user('user-alice'), workspaceId: 'ws-missing' }), undefined)
  })

  t.test('the answers follow the grants at once', async (t) => {
    const headers = { ...bearer('alice-token'), 'content-type': 'application/vnd.api+json' }
    const added = await app.inject({
      method: 'POST',
      url: '/api/v2/team-workspaces',
      headers,
      payload: JSON.stringify({ data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { team: { data: { type: 'teams', id: 'team-empty' } }, workspace: { data: { type: 'workspaces', id: 'ws-staging' } } } } })
    })
    t.equal(added.statusCode, 200)
    const id = added.json().data.id as string
    t.same((await get(teamUrl('team-empty'), 'nobody-token')).json().data.map((x: { attributes: { grants: unknown } }) => x.attributes.grants),
      [[{ kind: 'team-access', access: 'read', team: 'team-empty', 'team-workspace': id }]])
    t.equal((await app.inject({ method: 'DELETE', url: `/api/v2/team-workspaces/${id}`, headers })).statusCode, 204)
    t.same((await get(teamUrl('team-empty'), 'nobody-token')).json().data, [])
  })
})
