import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { bearer, build, ENGINE } from '../helper.js'
import { applyMirror, MirrorError } from '../../src/directory/mirror-apply.js'
import type { MirrorSnapshot } from '../../src/directory/mirror-snapshot.js'
import { applySeedDocument } from '../../src/directory/seed.js'
import { regenerateToken } from '../../src/directory/tokens.js'
import { inSchema } from '../../src/db/tables.js'
import type { Database } from '../../src/db/database.js'
import { grant, HOST, projectGrant, randomSnapshot, seedOf, smallSnapshot } from './apply-worlds.js'

/**
 * applyMirror (DESIGN §13.3) on a real database: a mirrored organization's access review equals the
 * review of the same world written by a seed into another database (ids kept), cell for cell; a run
 * that finds nothing different writes no event and changes no row; each change writes exactly its
 * events, as Mirror with the host, one request id a run; a dry run is the apply's summary and writes
 * nothing; a conflict fails whole and changes nothing; the API may not write a mirrored organization.
 */

const TOKEN = 'mirrored-organization-token'
const DIRECTORY = ['organizations', 'users', 'teams', 'team_memberships', 'workspaces', 'projects', 'organization_memberships',
  'organization_membership_teams', 'team_workspaces', 'team_projects', 'tokens', 'audit_events', 'mirrors'] as const

/** Every row of the directory, its events and `mirrors`, sorted: "nothing changed" compares these. */
async function everything (db: Kysely<any>): Promise<Record<string, string[]>> {
  const directory = inSchema(db)
  const out: Record<string, string[]> = {}
  for (const name of DIRECTORY) out[name] = (await directory.selectFrom(name).selectAll().execute()).map((row) => JSON.stringify(row)).sort()
  return out
}

/** The organization's own token here (DESIGN §13.3: the service's, never HCP Terraform's), made by the host. */
async function organizationToken (db: Kysely<any>, organizationId: string, secret = TOKEN): Promise<string> {
  const made = await regenerateToken(inSchema(db), { by: 'host', actor: 'test', requestId: randomUUID() }, { kind: 'organization', organizationId }, secret, null)
  if (made.created === undefined) throw new Error('no token made')
  return secret
}

/** The access review, the default project's id left out (a seed's default project has an id of its own). */
async function review (app: FastifyInstance, organization: string, token: string): Promise<unknown[]> {
  const answer = await app.inject({ url: `/api/v2/organizations/${organization}/access-review`, headers: bearer(token) })
  if (answer.statusCode !== 200) throw new Error(`access review: ${answer.statusCode} ${answer.body}`)
  const { id } = await inSchema(app.db).selectFrom('projects as p').innerJoin('organizations as o', 'o.id', 'p.organization_id')
    .select('p.id').where('o.name', '=', organization).where('p.is_default', '=', true).executeTakeFirstOrThrow()
  return JSON.parse(answer.body.replaceAll(JSON.stringify(id), '"the default project"')).data
}

/** The review of the same world written by a seed into a database of its own. */
async function seededReview (t: Test, snapshot: MirrorSnapshot): Promise<unknown[]> {
  const app = await build(t, { seed: seedOf(snapshot, TOKEN) })
  return await review(app, snapshot.organization.name, TOKEN)
}

/** The organization's audit trail, oldest first. */
async function trail (app: FastifyInstance, token: string): Promise<any[]> {
  const events: any[] = []
  for (let page = 1; ; page++) {
    const answer = (await app.inject({ url: `/api/v2/organization/audit-trail?page[size]=1000&page[number]=${page}`, headers: bearer(token) })).json()
    events.push(...answer.data)
    if (answer.pagination.next_page === null) return events
  }
}

/** Events as `type action name`, sorted: what a run recorded, by what it is about. */
const described = (events: any[]): string[] => events.map(({ resource: { type, action, meta } }) =>
  [type, action, meta.team ?? meta.workspace ?? meta.project ?? meta.email].filter((part) => part !== undefined).join(' ') + (meta.user === undefined ? '' : `: ${String(meta.user)}`)).sort()

/** The events are one mirror run's: Mirror, the host, one request id. */
function oneRun (t: Test, events: any[]): string {
  t.ok(events.every((e) => e.auth.type === 'Mirror' && e.auth.description === HOST && e.auth.accessor_id === null), 'every event: Mirror, the host')
  t.equal(new Set(events.map((e) => e.request.id)).size, 1, 'one request id for the run')
  return events[0]?.request.id
}

