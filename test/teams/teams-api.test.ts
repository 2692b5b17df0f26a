import t from 'tap'
import { build, ENGINE } from '../helper.js'
import { DEMO_SEED } from '../../src/app.js'
import { applySeedFile } from '../../src/directory/seed-file.js'
import { buildDirectory, CALLERS, flags, teamsClient } from './directory.js'

/**
 * DESIGN §9.3: create, update, delete a team — shapes, statuses, the merge of organization-access,
 * the 422s, the cascade of a delete and the audit events, all in the statement (or transaction)
 * of the change.
 */
t.test(`the Teams API (DESIGN §9.3) on ${ENGINE}`, async (t) => {
  const app = await buildDirectory(t)
  const api = teamsClient(t, app)
  const org = CALLERS.organization
  const events = async (resourceId: string) => await app.db.selectFrom('audit_events')
    .select(['action', 'resource_type', 'resource_id', 'meta', 'team_id', 'workspace_id', 'team_name', 'accessor_kind', 'accessor_description'])
    .where((eb) => eb.or([eb('resource_id', '=', resourceId), eb('team_id', '=', resourceId)]))
    .orderBy('occurred_at').orderBy('id').execute()

  t.test('POST /organizations/:org/teams: 201, the team; defaults; every flag stored and answered', async (t) => {
    const res = await api.create('acme', { name: 'platform' }, org)
    t.equal(res.statusCode, 201)
    const team = res.json().data
    t.match(team.id, /^team-/)
    t.same(team.attributes, {
      name: 'platform',
      visibility: 'secret',
      'users-count': 0,
      'organization-access': flags(false),
      'sso-team-id': null,
      'allow-member-token-management': true,
      permissions: { 'can-update-membership': true, 'can-destroy': true }
    }, 'visibility secret by default, every flag false')
    t.same(team.relationships, { organization: { data: { id: 'acme', type: 'organizations' } }, users: { data: [] }, 'organization-memberships': { data: [] } })
    t.equal(team.links.self, `/api/v2/teams/${team.id}`)
    const row = await app.db.selectFrom('teams').select(['managed_by', 'organization_id']).where('id', '=', team.id).executeTakeFirstOrThrow()
    t.same(row, { managed_by: 'api', organization_id: 'org-acme' }, 'managed by the API')
    t.same((await events(team.id)).map((e) => [e.action, e.resource_type, e.meta, e.accessor_kind, e.accessor_description]),
      [['create', 'team', { team: 'platform' }, 'organization', 'acme']], 'one create event')

    const all = await api.create('acme', { name: 'everything', visibility: 'organization', 'organization-access': flags(true) }, org)
    t.equal(all.statusCode, 201)
    t.same(all.json().data.attributes['organization-access'], flags(true), 'all 16 flags echoed')
    t.same((await api.show(all.json().data.id, org)).json().data.attributes['organization-access'], flags(true), 'and read back')
    t.equal(all.json().data.attributes.visibility, 'organization')

    const lenient = await api.create('acme', { name: 'sso', 'sso-team-id': 'abc', 'allow-member-token-management': true, 'is-unified': false, 'organization-access': { 'delegate-policy-overrides': true, 'read-workspaces': true } }, org)
    t.equal(lenient.statusCode, 201, 'attributes go-tfe may send and this service does not use are accepted')
    t.same(lenient.json().data.attributes['organization-access'], flags(false, { 'read-workspaces': true, 'delegate-policy-overrides': true }))
    t.match(lenient.json().data.attributes, { 'sso-team-id': 'abc', 'allow-member-token-management': true }, 'kept and answered: the provider reads them back')
    t.notOk('is-unified' in lenient.json().data.attributes, 'an attribute not kept is not answered')

    const untyped = await app.inject({ method: 'POST', url: '/api/v2/organizations/acme/teams', headers: { authorization: `Bearer ${org}`, 'content-type': 'application/json' }, payload: { data: { attributes: { name: 'untyped' } } } })
    t.equal(untyped.statusCode, 201, 'data.type may be absent')
  })

  t.test('POST: the 4xx', async (t) => {
    const taken = await api.create('acme', { name: 'red' }, org)
    t.equal(taken.statusCode, 422)
    t.same(taken.json(), { errors: [{ status: '422', title: 'invalid attribute', detail: 'Name has already been taken', source: { pointer: '/data/attributes/name' } }] })
    const before = (await app.db.selectFrom('audit_events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n
    const racers = await Promise.all(Array.from({ length: 8 }, async () => await api.create('acme', { name: 'raced' }, org)))
    t.same(racers.map((r) => r.statusCode).sort(), [201, 422, 422, 422, 422, 422, 422, 422], 'of 8 concurrent creates of one name, one wins')
    const after = (await app.db.selectFrom('audit_events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n
    t.equal(Number(after) - Number(before), 1, 'and one event')
    t.equal((await api.create('acme', { visibility: 'secret' }, org)).statusCode, 422, 'name is required')
    t.equal((await api.create('acme', { name: '' }, org)).statusCode, 422, 'name is not empty')
    t.equal((await api.create('acme', { name: 'x', visibility: 'public' }, org)).statusCode, 422, 'visibility is secret or organization')
    t.equal((await api.create('acme', { name: 'x', 'organization-access': { 'manage-teams': 'yes' } }, org)).statusCode, 422, 'flags are booleans')
    const wrongType = await app.inject({ method: 'POST', url: '/api/v2/organizations/acme/teams', headers: { authorization: `Bearer ${org}`, 'content-type': 'application/vnd.api+json' }, payload: { data: { type: 'workspaces', attributes: { name: 'x' } } } })
    t.equal(wrongType.statusCode, 422, 'a data.type other than teams')
    t.equal((await api.create('nope', { name: 'x' }, org)).statusCode, 404, 'no such organization')
    t.equal((await api.create('globex', { name: 'x' }, org)).statusCode, 404, 'another organization')
  })

  t.test('PATCH /teams/:id: 200; each attribute optional; organization-access merges', async (t) => {
    const id = (await api.create('acme', { name: 'merge', 'organization-access': { 'manage-policies': true, 'read-workspaces': true } }, org)).json().data.id
    const res = await api.update(id, { 'organization-access': { 'manage-modules': true, 'read-workspaces': false } }, org)
    t.equal(res.statusCode, 200)
    t.same(res.json().data.attributes['organization-access'], flags(false, { 'manage-policies': true, 'manage-modules': true }), 'absent flags keep their value')
    const renamed = await api.update(id, { name: 'merged', visibility: 'organization' }, org)
    t.same([renamed.json().data.attributes.name, renamed.json().data.attributes.visibility], ['merged', 'organization'])
    t.same(renamed.json().data.attributes['organization-access'], flags(false, { 'manage-policies': true, 'manage-modules': true }), 'no organization-access: flags as they were')
    t.same((await events(id)).map((e) => [e.action, e.meta]),
      [['create', { team: 'merge' }], ['update', { team: 'merge' }], ['update', { team: 'merged' }]], 'an update event each, the name after')
    const noop = await api.update(id, { name: 'merged', 'organization-access': { 'manage-policies': true } }, org)
    t.equal(noop.statusCode, 200, 'a PATCH that changes nothing answers the team')
    t.equal((await events(id)).length, 3, 'and records nothing')
    const withId = await app.inject({ method: 'PATCH', url: `/api/v2/teams/${id}`, headers: { authorization: `Bearer ${org}`, 'content-type': 'application/vnd.api+json' }, payload: { data: { type: 'teams', id: 'team-other', attributes: {} } } })
    t.equal(withId.statusCode, 422, 'data.id, when given, is the id in the path')
    const bare = await app.inject({ method: 'PATCH', url: `/api/v2/teams/${id}`, headers: { authorization: `Bearer ${org}`, 'content-type': 'application/vnd.api+json' }, payload: '{"data":{"type":"teams"}}\n' })
    t.equal(bare.statusCode, 200, 'no attributes at all (go-tfe leaves an empty object out): the team as it is')
    t.equal(bare.json().data.attributes.name, 'merged')
    t.equal((await api.update(id, { name: 'red' }, org)).statusCode, 422, 'a rename to a name taken')
    t.equal((await api.update('team-missing', { name: 'x' }, org)).statusCode, 404)
  })

  t.test('422: the seed file manages its teams; the owners team keeps its name, no flags, and is never deleted', async (t) => {
    for (const res of [await api.update('team-red', { visibility: 'organization' }, org), await api.destroy('team-red', org)]) {
      t.equal(res.statusCode, 422)
      t.same(res.json().errors[0].detail, 'managed by the seed file')
    }
    t.equal((await api.update('team-owners', { name: 'bosses' }, CALLERS.owner)).statusCode, 422, 'the owners team is not renamed')
    t.equal((await api.update('team-owners', { 'organization-access': { 'manage-workspaces': true } }, CALLERS.owner)).statusCode, 422, 'nor given organization access')
    t.equal((await api.destroy('team-owners', CALLERS.ownersTeam)).statusCode, 422, 'nor deleted')
    t.equal((await api.update('team-owners', { name: 'owners', visibility: 'organization' }, CALLERS.owner)).statusCode, 200, 'its visibility may change')
    t.equal((await api.show('team-owners', org)).json().data.attributes.name, 'owners')
  })

  t.test('DELETE /teams/:id: 204; memberships, tokens and team access go, each team-access row with its remove_team event, and one destroy event', async (t) => {
    const id = (await api.create('acme', { name: 'doomed', visibility: 'organization' }, org)).json().data.id
    t.equal((await api.addMembers(id, ['writer', 'spare'], org)).statusCode, 204)
    for (const ws of ['ws-prod', 'ws-dev']) {
      const added = await app.inject({ method: 'POST', url: '/api/v2/team-workspaces', headers: { authorization: `Bearer ${org}`, 'content-type': 'application/vnd.api+json' }, payload: { data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { team: { data: { type: 'teams', id } }, workspace: { data: { type: 'workspaces', id: ws } } } } } })
      t.equal(added.statusCode, 200)
    }
    await app.db.insertInto('tokens').values({ id: 'at-doomed', kind: 'team', team_id: id, digest: 'a'.repeat(64), managed_by: 'api' }).execute()
    const counts = async () => await app.db.selectFrom('workspace_access_counts').selectAll().where('workspace_id', 'in', ['ws-dev', 'ws-prod']).orderBy('workspace_id').execute()
    const res = await api.destroy(id, org)
    t.equal(res.statusCode, 204)
    t.equal(res.body, '')
    t.equal((await api.show(id, org)).statusCode, 404, 'gone')
    t.equal((await api.destroy(id, org)).statusCode, 404, 'a second delete: 404')
    for (const table of ['team_memberships', 'tokens', 'team_workspaces'] as const) {
      t.equal((await app.db.selectFrom(table).select('team_id').where('team_id', '=', id).execute()).length, 0, `its ${table} went with it`)
    }
    const trail = await events(id)
    t.same(trail.filter((e) => e.action === 'remove_team').map((e) => [e.resource_type, e.workspace_id, e.team_name, e.accessor_description]).sort(),
      [['workspace', 'ws-dev', 'doomed', 'acme'], ['workspace', 'ws-prod', 'doomed', 'acme']], 'one remove_team event per team-access row')
    t.same(trail.filter((e) => e.action === 'destroy').map((e) => [e.resource_type, e.resource_id, e.meta]), [['team', id, { team: 'doomed' }]], 'one destroy event')
    t.same((await counts()).map((c) => [c.workspace_id, c.total, c.organization_visible]),
      [['ws-dev', 1, 0], ['ws-prod', 3, 1]], "the workspaces' counts lose its rows (an organization-visible team's too)")
    const list = await app.inject({ url: '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-prod&page%5Bsize%5D=20', headers: { authorization: `Bearer ${CALLERS.writer}` } })
    t.equal(list.json().meta.pagination['total-count'], 1, 'a member’s page counts what it sees (its own organization-visible row)')
  })

  t.test('a delete racing an add of team access: every row added is removed with its event', async (t) => {
    for (let i = 0; i < 10; i++) {
      const id = (await api.create('acme', { name: `racer-${i}` }, org)).json().data.id as string
      const add = app.inject({ method: 'POST', url: '/api/v2/team-workspaces', headers: { authorization: `Bearer ${org}`, 'content-type': 'application/vnd.api+json' }, payload: { data: { type: 'team-workspaces', attributes: { access: 'write' }, relationships: { team: { data: { type: 'teams', id } }, workspace: { data: { type: 'workspaces', id: 'ws-dev' } } } } } })
      const [added, deleted] = await Promise.all([add, api.destroy(id, org)])
      t.equal(deleted.statusCode, 204)
      t.ok([200, 404].includes(added.statusCode), `the add: ${added.statusCode}`)
      const trail = await events(id)
      const count = (action: string) => trail.filter((e) => e.action === action).length
      t.equal(count('add_team'), added.statusCode === 200 ? 1 : 0)
      t.equal(count('remove_team'), count('add_team'), 'a row added is a row removed, each with its event')
      t.equal((await app.db.selectFrom('team_workspaces').select('id').where('team_id', '=', id).execute()).length, 0)
    }
    const counts = await app.db.selectFrom('workspace_access_counts').select(['total', 'organization_visible']).where('workspace_id', '=', 'ws-dev').executeTakeFirstOrThrow()
    t.same(counts, { total: 1, organization_visible: 0 }, 'the workspace counts only what is left')
  })

  t.test('the audit trail serves the directory events to the organization token', async (t) => {
    const res = await app.inject({ url: '/api/v2/organization/audit-trail', headers: { authorization: `Bearer ${org}` } })
    t.equal(res.statusCode, 200)
    const teamEvents = res.json().data.filter((e: any) => e.resource.type === 'team')
    t.ok(teamEvents.some((e: any) => e.resource.action === 'create' && e.resource.meta.team === 'platform'))
    t.ok(teamEvents.some((e: any) => e.resource.action === 'destroy' && e.resource.meta.team === 'doomed'))
  })
})

t.test(`a demo team answers that the demo seed manages it, not a seed file nobody wrote (${ENGINE})`, async (t) => {
  const app = await build(t)
  await applySeedFile(app.db, DEMO_SEED)
  const api = teamsClient(t, app)
  const owner = 'acme-owners-demo-token'
  for (const res of [await api.update('team-DemoTeamops12345', { visibility: 'secret' }, owner), await api.destroy('team-DemoTeamops12345', owner)]) {
    t.equal(res.statusCode, 422)
    t.same(res.json().errors[0].detail, 'managed by the demo seed (seeds/demo.json)')
  }
  const members = await api.removeMembers('team-DemoTeamdevs1234', ['bob'], owner)
  t.equal(members.statusCode, 422)
  t.same(members.json().errors[0].detail, 'managed by the demo seed (seeds/demo.json): the membership of bob')
})
