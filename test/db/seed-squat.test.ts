import t, { type Test } from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { applySeed } from '../../src/directory/seed.js'
import { bearer, build, ENGINE, freshLocation, testConfig } from '../helper.js'

/**
 * A name an API caller took never decides anything a seed does (DESIGN §6, §9.1, §11.5). A project
 * admin who renames their own project to the name the next seed declares without an id hands the
 * seed that project — whole: its team-project rows go before the seed's workspace lands in it, and
 * the apply warns. A project renamed, or a team created, into a name the next seed declares with
 * an id is renamed out of the way, with its event and a warning: the seed applies, the service
 * starts. Workspaces too, now that the API makes them (DESIGN §14.1): one declared by name is
 * adopted whole (the team-access rows the document does not declare go), one declared with an id
 * takes its name back.
 */
const json = { 'content-type': 'application/vnd.api+json' }

const base = () => ({
  users: [
    { id: 'user-q-olga', username: 'olga', tokens: ['q-olga-token'] },
    { id: 'user-q-cora', username: 'cora', tokens: ['q-cora-token'] },
    { id: 'user-q-mo', username: 'mo', tokens: ['q-mo-token'] }
  ],
  organizations: [{
    id: 'org-q',
    name: 'acme',
    tokens: ['q-org-token'],
    teams: [
      { id: 'team-q-owners', name: 'owners', owners: true, members: ['olga'] },
      { id: 'team-q-sandbox', name: 'sandboxers', members: ['cora'] },
      { id: 'team-q-people', name: 'people', 'organization-access': { 'manage-teams': true }, members: ['mo'] },
      { id: 'team-q-devs', name: 'devs', members: [] as string[] }
    ],
    workspaces: [{ id: 'ws-q-prod', name: 'prod' }] as Array<{ id?: string, name: string, project?: string }>,
    projects: [] as Array<{ id?: string, name: string }>,
    'project-access': [] as Array<{ team: string, project: string, access: 'read' | 'write' | 'admin' }>
  }]
})

/** An owner makes the project "sandbox" and gives the sandboxers admin on it; its id. */
async function sandbox (t: Test, app: FastifyInstance): Promise<string> {
  const made = await app.inject({ method: 'POST', url: '/api/v2/organizations/acme/projects', headers: { ...json, ...bearer('q-org-token') }, payload: JSON.stringify({ data: { type: 'projects', attributes: { name: 'sandbox' } } }) })
  t.equal(made.statusCode, 201)
  const project = made.json().data.id as string
  for (const team of ['team-q-sandbox', 'team-q-devs']) {
    const row = await app.inject({
      method: 'POST',
      url: '/api/v2/team-projects',
      headers: { ...json, ...bearer('q-org-token') },
      payload: JSON.stringify({ data: { type: 'team-projects', attributes: { access: team === 'team-q-sandbox' ? 'admin' : 'read' }, relationships: { team: { data: { type: 'teams', id: team } }, project: { data: { type: 'projects', id: project } } } } })
    })
    t.equal(row.statusCode, 201)
  }
  return project
}

/** cora, the sandbox's admin, renames it. */
async function rename (t: Test, app: FastifyInstance, project: string, name: string): Promise<void> {
  const res = await app.inject({ method: 'PATCH', url: `/api/v2/projects/${project}`, headers: { ...json, ...bearer('q-cora-token') }, payload: JSON.stringify({ data: { type: 'projects', attributes: { name } } }) })
  t.equal(res.statusCode, 200, `cora renames her project "${name}"`)
}

async function trail (app: FastifyInstance): Promise<Array<[string, string, unknown, string]>> {
  const res = await app.inject({ url: '/api/v2/organization/audit-trail', headers: bearer('q-org-token') })
  return (res.json().data as any[]).filter((e) => e.auth.type === 'System').map((e) => [e.resource.type, e.resource.action, e.resource.meta, e.auth.description])
}