t.test(`a small organization mirrored, run again, changed (${ENGINE})`, async (t) => {
  const app = await build(t)
  const snapshot = smallSnapshot()
  const empty = await everything(app.db)

  const plan = await applyMirror(app.db, snapshot, { dryRun: true })
  t.same(await everything(app.db), empty, 'a dry run writes nothing')
  t.equal(plan.dryRun, true)
  const first = await applyMirror(app.db, snapshot, { durationMs: 1234.4 })
  t.same({ ...first, dryRun: true }, plan, 'the apply did what the dry run said')
  t.same(first.created.teams, ['acme/devs', 'acme/ops', 'acme/owners'])
  t.same(first.created.memberships, ['acme/devs: alice', 'acme/devs: bob', 'acme/ops: bob', 'acme/owners: owner', 'acme: alice', 'acme: bob', 'acme: carol@acme.test', 'acme: owner'])
  t.same(first.warnings, snapshot.notes, 'what the model cannot hold is a warning')
  const db = inSchema(app.db) as Kysely<Database>
  t.match(await db.selectFrom('organizations').selectAll().execute(), [{ id: 'org-acme', name: 'acme', managed_by: 'mirror' }])
  t.match(await db.selectFrom('projects').select(['id', 'name', 'is_default', 'managed_by']).orderBy('name').execute(),
    [{ id: 'prj-default', name: 'Default Project', is_default: true, managed_by: 'mirror' }, { id: 'prj-platform', name: 'platform', is_default: false, managed_by: 'mirror' }],
    "the default project is HCP Terraform's")
  t.match(await db.selectFrom('mirrors').selectAll().execute(), [{ organization_id: 'org-acme', host: HOST, duration_ms: 1234, requests: 17 }])
  t.match(await db.selectFrom('organization_memberships').select(['id', 'status']).where('id', '=', 'ou-carol').execute(), [{ id: 'ou-carol', status: 'invited' }])
  t.same((await db.selectFrom('organization_membership_teams').select('team_id').where('membership_id', '=', 'ou-carol').execute()).map((r) => r.team_id), ['team-devs'])

  const token = await organizationToken(app.db, 'org-acme')
  t.same(await review(app, 'acme', token), await seededReview(t, snapshot), 'the access review is the seeded world\'s')
  const mirrored = (await trail(app, token)).filter((e) => e.auth.type !== 'System')
  const firstRun = oneRun(t, mirrored)
  t.same(described(mirrored), [
    'organization-membership create alice@acme.test: alice', 'organization-membership create carol@acme.test', 'organization-membership create owner@acme.test: owner',
    'organization-membership create: bob', 'project create Default Project', 'project create platform',
    'team add_member devs: alice', 'team add_member devs: bob', 'team add_member ops: bob', 'team add_member owners: owner',
    'team create devs', 'team create ops', 'team create owners', 'team-project create ops',
    'workspace add_team devs', 'workspace add_team devs', 'workspace create dev', 'workspace create prod', 'workspace create scratch'
  ], 'an event for every row made')

  // again, unchanged: no event, no row changed; only the run's note
  const before = await everything(app.db)
  const again = await applyMirror(app.db, snapshot)
  t.notOk([again.created, again.changed, again.removed].some((changes) => Object.values(changes).some((labels) => labels.length > 0)), 'nothing created, changed or removed')
  const after = await everything(app.db)
  t.same({ ...after, mirrors: [] }, { ...before, mirrors: [] }, 'no row changed, no event written')
  t.not(after.mirrors?.[0], before.mirrors?.[0], 'the run noted in mirrors')

  // changes: a team renamed, a member dropped, a level changed, a workspace removed, a project grant added, a workspace moved
  const changed = structuredClone(snapshot)
  changed.teams[2]!.name = 'operations'
  changed.teams[1]!.userIds = ['user-alice']
  changed.teamWorkspaces[0] = grant('tws-devs-prod', 'team-devs', 'ws-prod', 'admin')
  changed.workspaces = changed.workspaces.filter((w) => w.name !== 'scratch')
  changed.teamProjects.push(projectGrant('tprj-devs-default', 'team-devs', 'prj-default', 'read'))
  changed.workspaces[1]!.projectId = 'prj-platform'
  const changePlan = await applyMirror(app.db, changed, { dryRun: true })
  t.same({ ...after, mirrors: [] }, { ...await everything(app.db), mirrors: [] }, 'a dry run of changes writes nothing')
  const change = await applyMirror(app.db, changed)
  t.same({ ...change, dryRun: true }, changePlan, 'the apply did what the dry run said')
  t.same([change.changed.teams, change.removed.memberships, change.changed.teamAccess, change.removed.workspaces, change.created.projectAccess, change.changed.workspaces],
    [['acme/operations (name)'], ['acme/devs: bob'], ['devs on acme/prod (access, runs, variables, state-versions, sentinel-mocks, workspace-locking, run-tasks)'],
      ['acme/scratch'], ['devs on acme/Default Project'], ['acme/dev (project)']])
  const events = (await trail(app, token)).slice(mirrored.length + 1)
  t.not(oneRun(t, events), firstRun, 'a run of its own')
  t.same(described(events), ['team remove_member devs: bob', 'team update operations', 'team-project create devs', 'workspace destroy scratch',
    'workspace update dev', 'workspace update_team_permissions devs'], 'exactly one event per change')
  t.equal(events.find((e) => e.resource.action === 'update' && e.resource.type === 'workspace').resource.meta.project, 'Default Project -> platform', 'a move names its projects')
  t.same(await review(app, 'acme', token), await seededReview(t, changed), 'the review follows')

  // the API may not write a mirrored organization; nothing changes
  const rows = await everything(app.db)
  const json = { ...bearer(token), 'content-type': 'application/vnd.api+json' }
  const patch = await app.inject({ method: 'PATCH', url: '/api/v2/team-workspaces/tws-devs-prod', headers: json, payload: { data: { type: 'team-workspaces', attributes: { access: 'read' } } } })
  const post = await app.inject({ method: 'POST', url: '/api/v2/organizations/acme/teams', headers: json, payload: { data: { type: 'teams', attributes: { name: 'sneaky' } } } })
  for (const answer of [patch, post]) {
    t.equal(answer.statusCode, 422)
    t.match(answer.json().errors[0].detail, 'managed by the mirror (change it in HCP Terraform)')
  }
  t.same(await everything(app.db), rows, 'a refused write changes nothing')
})

