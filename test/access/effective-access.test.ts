import t from 'tap'
import Fastify from 'fastify'
import pg from 'pg'
import { Kysely, PostgresDialect, sql } from 'kysely'
import teamAccess from '../../src/plugin.js'
import { preparedStatements } from '../../src/db/connect.js'
import { applySeedDocument } from '../../src/directory/seed.js'
import { build, ENGINE, freshLocation } from '../helper.js'
import { IMPLICIT_PERMISSIONS, strongestPermissions } from '../../src/access/permissions.js'
import type { Caller } from '../../src/auth/caller.js'

const users = ['owner', 'manager', 'reader', 'planner', 'customer', 'mixed', 'reader-custom', 'nobody', 'outsider']
const seed = {
  users: users.map((u) => ({ id: `user-${u}`, username: u })),
  organizations: [
    {
      id: 'org-acme',
      name: 'acme',
      tokens: ['acme-org-token'],
      teams: [
        { id: 'team-owners', name: 'owners', owners: true, members: ['owner'] },
        { id: 'team-managers', name: 'managers', 'organization-access': { 'manage-workspaces': true }, members: ['manager'] },
        { id: 'team-readers', name: 'readers', 'organization-access': { 'read-workspaces': true }, members: ['reader', 'reader-custom'] },
        { id: 'team-planners', name: 'planners', members: ['planner', 'mixed'] },
        { id: 'team-custom', name: 'custom', members: ['customer', 'mixed', 'reader-custom'] },
        { id: 'team-empty', name: 'empty', members: ['nobody'] }
      ],
      workspaces: [{ id: 'ws-app', name: 'app' }, { id: 'ws-other', name: 'other' }],
      'team-access': [
        { team: 'planners', workspace: 'app', access: 'plan' },
        { team: 'custom', workspace: 'app', access: 'custom', runs: 'apply', 'sentinel-mocks': 'read', 'run-tasks': true, 'policy-overrides': false },
        { team: 'custom', workspace: 'other', access: 'admin' }
      ]
    },
    { id: 'org-other', name: 'other', teams: [{ name: 'all', members: ['outsider'] }], workspaces: [{ id: 'ws-elsewhere', name: 'elsewhere' }] }
  ]
}
const user = (name: string): Caller => ({ kind: 'user', userId: `user-${name}` })
const CUSTOM = { runs: 'apply', variables: 'none', 'state-versions': 'none', 'sentinel-mocks': 'read', 'workspace-locking': false, 'run-tasks': true, 'policy-overrides': false } as const