t.test(`a project renamed into the name a seed declares without an id is taken over whole (${ENGINE})`, async (t) => {
  const app = await build(t, { seed: base() })
  const project = await sandbox(t, app)
  await rename(t, app, project, 'payments')
  t.equal((await app.inject({ url: '/api/v2/workspaces/ws-q-prod', headers: bearer('q-cora-token') })).statusCode, 404, 'cora holds nothing on prod yet')

  const next = base()
  next.organizations[0]!.projects.push({ name: 'payments' })
  next.organizations[0]!.workspaces.push({ id: 'ws-q-payments', name: 'payments-prod', project: 'payments' })
  next.organizations[0]!['project-access'].push({ team: 'devs', project: 'payments', access: 'write' })
  const summary = await applySeed(app.db, next)

  t.equal((await app.db.selectFrom('projects').select('managed_by').where('id', '=', project).executeTakeFirstOrThrow()).managed_by, 'seed', 'the seed adopted the project')
  t.same(await app.db.selectFrom('team_projects').select(['team_id', 'access']).where('project_id', '=', project).execute(), [{ team_id: 'team-q-devs', access: 'write' }],
    'the row the API gave cora’s team is gone; the declared team’s row is the seed’s grant')
  t.same(summary.removed.projectAccess, ['sandboxers on acme/payments'])
  t.same(summary.warnings.filter((w) => w.startsWith('project ')), ['project acme/payments: made through the API, now the seed\'s — 1 team-project row it does not declare removed (sandboxers)'])
  t.same((await trail(app)).filter(([type, action]) => type === 'team-project' && action === 'destroy'), [['team-project', 'destroy', { team: 'sandboxers', project: 'payments' }, 'seed']], 'the removal in the audit trail, by the system')

  // cora reaches nothing of the seed's workspace, and grants nothing on it
  t.equal((await app.inject({ url: '/api/v2/workspaces/ws-q-payments', headers: bearer('q-cora-token') })).statusCode, 404)
  t.equal((await app.teamAccess.effectiveAccess({ caller: { kind: 'user', userId: 'user-q-cora' }, workspaceId: 'ws-q-payments' })).access, null)
  const grant = await app.inject({
    method: 'POST',
    url: '/api/v2/team-workspaces',
    headers: { ...json, ...bearer('q-cora-token') },
    payload: JSON.stringify({ data: { type: 'team-workspaces', attributes: { access: 'admin' }, relationships: { team: { data: { type: 'teams', id: 'team-q-sandbox' } }, workspace: { data: { type: 'workspaces', id: 'ws-q-payments' } } } } })
  })
  t.equal(grant.statusCode, 404, 'no grant on the seed’s workspace')
  t.equal((await app.inject({ method: 'PATCH', url: `/api/v2/projects/${project}`, headers: { ...json, ...bearer('q-cora-token') }, payload: JSON.stringify({ data: { type: 'projects', attributes: { name: 'mine' } } }) })).statusCode, 404, 'nor a rename of the project now the seed’s')

  const again = await applySeed(app.db, next)
  t.same(again.warnings.filter((w) => w.startsWith('project ')), [], 'adopted once: the next apply warns nothing')
  t.same(again.removed.projectAccess, [])
})