t.test(`people: an invitation accepted, a user no mirrored organization declares removed, users shared by two (${ENGINE})`, async (t) => {
  const app = await build(t)
  const acme = smallSnapshot()
  const globex = randomSnapshot(5, 4, 'globex')
  globex.users.push(acme.users[1]!)
  globex.teams[1]!.userIds.push('user-alice')
  globex.memberships.push({ id: 'ou-globex-alice', userId: 'user-alice', status: 'active', teamIds: [globex.teams[1]!.id] })
  await applyMirror(app.db, acme)
  await applyMirror(app.db, globex)
  const token = await organizationToken(app.db, 'org-acme')
  const seen = (await trail(app, token)).length
  const db = inSchema(app.db) as Kysely<Database>

  // carol arrives in HCP Terraform: her membership active, her invitation's team a team membership
  const arrived = structuredClone(acme)
  arrived.users[3] = { id: 'user-carol', username: 'carol', email: 'carol@acme.test' }
  arrived.memberships[3] = { id: 'ou-carol', userId: 'user-carol', status: 'active', teamIds: ['team-devs'] }
  arrived.teams[1]!.userIds.push('user-carol')
  const summary = await applyMirror(app.db, arrived)
  t.same([summary.changed.users, summary.changed.memberships, summary.created.memberships], [['carol (username)'], ['acme: carol (status, teams)'], ['acme/devs: carol']])
  const events = (await trail(app, token)).slice(seen)
  oneRun(t, events)
  t.same(described(events), ['organization-membership update carol@acme.test: carol', 'team add_member devs: carol'])

  // alice leaves acme: globex still declares her, so she stays; then globex drops her too: she is removed
  const left = structuredClone(arrived)
  left.users = left.users.filter((u) => u.id !== 'user-alice')
  left.teams[1]!.userIds = left.teams[1]!.userIds.filter((id) => id !== 'user-alice')
  left.memberships = left.memberships.filter((m) => m.userId !== 'user-alice')
  const leaving = await applyMirror(app.db, left)
  t.same([leaving.removed.users, leaving.removed.memberships], [[], ['acme/devs: alice', 'acme: alice']])
  t.ok(await db.selectFrom('users').select('id').where('id', '=', 'user-alice').executeTakeFirst(), 'a user another mirrored organization declares stays')
  const globexLeft = { ...globex, users: globex.users.filter((u) => u.id !== 'user-alice'), memberships: globex.memberships.filter((m) => m.userId !== 'user-alice'), teams: structuredClone(globex.teams) }
  globexLeft.teams[1]!.userIds = globexLeft.teams[1]!.userIds.filter((id) => id !== 'user-alice')
  const gone = await applyMirror(app.db, globexLeft)
  t.same(gone.removed.users, ['alice'])
  t.equal(await db.selectFrom('users').select('id').where('id', '=', 'user-alice').executeTakeFirst(), undefined, 'a user no mirrored organization declares is removed')
  t.same(described((await trail(app, token)).slice(seen + events.length)), ['organization-membership destroy alice@acme.test: alice', 'team remove_member devs: alice'],
    'acme saw her leave; globex\'s trail has its own')
})

