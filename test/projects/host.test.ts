import t from 'tap'
import { build, ENGINE } from '../helper.js'
import { world } from '../fixtures/world.js'

/**
 * The host's directory for projects (DESIGN §11.5): create, change and remove projects, place
 * workspaces (on create and by change), with the refusals the host API documents and the events
 * every source records (System, the actor).
 */
t.test(`the host's projects and placements (${ENGINE})`, async (t) => {
  const app = await build(t, { seed: world })
  const dir = app.teamAccess.directory
  const red = { kind: 'user' as const, userId: 'user-red' }

  const platform = await dir.createProject({ organizationId: 'org-acme', name: 'platform', description: 'made by the host' }, { actor: 'portal' })
  t.match(platform, { organizationId: 'org-acme', name: 'platform', description: 'made by the host', isDefault: false, managedBy: 'host' })
  t.match(platform.id, /^prj-/)
  await t.rejects(dir.createProject({ organizationId: 'org-acme', name: 'PLATFORM' }), { code: 'conflict' }, 'a name taken, case-insensitively')
  await t.rejects(dir.createProject({ organizationId: 'org-nope', name: 'x-y-z' }), { code: 'not-found' })
  await t.rejects(dir.createProject({ organizationId: 'org-acme', name: 'x' }), { code: 'invalid' }, 'too short a name')
  t.match(await dir.changeProject(platform.id, { name: 'Platform', description: null }), { name: 'Platform', description: null })
  await t.rejects(dir.changeProject('prj-nope', { name: 'whatever' }), { code: 'not-found' })

  const created = await dir.createWorkspace({ organizationId: 'org-acme', name: 'edge', projectId: platform.id })
  t.equal(created.projectId, platform.id, 'created in the project')
  await app.db.insertInto('team_projects').values({ id: 'tprj-red-platform', organization_id: 'org-acme', team_id: 'team-red', project_id: platform.id, access: 'admin', project_settings: 'delete', project_teams: 'manage', project_variable_sets: 'write', runs: 'apply', sentinel_mocks: 'read', state_versions: 'write', variables: 'write', workspace_create: true, workspace_locking: true, workspace_delete: true, workspace_move: true, run_tasks: true }).execute()
  t.equal((await app.teamAccess.effectiveAccess({ caller: red, workspaceId: created.id })).access, 'admin', 'admin on the project: admin on its workspace')
  t.equal((await app.teamAccess.effectiveAccess({ caller: red, workspaceId: 'ws-dev' })).access, null)
  const moved = await dir.changeWorkspace('ws-dev', { projectId: platform.id }, { actor: 'portal' })
  t.equal(moved.projectId, platform.id)
  t.equal((await app.teamAccess.effectiveAccess({ caller: red, workspaceId: 'ws-dev' })).access, 'admin', 'moved in: granted from the next call')
  const globexProject = (await app.db.selectFrom('projects').select('id').where('organization_id', '=', 'org-globex').executeTakeFirstOrThrow()).id
  await t.rejects(dir.changeWorkspace('ws-dev', { projectId: globexProject }), { code: 'not-found' }, 'never into another organization’s project')
  await t.rejects(dir.removeProject(platform.id), { code: 'invalid', message: /still holds 2 workspace/ })
  const defaultProject = (await app.db.selectFrom('projects').select('id').where('organization_id', '=', 'org-acme').where('is_default', '=', true).executeTakeFirstOrThrow()).id
  await t.rejects(dir.removeProject(defaultProject), { code: 'invalid', message: /default project/ })
  await dir.changeWorkspace('ws-dev', { projectId: defaultProject })
  await dir.removeWorkspace(created.id)
  t.equal((await app.teamAccess.effectiveAccess({ caller: red, workspaceId: 'ws-dev' })).access, null, 'moved out: no longer')
  await dir.removeProject(platform.id, { actor: 'portal' })
  t.equal(await app.db.selectFrom('team_projects').select('id').where('id', '=', 'tprj-red-platform').executeTakeFirst(), undefined, 'its rows went with it')
  const events = await app.db.selectFrom('audit_events').select(['resource_type', 'action', 'accessor_description']).where('resource_type', 'in', ['project', 'team-project']).orderBy('occurred_at').execute()
  t.same(events.map((e) => `${e.resource_type} ${e.action} ${e.accessor_description}`), ['project create portal', 'project update host', 'team-project destroy portal', 'project destroy portal'])
})