t.test(`names a seed declares with ids, taken through the API, are renamed out of the way; the seed applies and the service starts (${ENGINE})`, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'team-access-squat-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  // a database that outlives its first service: PGlite on disk
  const location = ENGINE === 'postgres' ? await freshLocation(t) : { dataDir: join(dir, 'data') }
  const app = await buildApp(testConfig(location))
  await applySeed(app.db, base())
  const project = await sandbox(t, app)
  // project names are unique case-insensitively: PAYMENTS holds payments
  await rename(t, app, project, 'PAYMENTS')
  const team = await app.inject({ method: 'POST', url: '/api/v2/organizations/acme/teams', headers: { ...json, ...bearer('q-mo-token') }, payload: JSON.stringify({ data: { type: 'teams', attributes: { name: 'payments-ops' } } }) })
  t.equal(team.statusCode, 201, 'a manage-teams member makes a team "payments-ops"')
  const squatter = team.json().data.id as string
  await app.close()

  const next = base()
  const org = next.organizations[0]!
  org.teams.push({ id: 'team-q-payments-ops', name: 'payments-ops', members: [] })
  org.projects.push({ id: 'prj-q-payments', name: 'payments' })
  org.workspaces.push({ id: 'ws-q-payments', name: 'payments-prod', project: 'payments' })
  org['project-access'].push({ team: 'payments-ops', project: 'payments', access: 'admin' })
  const file = join(dir, 'seed.json')
  await writeFile(file, JSON.stringify(next))
  const lines: string[] = []
  const started = await buildApp(testConfig(location, { seedFile: file, logLevel: 'info' }), { logStream: { write: (line) => { lines.push(line) } } })
  t.teardown(() => started.close())
  const applied = lines.map((l) => JSON.parse(l)).find((l) => /^seed file: applied/.test(l.msg))
  t.ok(applied, 'the start applied the seed')

  const names = async (table: 'teams' | 'projects', ids: string[]) =>
    Object.fromEntries((await started.db.selectFrom(table).select(['id', 'name', 'managed_by']).where('id', 'in', ids).execute()).map((row) => [row.id, [row.name, row.managed_by]]))
  t.same(await names('projects', [project, 'prj-q-payments']), { [project]: ['PAYMENTS-renamed', 'api'], 'prj-q-payments': ['payments', 'seed'] }, 'the seed’s project has its name; the API’s is renamed, still the API’s')
  t.same(await names('teams', [squatter, 'team-q-payments-ops']), { [squatter]: ['payments-ops-renamed', 'api'], 'team-q-payments-ops': ['payments-ops', 'seed'] })
  t.equal((await started.db.selectFrom('workspaces').select('project_id').where('id', '=', 'ws-q-payments').executeTakeFirstOrThrow()).project_id, 'prj-q-payments', 'the seed’s workspace lands in the seed’s project')
  t.equal((await started.db.selectFrom('team_projects').select('id').where('project_id', '=', project).execute()).length, 2, 'the renamed project keeps its rows: it is not the seed’s')
  t.equal((await started.teamAccess.effectiveAccess({ caller: { kind: 'user', userId: 'user-q-cora' }, workspaceId: 'ws-q-payments' })).access, null, 'cora reaches nothing of the seed’s workspace')
  t.match(applied.msg, /! project acme\/PAYMENTS \(prj-[A-Za-z0-9]+\), made through the API, held the name the seed declares for prj-q-payments: renamed "PAYMENTS-renamed"/)
  t.match(applied.msg, /! team acme\/payments-ops \(team-[A-Za-z0-9]+\), made through the API, held the name the seed declares for team-q-payments-ops: renamed "payments-ops-renamed"/)
  const events = (await trail(started)).filter(([, action]) => action === 'update')
  t.same(events.map((e) => JSON.stringify(e)).sort(), [
    ['project', 'update', { project: 'PAYMENTS-renamed' }, 'seed'],
    ['team', 'update', { team: 'payments-ops-renamed' }, 'seed']
  ].map((e) => JSON.stringify(e)).sort(), 'each rename in the audit trail, by the system')

  t.test('the next apply finds the names its own: nothing renamed again', async (t) => {
    const again = await applySeed(started.db, next)
    t.same(again.warnings.filter((w) => /renamed/.test(w)), [])
    t.same([...again.changed.teams, ...again.changed.projects], [])
  })

  t.test('a second squat takes the next free name', async (t) => {
    const made = await started.inject({ method: 'POST', url: '/api/v2/organizations/acme/teams', headers: { ...json, ...bearer('q-mo-token') }, payload: JSON.stringify({ data: { type: 'teams', attributes: { name: 'payments-renamed' } } }) })
    t.equal(made.statusCode, 201)
    const more = base()
    more.organizations[0]!.teams.push({ id: 'team-q-payments', name: 'payments', members: [] })
    more.organizations[0]!.teams.push({ id: 'team-q-payments-ops', name: 'payments-ops', members: [] })
    const squat2 = await started.inject({ method: 'POST', url: '/api/v2/organizations/acme/teams', headers: { ...json, ...bearer('q-mo-token') }, payload: JSON.stringify({ data: { type: 'teams', attributes: { name: 'payments' } } }) })
    t.equal(squat2.statusCode, 201)
    const summary = await applySeed(started.db, more)
    t.same(summary.changed.teams, ['acme/payments (renamed "payments-renamed-2": the seed declares the name)'])
    t.equal((await started.db.selectFrom('teams').select('name').where('id', '=', squat2.json().data.id).executeTakeFirstOrThrow()).name, 'payments-renamed-2')
  })
})