t.test(`random organizations, each mirrored over the last, equal their seeded worlds (${ENGINE})`, async (t) => {
  const app = await build(t)
  let token: string | undefined
  for (const seed of [11, 12, 13]) {
    const snapshot = randomSnapshot(seed, 10)
    const plan = await applyMirror(app.db, snapshot, { dryRun: true })
    const applied = await applyMirror(app.db, snapshot)
    t.same({ ...applied, dryRun: true }, plan, `world ${seed}: the apply did what the dry run said`)
    token ??= await organizationToken(app.db, 'org-acme')
    t.same(await review(app, 'acme', token), await seededReview(t, snapshot), `world ${seed}: the access review is the seeded world's`)
    const events = await trail(app, token)
    const rows = await everything(app.db)
    await applyMirror(app.db, snapshot)
    t.same({ ...await everything(app.db), mirrors: [] }, { ...rows, mirrors: [] }, `world ${seed}: run again, nothing changes`)
    t.equal((await trail(app, token)).length, events.length, `world ${seed}: run again, no event`)
  }
})

t.test(`conflicts fail the run whole and change nothing (${ENGINE})`, async (t) => {
  const app = await build(t)
  await applySeedDocument(app.db, {
    users: [{ id: 'user-seeded', username: 'alice' }, { id: 'user-mailer', username: 'mailer', email: 'OWNER@acme.test' }],
    organizations: [{ id: 'org-globex', name: 'globex', teams: [{ id: 'team-devs', name: 'devs' }], workspaces: [{ id: 'ws-prod', name: 'prod' }] }]
  })
  const before = await everything(app.db)
  const refused = async (snapshot: MirrorSnapshot, problems: RegExp[]) => {
    const err = await applyMirror(app.db, snapshot).then(() => undefined, (e: unknown) => e)
    t.type(err, MirrorError)
    for (const problem of problems) t.ok((err as MirrorError).problems.some((p) => problem.test(p)), `names ${String(problem)}`)
    t.same(await everything(app.db), before, 'nothing changed')
  }
  await refused(smallSnapshot(), [/^username alice is held by user user-seeded, managed by the seed file here$/, /^email owner@acme\.test is held by user user-mailer/,
    /^team team-devs belongs to organization globex$/, /^workspace ws-prod belongs to organization globex$/])
  await refused({ ...smallSnapshot(), organization: { name: 'globex', externalId: 'org-acme', defaultProjectId: 'prj-default' } },
    [/^organization globex is managed by the seed file here, not by a mirror/])
  const broken = smallSnapshot()
  broken.teamWorkspaces.push(grant('tws-ghost', 'team-ghost', 'ws-prod', 'read'))
  await refused(broken, [/^team-workspace tws-ghost names team "team-ghost", which was not read$/])
  // a value the directory cannot hold fails the transaction, after the organization was made: it is not there either
  await refused({
    host: HOST,
    organization: { name: 'initech', externalId: 'org-initech', defaultProjectId: 'prj-x' },
    users: [],
    teams: [],
    memberships: [],
    projects: [{ id: 'prj-x', name: 'x', description: null, isDefault: true }],
    workspaces: [],
    teamWorkspaces: [],
    teamProjects: [],
    notes: [],
    requests: 1
  }, [/^a value read breaks a rule of the directory \(projects_name_check/])
})

t.test(`names that cross: swapped, renamed in a chain, the owners team and the default project moved (${ENGINE})`, async (t) => {
  const app = await build(t)
  const snapshot = smallSnapshot()
  snapshot.projects.push({ id: 'prj-tools', name: 'tools', description: null, isDefault: false })
  await applyMirror(app.db, snapshot)
  const token = await organizationToken(app.db, 'org-acme')
  const seen = (await trail(app, token)).length

  const crossed = structuredClone(snapshot)
  const [owners, devs, ops] = crossed.teams as [MirrorSnapshot['teams'][number], MirrorSnapshot['teams'][number], MirrorSnapshot['teams'][number]]
  ;[devs.name, ops.name] = [ops.name, devs.name]
  // HCP Terraform has one owners team, named owners: here, another team takes the flag (and the name)
  ;[owners.name, owners.isOwners, ops.name, ops.isOwners] = ['former-owners', false, 'owners', true]
  const [prod, dev] = crossed.workspaces as [MirrorSnapshot['workspaces'][number], MirrorSnapshot['workspaces'][number]]
  ;[prod.name, dev.name] = [dev.name, prod.name]
  // platform → tools → Tools-2, and the default project is platform now
  const [, platform, tools] = crossed.projects as Array<MirrorSnapshot['projects'][number]>
  ;[platform!.name, tools!.name] = ['tools', 'Tools-2']
  crossed.organization.defaultProjectId = 'prj-platform'
  ;[crossed.projects[0]!.isDefault, platform!.isDefault] = [false, true]
  const [alice, bob] = [crossed.users[1]!, crossed.users[2]!]
  ;[alice.username, bob.username, alice.email, bob.email] = [bob.username, alice.username, bob.email, alice.email]

  const plan = await applyMirror(app.db, crossed, { dryRun: true })
  const applied = await applyMirror(app.db, crossed)
  t.same({ ...applied, dryRun: true }, plan, 'the apply did what the dry run said')
  const db = inSchema(app.db) as Kysely<Database>
  t.same(await db.selectFrom('teams').select(['id', 'name', 'is_owners']).orderBy('id').execute(),
    [{ id: 'team-devs', name: 'ops', is_owners: false }, { id: 'team-ops', name: 'owners', is_owners: true }, { id: 'team-owners', name: 'former-owners', is_owners: false }])
  t.same(await db.selectFrom('workspaces').select(['id', 'name']).orderBy('id').execute(), [{ id: 'ws-dev', name: 'prod' }, { id: 'ws-prod', name: 'dev' }, { id: 'ws-scratch', name: 'scratch' }])
  t.same(await db.selectFrom('projects').select(['id', 'name', 'is_default']).orderBy('id').execute(),
    [{ id: 'prj-default', name: 'Default Project', is_default: false }, { id: 'prj-platform', name: 'tools', is_default: true }, { id: 'prj-tools', name: 'Tools-2', is_default: false }])
  t.same(await db.selectFrom('users').select(['id', 'username', 'email']).where('id', 'in', ['user-alice', 'user-bob']).orderBy('id').execute(),
    [{ id: 'user-alice', username: 'bob', email: null }, { id: 'user-bob', username: 'alice', email: 'alice@acme.test' }])
  const events = (await trail(app, token)).slice(seen)
  oneRun(t, events)
  t.same(described(events), ['project update Default Project', 'project update Tools-2', 'project update tools',
    'team update former-owners', 'team update ops', 'team update owners', 'workspace update dev', 'workspace update prod'],
  'one update each: what was moved out of the way meanwhile changes once')
  t.same([applied.changed.teams, applied.changed.projects, applied.changed.users], [
    ['acme/former-owners (name, owners)', 'acme/ops (name)', 'acme/owners (name, owners)'],
    ['acme/Default Project (default)', 'acme/Tools-2 (name)', 'acme/tools (name, default)'],
    ['alice (username, email)', 'bob (username, email)']])
})
