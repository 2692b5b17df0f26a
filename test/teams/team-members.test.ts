import t from 'tap'
import { ENGINE } from '../helper.js'
import { buildDirectory, CALLERS, teamsClient } from './directory.js'

/**
 * DESIGN §9.4: members added and removed by username, listed by `include=users`; a membership
 * removed stops granting on the very next request; one event per membership changed.
 */
t.test(`team membership (DESIGN §9.4) on ${ENGINE}`, async (t) => {
  const app = await buildDirectory(t)
  const api = teamsClient(t, app)
  const org = CALLERS.organization
  const memberEvents = async (teamId: string) => (await app.db.selectFrom('audit_events').select(['action', 'meta', 'resource_type', 'resource_id'])
    .where('resource_id', '=', teamId).where('action', 'in', ['add_member', 'remove_member']).orderBy('occurred_at').orderBy('id').execute())
    .map((e) => [e.action, e.resource_type, e.resource_id, e.meta])
  const id = (await api.create('acme', { name: 'deployers', visibility: 'organization' }, org)).json().data.id as string

  t.test('add by username; the team answers its members; include=users answers them', async (t) => {
    const res = await api.addMembers(id, ['writer', 'spare'], org)
    t.equal(res.statusCode, 204)
    t.equal(res.body, '')
    const team = (await api.show(id, org)).json()
    t.equal(team.data.attributes['users-count'], 2)
    t.same(team.data.relationships.users.data, [{ id: 'user-spare', type: 'users' }, { id: 'user-writer', type: 'users' }], 'by username')
    t.notOk('included' in team, 'nothing included unless asked')
    const withUsers = (await api.show(id, org, '?include=users')).json()
    t.same(withUsers.included, [
      { id: 'user-spare', type: 'users', attributes: { username: 'spare' } },
      { id: 'user-writer', type: 'users', attributes: { username: 'writer' } }
    ])
    const list = (await api.list('acme', org, '?include=users&filter%5Bnames%5D=deployers,red')).json()
    t.same(list.included.map((u: any) => u.attributes.username), ['spare', 'writer', 'red-member'], 'a list includes the members of its teams, once each')
    t.equal((await api.show(id, org, '?include=workspaces')).statusCode, 400, 'any other include: 400')
    const byUser = (events: unknown[][]) => events.slice().sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
    t.same(byUser(await memberEvents(id)), [
      ['add_member', 'team', id, { team: 'deployers', user: 'spare' }],
      ['add_member', 'team', id, { team: 'deployers', user: 'writer' }]
    ], 'one add_member event per member added')
    const rows = await app.db.selectFrom('team_memberships').select(['user_id', 'managed_by']).where('team_id', '=', id).orderBy('user_id').execute()
    t.same(rows, [{ user_id: 'user-spare', managed_by: 'api' }, { user_id: 'user-writer', managed_by: 'api' }], 'API-managed memberships')
  })

  t.test('adding a present member, removing an absent one: 204, no event', async (t) => {
    const before = (await memberEvents(id)).length
    t.equal((await api.addMembers(id, ['writer', 'writer'], org)).statusCode, 204)
    t.equal((await api.removeMembers(id, ['lonely'], org)).statusCode, 204)
    t.equal((await memberEvents(id)).length, before)
  })

  t.test('unknown usernames: 422 naming them; nothing changes', async (t) => {
    const res = await api.addMembers(id, ['lonely', 'ghost', 'phantom'], org)
    t.equal(res.statusCode, 422)
    t.same(res.json().errors[0].detail, 'User not found: ghost, phantom')
    t.equal((await app.db.selectFrom('team_memberships').select('user_id').where('team_id', '=', id).where('user_id', '=', 'user-lonely').execute()).length, 0, 'the known user was not added either')
    t.equal((await api.removeMembers(id, ['writer', 'ghost'], org)).statusCode, 422)
    t.equal((await api.show(id, org)).json().data.attributes['users-count'], 2)
    t.equal((await api.addMembers('team-missing', ['ghost'], org)).statusCode, 404, 'a missing team: 404 before any username is looked at')
  })

  t.test('a member removed loses the team’s grants on the very next request', async (t) => {
    const added = await app.inject({ method: 'POST', url: '/api/v2/team-workspaces', headers: { authorization: `Bearer ${org}`, 'content-type': 'application/vnd.api+json' }, payload: { data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { team: { data: { type: 'teams', id } }, workspace: { data: { type: 'workspaces', id: 'ws-dev' } } } } } })
    t.equal(added.statusCode, 200)
    t.equal((await api.addMembers(id, ['lonely'], org)).statusCode, 204)
    const read = async () => await app.inject({ url: '/api/v2/workspaces/ws-dev', headers: { authorization: `Bearer ${CALLERS.noTeam}` } })
    t.equal((await read()).statusCode, 200, 'through the team, the user reads the workspace')
    t.equal((await read()).statusCode, 200, 'and again: its token is remembered')
    t.equal((await api.removeMembers(id, ['lonely'], org)).statusCode, 204)
    t.equal((await read()).statusCode, 404, 'the same token, the next request: not found')
    t.same((await memberEvents(id)).filter(([action]) => action === 'remove_member'), [['remove_member', 'team', id, { team: 'deployers', user: 'lonely' }]], 'one remove_member event')
  })

  t.test('seed-managed memberships are the seed file’s to remove; a seed team takes API members', async (t) => {
    const res = await api.removeMembers('team-red', ['red-member'], org)
    t.equal(res.statusCode, 422)
    t.match(res.json().errors[0].detail, /^managed by the seed file/)
    t.equal((await api.addMembers('team-red', ['spare'], org)).statusCode, 204, 'an API member of a seed team')
    const row = await app.db.selectFrom('team_memberships').select('managed_by').where('team_id', '=', 'team-red').where('user_id', '=', 'user-spare').executeTakeFirstOrThrow()
    t.equal(row.managed_by, 'api')
    t.equal((await api.removeMembers('team-red', ['spare'], org)).statusCode, 204, 'and removed again')
  })

  t.test('a member added while its team is deleted: 204 or 404, never an error', async (t) => {
    for (let i = 0; i < 10; i++) {
      const doomed = (await api.create('acme', { name: `doomed-${i}` }, org)).json().data.id as string
      const [added, deleted] = await Promise.all([api.addMembers(doomed, ['spare'], org), api.destroy(doomed, org)])
      t.equal(deleted.statusCode, 204)
      t.ok([204, 404].includes(added.statusCode), `the add: ${added.statusCode}`)
      t.equal((await app.db.selectFrom('team_memberships').select('user_id').where('team_id', '=', doomed).execute()).length, 0)
    }
  })

  t.test('the owners team keeps a member', async (t) => {
    const last = await api.removeMembers('team-owners', ['owner'], CALLERS.ownersTeam)
    t.equal(last.statusCode, 422, 'its last member cannot be removed')
    t.equal((await api.addMembers('team-owners', ['spare'], CALLERS.owner)).statusCode, 204)
    const racers = await Promise.all([api.removeMembers('team-owners', ['owner'], CALLERS.ownersTeam), api.removeMembers('team-owners', ['spare'], CALLERS.ownersTeam)])
    t.same(racers.map((r) => r.statusCode).sort(), [204, 422], 'of two concurrent removals of its two members, one is refused')
    t.equal((await api.show('team-owners', org)).json().data.attributes['users-count'], 1)
    const both = await api.removeMembers('team-owners', ['owner', 'spare'], CALLERS.ownersTeam)
    t.equal(both.statusCode, 422, 'nor its every member at once')
  })
})
