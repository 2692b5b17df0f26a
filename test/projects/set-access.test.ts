import t from 'tap'
import { build, ENGINE } from '../helper.js'
import { world } from '../fixtures/world.js'
import { AccessSetError } from '../../src/index.js'

/**
 * The host's access set of a project (DESIGN §11.5, `teamAccess.setProjectAccess`): a complete set
 * applied in one transaction through the API's own statements (their rules and audit events), a
 * dry run that changes nothing, ETags, and every refusal changing nothing — the 404 of a caller who
 * is not the project's admin, the problems of the entries all at once, nobody handing out more
 * than they hold.
 */
t.test(`a project's access set, from the host (${ENGINE})`, async (t) => {
  const app = await build(t, { seed: world })
  const { directory: dir, setProjectAccess } = app.teamAccess
  const owner = { kind: 'user' as const, userId: 'user-owner' }
  const red = { kind: 'user' as const, userId: 'user-red' }
  const writer = { kind: 'user' as const, userId: 'user-writer' }
  const project = await dir.createProject({ organizationId: 'org-acme', name: 'platform' })
  await dir.changeWorkspace('ws-dev', { projectId: project.id })
  const rows = async () => (await app.db.selectFrom('team_projects').select(['team_id', 'access', 'runs', 'project_teams']).where('project_id', '=', project.id).orderBy('team_id').execute())
  const events = async () => (await app.db.selectFrom('audit_events').select(['action', 'request_id']).where('resource_type', '=', 'team-project').orderBy('occurred_at').execute())

  const first = await setProjectAccess({
    caller: owner,
    projectId: project.id,
    entries: [
      { teamId: 'team-red', access: 'admin' },
      { teamId: 'team-writers', access: 'custom', 'workspace-access': { runs: 'plan' }, 'project-access': { teams: 'read' } }
    ],
    requestId: 'req-first'
  })
  t.same(first.changes, { added: ['team-red', 'team-writers'], updated: [], removed: [] })
  t.equal(first.dryRun, false)
  t.same(first.rows.map((row) => [row.teamId, row.access, row.permissions['workspace-access'].runs, row.permissions['project-access'].teams]),
    [['team-red', 'admin', 'apply', 'manage'], ['team-writers', 'custom', 'plan', 'read']], 'the level\'s values, and custom\'s defaults under what is given')
  t.same((await events()).map((e) => `${e.action} ${e.request_id}`), ['create req-first', 'create req-first'], 'an event per row, with the request id')
  t.equal((await app.teamAccess.effectiveAccess({ caller: red, workspaceId: 'ws-dev' })).access, 'admin', 'the project admin row reaches its workspace from the next call')

  const same = await setProjectAccess({ caller: owner, projectId: project.id, entries: [{ teamId: 'team-writers', access: 'custom', 'workspace-access': { runs: 'plan' }, 'project-access': { teams: 'read' } }, { teamId: 'team-red', access: 'admin' }] })
  t.same(same.changes, { added: [], updated: [], removed: [] }, 'the same set in another order changes nothing')
  t.equal(same.etag, first.etag, 'and keeps its ETag')

  const before = await rows()
  const dry = await setProjectAccess({ caller: owner, projectId: project.id, entries: [{ teamId: 'team-red', access: 'read' }, { teamId: 'team-green', access: 'write' }], dryRun: true })
  t.same(dry.changes, { added: ['team-green'], updated: ['team-red'], removed: ['team-writers'] })
  t.equal(dry.etag, first.etag, 'a dry run answers the unchanged set\'s ETag')
  t.same(await rows(), before, 'a dry run changes nothing')
  t.equal((await events()).length, 2, 'and records nothing')

  await t.rejects(setProjectAccess({ caller: owner, projectId: project.id, entries: [], ifMatch: '"stale"' }), { code: 'precondition-failed' })
  const emptied = await setProjectAccess({ caller: owner, projectId: project.id, entries: [{ teamId: 'team-red', access: 'maintain' }], ifMatch: first.etag })
  t.same(emptied.changes, { added: [], updated: ['team-red'], removed: ['team-writers'] })
  t.notSame(emptied.etag, first.etag)
  t.same((await events()).slice(2).map((e) => e.action).sort(), ['destroy', 'update'])

  // refusals: each changes nothing
  const now = await rows()
  const refused = async (input: Parameters<typeof setProjectAccess>[0], code: string, problems?: unknown) => {
    const err = await setProjectAccess(input).then(() => undefined, (e: unknown) => e)
    t.ok(err instanceof AccessSetError, `${code}: an AccessSetError`)
    t.match(err, { code, ...(problems === undefined ? {} : { problems }) })
    t.same(await rows(), now, `${code}: nothing changed`)
  }
  await refused({ caller: writer, projectId: project.id, entries: [] }, 'not-found')
  await refused({ caller: owner, projectId: 'prj-nope', entries: [] }, 'not-found')
  await refused({ caller: { kind: 'user', userId: 'user-globex' }, projectId: project.id, entries: [] }, 'not-found')
  await refused({ caller: owner, projectId: project.id, entries: [{ teamId: 'team-red', access: 'read', 'workspace-access': { runs: 'apply' } }, { teamId: 'team-red', access: 'write' }] }, 'invalid',
    [{ entry: 0, member: 'access', detail: /read-only when access level is 'read'/ }, { entry: 1, member: 'team', detail: /already in entry 0/ }])
  await refused({ caller: owner, projectId: project.id, entries: [{ teamId: 'team-red', access: 'read' }, { teamId: 'team-globex', access: 'read' }, { teamId: 'team-nope', access: 'read' }] }, 'invalid',
    [{ entry: 1, member: 'team' }, { entry: 2, member: 'team' }])
  await refused({ caller: owner, projectId: project.id, entries: [{ teamId: 'team-red', access: 'sovereign' } as never] }, 'invalid', [{ entry: 0 }])
  await refused({ caller: owner, projectId: 42 } as never, 'invalid')

  // a project admin through its row (custom with project-teams manage): no more than it holds, level and values
  const redRow = { teamId: 'team-red', access: 'custom' as const, 'project-access': { teams: 'manage' as const }, 'workspace-access': { runs: 'plan' as const, 'state-versions': 'read' as const, variables: 'read' as const } }
  await setProjectAccess({ caller: owner, projectId: project.id, entries: [redRow] })
  const redNow = await rows()
  const byRed = await setProjectAccess({ caller: red, projectId: project.id, entries: [redRow, { teamId: 'team-green', access: 'custom', 'workspace-access': { runs: 'plan' } }] })
  t.same(byRed.changes.added, ['team-green'], 'a row no more than it holds')
  const err = await setProjectAccess({ caller: red, projectId: project.id, entries: [redRow, { teamId: 'team-green', access: 'custom', 'workspace-access': { runs: 'apply' } }] }).catch((e: unknown) => e)
  t.match(err, { code: 'invalid', problems: [{ entry: 1, member: 'team', detail: /more than the caller holds/ }] }, 'runs apply is more than red holds (runs plan): refused')
  t.equal((await rows()).length, redNow.length + 1, 'and the set is as the previous call left it')
})
