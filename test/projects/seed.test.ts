import t from 'tap'
import { bearer, build, ENGINE, snapshot } from '../helper.js'
import { applySeed } from '../../src/directory/seed.js'

/**
 * Projects in a seed (DESIGN §11.5): declared projects, each workspace's project, project-access
 * entries applied once; changed (a workspace moved, a project dropped) and dry-run, with their
 * events; a dropped project that would still hold a workspace the seed does not place fails whole.
 */
const document = (overrides: { projects?: unknown[], workspaces?: unknown[], projectAccess?: unknown[] } = {}): any => ({
  users: [{ id: 'user-ann', username: 'ann', tokens: ['ann-token-123'] }, { id: 'user-own', username: 'own', tokens: ['own-token-123'] }],
  organizations: [{
    id: 'org-seeded',
    name: 'seeded',
    teams: [{ id: 'team-owners-s', name: 'owners', owners: true, members: ['own'] }, { id: 'team-devs', name: 'devs', visibility: 'organization', members: ['ann'] }],
    projects: overrides.projects ?? [{ id: 'prj-PlatformSeeded01', name: 'platform', description: 'the platform' }, { name: 'data' }],
    workspaces: overrides.workspaces ?? [{ id: 'ws-SeededProduction1', name: 'prod', project: 'platform' }, { id: 'ws-SeededStaging0001', name: 'staging', project: 'Platform' }, { id: 'ws-SeededScratch0001', name: 'scratch' }],
    'project-access': overrides.projectAccess ?? [{ team: 'devs', project: 'platform', access: 'write' }]
  }]
})

t.test(`a seed with projects: applied, changed, dry-run (${ENGINE})`, async (t) => {
  const app = await build(t)
  const get = async (url: string, token = 'own-token-123') => (await app.inject({ url: `/api/v2${url}`, headers: bearer(token) })).json()

  const first = await applySeed(app.db, document())
  t.same(first.created.projects, ['seeded/platform', 'seeded/data'])
  t.same(first.created.projectAccess, ['devs on seeded/platform'])
  // on an empty database every workspace is a creation, whatever project it is placed in: none is also "moved"
  t.same([first.created.workspaces, first.changed.workspaces], [['seeded/prod', 'seeded/staging', 'seeded/scratch'], []])
  const projects = await get('/organizations/seeded/projects')
  t.same(projects.data.map((p: any) => [p.attributes.name, p.attributes['workspace-count'], p.attributes['team-count']]), [['data', 0, 0], ['Default Project', 1, 0], ['platform', 2, 1]])
  t.equal((await get('/workspaces/ws-SeededProduction1', 'ann-token-123')).data.id, 'ws-SeededProduction1', 'devs reach prod through platform')
  t.equal((await app.inject({ url: '/api/v2/workspaces/ws-SeededScratch0001', headers: bearer('ann-token-123') })).statusCode, 404, 'and not scratch, in the default project')
  const events = await app.db.selectFrom('audit_events').select(['resource_type', 'action', 'accessor_kind', 'accessor_description']).where('resource_type', 'in', ['project', 'team-project']).orderBy('occurred_at').execute()
  t.same(events.map((e) => `${e.resource_type} ${e.action} ${e.accessor_kind}/${e.accessor_description}`), ['project create system/seed', 'project create system/seed', 'team-project create system/seed'])

  const again = await applySeed(app.db, document())
  t.same([again.created.projects, again.changed.projects, again.changed.workspaces, again.created.projectAccess], [[], [], [], []], 'a second apply changes nothing')
  t.equal(again.teamAccessAlreadyApplied, 1, 'the project grant, applied before')

  // staging moves to data, platform is dropped with prod moved out first
  const changed = document({
    projects: [{ name: 'data' }],
    workspaces: [{ id: 'ws-SeededProduction1', name: 'prod', project: 'data' }, { id: 'ws-SeededStaging0001', name: 'staging', project: 'data' }, { id: 'ws-SeededScratch0001', name: 'scratch' }],
    projectAccess: [{ team: 'devs', project: 'data', access: 'custom', 'workspace-access': { runs: 'plan' } }]
  })
  const before = await snapshot(app.db)
  const plan = await applySeed(app.db, changed, { dryRun: true })
  t.same(await snapshot(app.db), before, 'a dry run changes nothing')
  t.same(plan.removed.projects, ['seeded/platform'])
  t.same(plan.removed.projectAccess, ['devs on seeded/platform'])
  const applied = await applySeed(app.db, changed)
  t.same([applied.removed, applied.created.projectAccess, applied.changed.workspaces.sort()], [plan.removed, plan.created.projectAccess, plan.changed.workspaces.sort()], 'the plan was the apply')
  t.same(applied.changed.workspaces.sort(), ['seeded/prod (moved to project data)', 'seeded/staging (moved to project data)'], 'a workspace the seed made before and moves now is a change')
  t.same((await get('/organizations/seeded/projects')).data.map((p: any) => [p.attributes.name, p.attributes['workspace-count']]), [['data', 2], ['Default Project', 1]])
  const prod = await app.teamAccess.effectiveAccess({ caller: { kind: 'user', userId: 'user-ann' }, workspaceId: 'ws-SeededProduction1' })
  t.match(prod, { access: 'custom', permissions: { runs: 'plan', variables: 'none' } }, 'the custom grant on data, from the next request')
  const destroyed = await app.db.selectFrom('audit_events').select(['resource_type', 'action']).where('action', '=', 'destroy').where('resource_type', 'in', ['project', 'team-project']).execute()
  t.same(destroyed.map((e) => `${e.resource_type} ${e.action}`).sort(), ['project destroy', 'team-project destroy'])

  t.test('a dropped project still holding a workspace the seed does not place fails whole, naming it', async (t) => {
    await app.db.insertInto('workspaces').values({ id: 'ws-HostMadeInData001', organization_id: 'org-seeded', name: 'host-made', project_id: (await app.db.selectFrom('projects').select('id').where('name', '=', 'data').executeTakeFirstOrThrow()).id }).execute()
    const dropped = document({ projects: [], workspaces: [{ id: 'ws-SeededProduction1', name: 'prod' }, { id: 'ws-SeededStaging0001', name: 'staging' }, { id: 'ws-SeededScratch0001', name: 'scratch' }], projectAccess: [] })
    const was = await snapshot(app.db)
    await t.rejects(applySeed(app.db, dropped), { message: /project "data" is no longer declared but still holds "seeded\/host-made"/ })
    t.same(await snapshot(app.db), was, 'nothing changed')
  })

  t.test('the rules: an unknown project, a key under a fixed level, a flag without its prerequisite', async (t) => {
    await t.rejects(applySeed(app.db, document({ workspaces: [{ name: 'x', project: 'nowhere' }] })), { message: /no project named "nowhere"/ })
    await t.rejects(applySeed(app.db, document({ projectAccess: [{ team: 'devs', project: 'data', access: 'read', 'workspace-access': { runs: 'apply' } }] })), { message: /read-only when access level is 'read'/ })
    const flags = document()
    ;(flags.organizations[0]!.teams[1] as any)['organization-access'] = { 'read-projects': true }
    await t.rejects(applySeed(app.db, flags), { message: /read-projects requires read-workspaces/ })
  })
})