t.test(`effectiveAccess on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed })
  const on = (caller: Caller, workspaceId = 'ws-app') => app.teamAccess.effectiveAccess({ caller, workspaceId })

  t.test('owners: admin, through the owners team or the organization token', async (t) => {
    t.same(await on(user('owner')), { access: 'admin', permissions: IMPLICIT_PERMISSIONS.admin })
    t.same(await on({ kind: 'organization', organizationId: 'org-acme' }), { access: 'admin', permissions: IMPLICIT_PERMISSIONS.admin })
    t.same(await on({ kind: 'team', teamId: 'team-owners' }), { access: 'admin', permissions: IMPLICIT_PERMISSIONS.admin })
  })
  t.test('manage-workspaces: admin on every workspace', async (t) => {
    t.same(await on(user('manager')), { access: 'admin', permissions: IMPLICIT_PERMISSIONS.admin })
    t.same(await on(user('manager'), 'ws-other'), { access: 'admin', permissions: IMPLICIT_PERMISSIONS.admin })
  })
  t.test('read-workspaces: read on every workspace', async (t) => {
    t.same(await on(user('reader')), { access: 'read', permissions: IMPLICIT_PERMISSIONS.read })
  })
  t.test('a team row: its level and its permissions', async (t) => {
    t.same(await on(user('planner')), { access: 'plan', permissions: IMPLICIT_PERMISSIONS.plan })
    t.same(await on(user('customer')), { access: 'custom', permissions: CUSTOM }, 'only custom: the level is custom')
  })
  t.test('strongest wins, attribute by attribute, across custom rows and fixed levels', async (t) => {
    t.same(await on(user('mixed')), {
      access: 'plan',
      permissions: { runs: 'apply', variables: 'read', 'state-versions': 'read', 'sentinel-mocks': 'read', 'workspace-locking': false, 'run-tasks': true, 'policy-overrides': false }
    }, 'plan row + custom row')
    t.same(await on(user('reader-custom')), {
      access: 'read',
      permissions: { runs: 'apply', variables: 'read', 'state-versions': 'read', 'sentinel-mocks': 'read', 'workspace-locking': false, 'run-tasks': true, 'policy-overrides': false }
    }, 'read-workspaces + custom row')
    t.same(await on(user('mixed'), 'ws-other'), { access: 'admin', permissions: IMPLICIT_PERMISSIONS.admin }, 'an admin row elsewhere')
  })
  t.test('a team token counts only its own team', async (t) => {
    t.same(await on({ kind: 'team', teamId: 'team-planners' }), { access: 'plan', permissions: IMPLICIT_PERMISSIONS.plan })
  })
  t.test('no grant, another organization, an unknown workspace: nothing', async (t) => {
    const none = { access: null, permissions: null }
    t.same(await on(user('nobody')), none)
    t.same(await on(user('outsider')), none)
    t.same(await on(user('owner'), 'ws-elsewhere'), none)
    t.same(await on(user('owner'), 'ws-missing'), none)
    t.same(await on(user('ghost')), none, 'a user id that does not exist')
  })
})

t.test(`effectiveAccessMany on ${ENGINE}: every workspace asked, as effectiveAccess answers it`, async (t) => {
  const app = await build(t, { seed })
  const callers: Caller[] = [...users.map(user), user('ghost'), { kind: 'organization', organizationId: 'org-acme' },
    { kind: 'organization', organizationId: 'org-other' }, { kind: 'team', teamId: 'team-planners' }, { kind: 'team', teamId: 'team-custom' }]
  const workspaceIds = ['ws-app', 'ws-other', 'ws-elsewhere', 'ws-missing']
  for (const caller of callers) {
    const many = await app.teamAccess.effectiveAccessMany({ caller, workspaceIds: [...workspaceIds, 'ws-app'] })
    t.same([...many.keys()], workspaceIds, `${JSON.stringify(caller)}: each id once, in the order asked`)
    for (const workspaceId of workspaceIds) {
      t.same(many.get(workspaceId), await app.teamAccess.effectiveAccess({ caller, workspaceId }), `${JSON.stringify(caller)} on ${workspaceId}`)
    }
  }
  t.same(await app.teamAccess.effectiveAccessMany({ caller: user('owner'), workspaceIds: [] }), new Map(), 'none asked: an empty map')
  t.same((await app.teamAccess.effectiveAccessMany({ caller: user('mixed'), workspaceIds: ['ws-other', 'ws-app'] })).get('ws-app')?.access, 'plan',
    'the rows of one workspace do not leak into another\'s')
})

t.test('strongestPermissions compares each attribute in its own order', async (t) => {
  t.equal(strongestPermissions([]), null)
  t.same(strongestPermissions([
    { runs: 'plan', variables: 'none', 'state-versions': 'read-outputs', 'sentinel-mocks': 'none', 'workspace-locking': true, 'run-tasks': false, 'policy-overrides': false },
    { runs: 'read', variables: 'write', 'state-versions': 'none', 'sentinel-mocks': 'read', 'workspace-locking': false, 'run-tasks': false, 'policy-overrides': true }
  ]), { runs: 'plan', variables: 'write', 'state-versions': 'read-outputs', 'sentinel-mocks': 'read', 'workspace-locking': true, 'run-tasks': false, 'policy-overrides': true })
})

// PostgreSQL only: PGlite is one connection, with no pool to wrap (CI runs the suite on both)
if (ENGINE === 'postgres') {
  t.test('a host\'s own pg pool, wrapped with preparedStatements: the check is prepared once per connection', async (t) => {
    const location = await freshLocation(t)
    if (!('url' in location)) throw new Error('unreachable')
    const pool = new pg.Pool({ connectionString: location.url, max: 1 })
    const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: preparedStatements(pool) }) })
    const app = Fastify()
    await app.register(teamAccess, { database: db, prefix: '/api/v2' })
    t.teardown(async () => { await app.close(); await db.destroy() })
    await applySeedDocument(db, seed)
    // an organization of some size, with its statistics: 300 more workspaces beside ws-app
    await sql`insert into team_access.workspaces (id, organization_id, name, project_id)
      select 'ws-more-' || n, w.organization_id, 'more-' || n, w.project_id from team_access.workspaces w, generate_series(1, 300) n where w.id = 'ws-app'`.execute(db)
    await sql`analyze team_access.workspaces`.execute(db)
    for (let i = 0; i < 10; i++) t.same(await app.teamAccess.effectiveAccess({ caller: user('planner'), workspaceId: 'ws-app' }), { access: 'plan', permissions: IMPLICIT_PERMISSIONS.plan })
    const prepared = await sql<{ statement: string, generic_plans: string }>`select statement, generic_plans from pg_prepared_statements where statement like ${'%grants%ws.id = $%'}`.execute(db)
    t.equal(prepared.rows.length, 1, 'the check is one named statement on the connection, parsed once')
    // PostgreSQL plans a prepared statement's first five calls for their values, then keeps its
    // generic plan if that costs no more: the check's did not when it asked `w.id = any($1)`, and
    // every call was planned afresh
    t.ok(Number(prepared.rows[0]!.generic_plans) > 0, `the check runs its generic plan (${prepared.rows[0]!.generic_plans} of 10 calls), not a new plan each call`)
  })
}