t.test(`a workspace the API made under a name a seed declares: adopted whole by name, renamed out of the way for an id (${ENGINE})`, async (t) => {
  const app = await build(t, { seed: base() })
  const project = await sandbox(t, app)
  // cora, admin of her sandbox (admin on its workspaces), makes a workspace there under the name the operator's next seed declares
  const create = async (name: string) => {
    const made = await app.inject({ method: 'POST', url: '/api/v2/organizations/acme/workspaces', headers: { ...json, ...bearer('q-org-token') }, payload: JSON.stringify({ data: { type: 'workspaces', attributes: { name }, relationships: { project: { data: { type: 'projects', id: project } } } } }) })
    t.equal(made.statusCode, 201, `a workspace "${name}" in the sandbox`)
    const id = made.json().data.id as string
    // and gives her own team admin on it, a row that stays wherever the workspace goes
    const row = await app.inject({
      method: 'POST',
      url: '/api/v2/team-workspaces',
      headers: { ...json, ...bearer('q-cora-token') },
      payload: JSON.stringify({ data: { type: 'team-workspaces', attributes: { access: 'admin' }, relationships: { team: { data: { type: 'teams', id: 'team-q-sandbox' } }, workspace: { data: { type: 'workspaces', id } } } } })
    })
    t.equal(row.statusCode, 200, 'cora gives her team admin on it')
    return id
  }
  const billing = await create('billing')
  const ledger = await create('ledger')

  const next = base()
  next.organizations[0]!.workspaces.push({ name: 'billing' }, { id: 'ws-q-ledger', name: 'ledger' })
  next.organizations[0]!['team-access' as never] = [{ team: 'devs', workspace: 'billing', access: 'write' }] as never
  const summary = await applySeed(app.db, next)

  // by name: the seed's whole, placed where the seed says (the default project), cora's row gone with its event
  const adopted = await app.db.selectFrom('workspaces as w').innerJoin('projects as p', 'p.id', 'w.project_id').select(['w.managed_by', 'p.is_default']).where('w.id', '=', billing).executeTakeFirstOrThrow()
  t.same(adopted, { managed_by: 'seed', is_default: true }, 'billing is the seed’s, in the project the seed says')
  t.same(await app.db.selectFrom('team_workspaces').select(['team_id', 'access']).where('workspace_id', '=', billing).execute(), [{ team_id: 'team-q-devs', access: 'write' }], 'only the seed’s grant')
  t.same(summary.removed.teamAccess, ['sandboxers on acme/billing'])
  t.ok(summary.warnings.includes('workspace acme/billing: made through the API, now the seed\'s — 1 team-access row it does not declare removed'), 'the apply warns, naming it')
  t.equal((await app.inject({ url: `/api/v2/workspaces/${billing}`, headers: bearer('q-cora-token') })).statusCode, 404, 'cora reaches nothing of the seed’s billing')
  t.equal((await app.inject({ method: 'DELETE', url: `/api/v2/workspaces/${billing}`, headers: bearer('q-cora-token') })).statusCode, 404, 'nor deletes it')
  t.ok((await trail(app)).some(([type, action, meta]) => type === 'workspace' && action === 'remove_team' && (meta as any).team === 'sandboxers'), 'the removal in the audit trail, by the system')

  // with an id: the seed's ledger is a new workspace under the name; cora's is renamed out of the way, hers still
  const names = Object.fromEntries((await app.db.selectFrom('workspaces').select(['id', 'name', 'managed_by']).where('id', 'in', [ledger, 'ws-q-ledger']).execute()).map((row) => [row.id, [row.name, row.managed_by]]))
  t.same(names, { [ledger]: ['ledger-renamed', 'api'], 'ws-q-ledger': ['ledger', 'seed'] })
  t.ok(summary.warnings.some((w) => w.startsWith(`workspace acme/ledger (${ledger}), made through the API, held the name the seed declares for ws-q-ledger: renamed "ledger-renamed"`)))
  t.equal((await app.teamAccess.effectiveAccess({ caller: { kind: 'user', userId: 'user-q-cora' }, workspaceId: 'ws-q-ledger' })).access, null, 'cora reaches nothing of the seed’s ledger')

  const again = await applySeed(app.db, next)
  t.same(again.warnings.filter((w) => w.startsWith('workspace acme/')), [], 'adopted once: the next apply warns nothing')

  // a team-access entry naming a workspace the API made, which the document does not declare: refused, naming it
  const squat = await create('audit')
  const refused = base()
  refused.organizations[0]!['team-access' as never] = [{ team: 'devs', workspace: 'audit', access: 'read' }] as never
  await t.rejects(applySeed(app.db, refused), /workspace "audit" was made through the API: declare it under "workspaces"/)
  t.equal((await app.db.selectFrom('team_workspaces').select('id').where('workspace_id', '=', squat).execute()).length, 1, 'nothing applied')
})
