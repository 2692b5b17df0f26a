import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { bearer, ENGINE, snapshot } from '../helper.js'
import { buildDirectory, CALLERS, directorySeed, teamsClient } from '../teams/directory.js'
import { applySeedDocument } from '../../src/directory/seed.js'
import { tokenDigest } from '../../src/auth/token-digest.js'
import { table } from '../../src/db/tables.js'
import { DirectoryError } from '../../src/index.js'
import { AccessSetError } from '../../src/team-workspaces/access-set.js'

/**
 * The third security review of the directory (issue 30), one test per finding: team managers may
 * not reach what a team grants through its rows; a seed that adopts a team the API made takes it
 * over whole; a regenerate by the token it replaces works or changes nothing; the host's removal is
 * a revocation; the race of a token create with its team's delete is a 404; users outside the
 * organization are not there for a non-owner, and a user's own token events belong to no trail;
 * an organization token makes no token that can do what it cannot; the host's bad arguments are
 * refused with the errors the host API documents.
 */
const JSONAPI = { 'content-type': 'application/vnd.api+json' }

function http (app: FastifyInstance) {
  return {
    get: (url: string, token: string) => app.inject({ url: `/api/v2${url}`, headers: bearer(token) }),
    post: (url: string, token: string, body?: unknown) => app.inject({
      method: 'POST', url: `/api/v2${url}`, headers: { ...bearer(token), ...JSONAPI }, ...(body === undefined ? {} : { payload: JSON.stringify(body) })
    }),
    del: (url: string, token: string) => app.inject({ method: 'DELETE', url: `/api/v2${url}`, headers: bearer(token) })
  }
}

const NOT_FOUND = '{"errors":[{"status":"404","title":"not found"}]}'

t.test(`1. a team's rows count: managers of teams and memberships hand out no more than they hold (${ENGINE})`, async (t) => {
  const app = await buildDirectory(t)
  const teams = teamsClient(t, app)
  const { get, post } = http(app)

  t.test('a manage-membership member adds itself to a team with write on prod: 404, and prod stays out of its reach', async (t) => {
    t.equal((await get('/workspaces/ws-prod/team-access', CALLERS.hr)).statusCode, 404)
    const before = await snapshot(app.db)
    const res = await teams.addMembers('team-writers', ['hr'], CALLERS.hr)
    t.equal(res.statusCode, 404)
    t.equal(res.body, NOT_FOUND, 'the 404 of a team that does not exist, byte for byte')
    t.same(await snapshot(app.db), before, 'nothing changed')
    t.equal((await get('/workspaces/ws-prod/team-access', CALLERS.hr)).statusCode, 404)
    t.equal((await get('/teams/team-writers', CALLERS.hr)).json().data.attributes.permissions['can-update-membership'], false, 'the permission says so')
  })

  t.test('a manage-teams member adds itself to the workspace admins: 404', async (t) => {
    t.equal((await teams.addMembers('team-admins', ['lead'], CALLERS.lead)).statusCode, 404)
    t.equal((await teams.addMembers('team-admins', ['lead'], CALLERS.leadsTeam)).statusCode, 404, 'nor its team token')
    t.equal((await get('/workspaces/ws-prod/team-access', CALLERS.lead)).statusCode, 404)
  })

  t.test('a manage-teams member mints a token for the workspace admins: 404, nothing made', async (t) => {
    const before = await snapshot(app.db)
    t.equal((await post('/teams/team-admins/authentication-token', CALLERS.lead)).statusCode, 404)
    t.equal((await post('/teams/team-admins/authentication-tokens', CALLERS.lead, { data: { attributes: { description: 'ci' } } })).statusCode, 404)
    t.equal((await post('/teams/team-red/authentication-token', CALLERS.leadsTeam)).statusCode, 404, "a custom row counts too (red's on prod)")
    t.same(await snapshot(app.db), before)
    t.equal((await get('/teams/team-admins/authentication-tokens', CALLERS.lead)).statusCode, 404, 'nor lists its tokens')
  })

  t.test('a team whose grants the caller holds stays the caller’s to manage', async (t) => {
    t.equal((await teams.addMembers('team-green', ['hr'], CALLERS.hr)).statusCode, 204, 'a team with no grant')
    t.equal((await post('/teams/team-green/authentication-token', CALLERS.lead)).statusCode, 201)
    // hr's team gets read on dev: blue (read on dev) is then within hr's reach, and write on prod still is not
    await app.db.insertInto('team_workspaces').values({ id: 'tws-membership-dev', organization_id: 'org-acme', team_id: 'team-membership', workspace_id: 'ws-dev', access: 'read', runs: 'read', variables: 'read', state_versions: 'read', sentinel_mocks: 'none', workspace_locking: false, run_tasks: false, policy_overrides: false }).execute()
    await app.db.updateTable('teams').set({ visibility: 'organization' }).where('id', '=', 'team-blue').execute()
    t.equal((await teams.addMembers('team-blue', ['hr'], CALLERS.hr)).statusCode, 204, 'read on dev held, read on dev handed')
    t.equal((await teams.addMembers('team-writers', ['hr'], CALLERS.hr)).statusCode, 404, 'write on prod is not held')
    t.equal((await post('/teams/team-red/authentication-token', CALLERS.workspaceAdmin)).statusCode, 404, 'an admin on prod without manage-teams manages no team')
    // a manage-teams member who is also admin on prod may hand out what admin on prod covers
    await app.db.insertInto('team_memberships').values({ team_id: 'team-admins', user_id: 'user-lead', managed_by: 'api' }).execute()
    t.equal((await post('/teams/team-red/authentication-token', CALLERS.lead)).statusCode, 201, 'manage-teams and admin on prod: red’s custom row is covered')
    t.equal((await post('/teams/team-writers/authentication-tokens', CALLERS.lead, { data: { attributes: { description: 'ci' } } })).statusCode, 201, 'and writers’ write')
  })

  t.test('write held on a workspace covers no admin row there (the level compared by rank, admin the highest)', async (t) => {
    // hr's team holds write on dev (its read row above, raised); a team visible to all holds admin on dev
    await app.db.updateTable('team_workspaces').set({ access: 'write', runs: 'apply', variables: 'write', state_versions: 'write', sentinel_mocks: 'read', workspace_locking: true })
      .where('id', '=', 'tws-membership-dev').execute()
    await app.db.insertInto('teams').values({ id: 'team-dev-admins', organization_id: 'org-acme', name: 'dev-admins', visibility: 'organization' }).execute()
    await app.db.insertInto('team_workspaces').values({ id: 'tws-dev-admins', organization_id: 'org-acme', team_id: 'team-dev-admins', workspace_id: 'ws-dev', access: 'admin', runs: 'apply', variables: 'write', state_versions: 'write', sentinel_mocks: 'read', workspace_locking: true, run_tasks: true, policy_overrides: false }).execute()
    t.equal((await teams.addMembers('team-dev-admins', ['hr'], CALLERS.hr)).statusCode, 404, 'admin on dev is more than write')
    await app.db.updateTable('team_workspaces').set({ access: 'write', run_tasks: false }).where('id', '=', 'tws-dev-admins').execute()
    t.equal((await teams.addMembers('team-dev-admins', ['hr'], CALLERS.hr)).statusCode, 204, 'write on dev is held')
  })
})

t.test(`2. a seed that adopts a team the API made takes it over whole (${ENGINE})`, async (t) => {
  const app = await buildDirectory(t)
  const teams = teamsClient(t, app)
  const { get, post } = http(app)

  const created = await teams.create('acme', { name: 'platform', visibility: 'secret' }, CALLERS.lead)
  t.equal(created.statusCode, 201)
  const platform = created.json().data.id as string
  t.equal((await teams.addMembers(platform, ['lead'], CALLERS.lead)).statusCode, 204)
  const minted = await post(`/teams/${platform}/authentication-token`, CALLERS.lead)
  t.equal(minted.statusCode, 201)
  const squatterToken = minted.json().data.attributes.token as string

  const seed = directorySeed()
  seed.organizations[0].teams.push({ name: 'platform', 'organization-access': { 'manage-workspaces': true }, members: ['owner'] })
  const dryRun = await applySeedDocument(app.db, seed, { dryRun: true })
  t.ok(dryRun.warnings.some((w) => /team acme\/platform/.test(w)), 'a dry run says so too')
  t.equal((await get(`/teams/${platform}`, squatterToken)).statusCode, 200, 'and changes nothing')

  const summary = await applySeedDocument(app.db, seed)
  const warning = summary.warnings.find((w) => w.includes('acme/platform'))
  t.ok(warning, 'the apply warns, naming the team')
  t.match(warning, /made through the API.*1 membership and 1 token/)
  t.ok(summary.changed.teams.includes('acme/platform'))
  t.same(summary.removed.memberships, ['acme/platform: lead'])
  t.same(summary.removed.tokens, ['team acme/platform'])

  t.equal((await get('/workspaces/ws-prod/team-access', squatterToken)).statusCode, 401, "the squatter's token is gone")
  t.equal((await get('/workspaces/ws-prod/team-access', CALLERS.lead)).statusCode, 404, 'and its membership: no admin through platform')
  const members = await app.db.selectFrom('team_memberships').select(['user_id', 'managed_by']).where('team_id', '=', platform).execute()
  t.same(members, [{ user_id: 'user-owner', managed_by: 'seed' }], 'only what the seed declares')
  const revoked = await app.db.selectFrom('revoked_tokens').select('digest').where('digest', '=', tokenDigest(squatterToken)).execute()
  t.equal(revoked.length, 1, 'the removed secret is revoked for good')
  const events = await app.db.selectFrom('audit_events').select(['resource_type', 'action', 'accessor_description'])
    .where('accessor_description', '=', 'seed').where('action', 'in', ['remove_member', 'destroy']).execute()
  t.same(events.map((e) => `${e.resource_type} ${e.action}`).sort(), ['authentication-token destroy', 'team remove_member'], 'with their events, System seed')

  const again = await applySeedDocument(app.db, seed)
  t.same(again.warnings.filter((w) => /platform|adopt|now the seed's/.test(w)), [], 'adopted once: the next apply says nothing of it')
  t.same(again.removed.memberships, [])
  // an API member added later is the API's, as on any seed team (when the caller holds the team's grants)
  t.equal((await teams.addMembers(platform, ['lead'], CALLERS.lead)).statusCode, 404, 'a manage-teams member cannot join a manage-workspaces team')
})

t.test(`3. a token regenerating its own team's token: 201 and a new token, never a half-applied revocation (${ENGINE})`, async (t) => {
  const app = await buildDirectory(t)
  const { get, post } = http(app)
  const first = await post('/teams/team-leads/authentication-token', CALLERS.owner)
  t.equal(first.statusCode, 201)
  const x = first.json().data.attributes.token as string
  const before = await app.db.selectFrom('audit_events').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()

  const res = await post('/teams/team-leads/authentication-token', x)
  t.equal(res.statusCode, 201, 'the token regenerates its own team’s token')
  const y = res.json().data.attributes.token as string
  t.equal((await get('/teams/team-leads', x)).statusCode, 401, 'the old one is revoked')
  t.equal((await get('/teams/team-leads', y)).statusCode, 200, 'the new one works')
  const events = await app.db.selectFrom('audit_events').select(['action']).where('resource_type', '=', 'authentication-token')
    .orderBy('occurred_at').execute()
  t.same(events.slice(-2).map((e) => e.action).sort(), ['create', 'destroy'], 'a destroy and a create')
  const after = await app.db.selectFrom('audit_events').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()
  t.equal(after.n - before.n, 2)
})

t.test(`4. a token the host removed stays revoked: the next seed apply leaves it out and warns (${ENGINE})`, async (t) => {
  const app = await buildDirectory(t)
  const { get } = http(app)
  const { id } = await app.db.selectFrom('tokens').select('id').where('digest', '=', tokenDigest(CALLERS.lead)).executeTakeFirstOrThrow()
  await app.teamAccess.directory.removeToken(id)
  t.equal((await get('/teams/team-leads', CALLERS.lead)).statusCode, 401)
  const summary = await applySeedDocument(app.db, directorySeed())
  t.equal((await get('/teams/team-leads', CALLERS.lead)).statusCode, 401, 'not brought back by the seed (every restart applies it)')
  t.match(summary.warnings, [/^token of user lead \(.*\): revoked, left out/], 'the apply warns, naming the owner')
  t.notMatch(JSON.stringify(summary), CALLERS.lead, 'never the secret')
  await t.rejects(app.teamAccess.directory.createToken({ userId: 'user-lead' }, { secret: CALLERS.lead }), { code: 'invalid' }, 'nor can the host bring it back')

  t.test('a token the host removes with its team or user is revoked too', async (t) => {
    await app.teamAccess.directory.removeUser('user-hr')
    const revoked = await app.db.selectFrom('revoked_tokens').select('digest').where('digest', '=', tokenDigest(CALLERS.hr)).execute()
    t.equal(revoked.length, 1)
  })
})

t.test(`5. token creates racing their team's delete answer 201 or 404, never 500 (${ENGINE})`, async (t) => {
  const app = await buildDirectory(t)
  const { post, del } = http(app)

  t.test('a create that waits for a delete that then commits: 404', async (t) => {
    await app.db.insertInto('teams').values({ id: 'team-doomed', organization_id: 'org-acme', name: 'doomed', visibility: 'secret', managed_by: 'api' }).execute()
    let release!: () => void
    const held = new Promise<void>((resolve) => { release = resolve })
    let deleted!: () => void
    const isDeleted = new Promise<void>((resolve) => { deleted = resolve })
    const deleting = app.db.transaction().execute(async (trx) => {
      await sql`delete from ${table.teams} where id = 'team-doomed'`.execute(trx)
      deleted()
      await held
    })
    await isDeleted
    const create = post('/teams/team-doomed/authentication-tokens', CALLERS.owner, { data: { attributes: { description: 'late' } } })
    await sleep(300)
    release()
    await deleting
    const res = await create
    t.equal(res.statusCode, 404)
    t.equal(res.body, NOT_FOUND)
  })

  t.test('8 creates against a delete, 9 rounds', async (t) => {
    const statuses = new Map<number, number>()
    for (let round = 0; round < 9; round++) {
      const id = `team-race${round}`
      await app.db.insertInto('teams').values({ id, organization_id: 'org-acme', name: `race${round}`, visibility: 'secret', managed_by: 'api' }).execute()
      const creates = Array.from({ length: 8 }, (_, i) => post(`/teams/${id}/authentication-tokens`, CALLERS.owner, { data: { attributes: { description: `d${i}` } } }))
      const answers = await Promise.all([...creates, del(`/teams/${id}`, CALLERS.owner)])
      for (const res of answers) statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
    }
    t.same([...statuses.keys()].filter((s) => ![201, 204, 404].includes(s)), [], `only 201, 204 and 404: ${JSON.stringify([...statuses])}`)
  })
})

t.test(`6. users outside the organization are not there for a non-owner; a user's own token events belong to no trail (${ENGINE})`, async (t) => {
  const app = await buildDirectory(t)
  const teams = teamsClient(t, app)
  const { post } = http(app)

  t.test('an outsider is refused exactly like an unknown name', async (t) => {
    const before = await snapshot(app.db)
    const both = await teams.addMembers('team-green', ['globex-user', 'nosuchuser'], CALLERS.hr)
    t.equal(both.statusCode, 422)
    const unknown = await teams.addMembers('team-green', ['nosuchuser'], CALLERS.hr)
    const outsider = await teams.addMembers('team-green', ['globex-user'], CALLERS.hr)
    t.equal(outsider.statusCode, 422)
    t.equal(outsider.body, unknown.body.replaceAll('nosuchuser', 'globex-user'), 'the same answer as for a name that names nobody')
    t.match(both.body, /globex-user/)
    t.equal((await teams.removeMembers('team-green', ['globex-user'], CALLERS.hr)).body, (await teams.removeMembers('team-green', ['nosuchuser'], CALLERS.hr)).body.replaceAll('nosuchuser', 'globex-user'), 'removal too')
    t.equal((await teams.addMembers('team-green', ['globex-user'], CALLERS.lead)).statusCode, 422, 'a manage-teams member neither')
    t.same(await snapshot(app.db), before)
    t.equal((await teams.addMembers('team-green', ['writer'], CALLERS.hr)).statusCode, 204, 'a member of the organization is found')
  })

  t.test('an owner may bring a user in; that user’s own tokens write nothing to the organization’s trail', async (t) => {
    t.equal((await teams.addMembers('team-green', ['globex-user'], CALLERS.owner)).statusCode, 204)
    const made = await post('/users/user-globex/authentication-tokens', CALLERS.otherOrganization, { data: { attributes: { description: 'mine' } } })
    t.equal(made.statusCode, 201)
    const events = await app.db.selectFrom('audit_events').selectAll().where('resource_type', '=', 'authentication-token').execute()
    t.same(events, [], 'no organization records a user token event')
  })
})

t.test(`7. an organization token makes no token that can do what it cannot; the host's bad arguments are refused (${ENGINE})`, async (t) => {
  const app = await buildDirectory(t)
  const { post, get } = http(app)

  t.test('the organization token may not make a token for the owners team (which manages organization tokens)', async (t) => {
    t.equal((await post('/organizations/acme/authentication-token', CALLERS.organization)).statusCode, 404, 'it may not make its own kind')
    const before = await snapshot(app.db)
    t.equal((await post('/teams/team-owners/authentication-token', CALLERS.organization)).statusCode, 404)
    t.equal((await post('/teams/team-owners/authentication-tokens', CALLERS.organization, { data: { attributes: { description: 'x' } } })).statusCode, 404)
    t.equal((await post('/teams/team-owners/relationships/users', CALLERS.organization, { data: [{ type: 'users', id: 'writer' }] })).statusCode, 404, 'nor add a member there')
    t.same(await snapshot(app.db), before)
    t.equal((await post('/teams/team-writers/authentication-token', CALLERS.organization)).statusCode, 201, 'other teams’ tokens it may make')
    t.equal((await post('/teams/team-owners/authentication-token', CALLERS.owner)).statusCode, 201, 'an owner through the owners team may')
    t.equal((await get('/teams/team-owners', CALLERS.organization)).statusCode, 200, 'and it still reads the team')
  })

  t.test('the host API refuses bad arguments with its own errors, never a raw one', async (t) => {
    const caller = { kind: 'user' as const, userId: 'user-owner' }
    const host = app.teamAccess
    const invalid = (Kind: typeof DirectoryError | typeof AccessSetError) => ({ name: Kind.name, code: 'invalid' })
    await t.rejects(host.explain({ caller, teamId: 'team-writers', page: { number: 0, size: 20 } }), invalid(DirectoryError))
    await t.rejects(host.explain({ caller, teamId: 'team-writers', page: { number: 1, size: 1e9 } }), invalid(DirectoryError))
    await t.rejects(host.explain({ caller, workspaceId: 42 } as any), invalid(DirectoryError))
    await t.rejects(host.explain({ caller: { kind: 'robot' }, workspaceId: 'ws-prod' } as any), invalid(DirectoryError))
    await t.rejects(host.explain(null as any), invalid(DirectoryError))
    await t.rejects(host.setWorkspaceAccess({ caller, workspaceId: 42, entries: [] } as any), invalid(AccessSetError))
    await t.rejects(host.setWorkspaceAccess({ caller, workspaceId: 'ws-prod', entries: 'all' } as any), invalid(AccessSetError))
    await t.rejects(host.setWorkspaceAccess({ caller: { kind: 'user', userId: 7 }, workspaceId: 'ws-prod', entries: [] } as any), invalid(AccessSetError))
    await t.rejects(host.effectiveAccess({ caller, workspaceId: 42 } as any), invalid(DirectoryError))
    await t.rejects(host.effectiveAccessMany({ caller, workspaceIds: 'ws-prod' } as any), invalid(DirectoryError))
    await t.rejects(host.effectiveAccess({ caller: undefined, workspaceId: 'ws-prod' } as any), invalid(DirectoryError))
    t.same((await host.effectiveAccess({ caller, workspaceId: 'ws-prod' })).access, 'admin', 'good arguments still answer')
    t.equal((await host.explain({ caller, teamId: 'team-writers', page: { number: 1, size: 20 } }))?.total, 1)
  })
})

t.test(`what a second look found (${ENGINE})`, async (t) => {
  const app = await buildDirectory(t)
  const teams = teamsClient(t, app)
  const { get, post } = http(app)

  t.test('a seed grant naming a team the API made, without declaring it, is refused: nobody squats a name the seed grants to', async (t) => {
    const made = await teams.create('acme', { name: 'deployers' }, CALLERS.lead)
    t.equal(made.statusCode, 201)
    t.equal((await teams.addMembers(made.json().data.id, ['lead'], CALLERS.lead)).statusCode, 204)
    const seed = directorySeed()
    seed.organizations[0]['team-access'].push({ team: 'deployers', workspace: 'prod', access: 'admin' })
    await t.rejects(applySeedDocument(app.db, seed), { message: /team "deployers" was made through the API: declare it under "teams"/ })
    t.equal((await get('/workspaces/ws-prod/team-access', CALLERS.lead)).statusCode, 404, 'the squatter holds nothing on prod')
  })

  t.test('a token made by an expiring token expires no later', async (t) => {
    const soon = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, '.000Z')
    const first = await post('/teams/team-leads/authentication-tokens', CALLERS.owner, { data: { attributes: { description: 'short', 'expired-at': soon } } })
    t.equal(first.statusCode, 201)
    const second = await post('/teams/team-leads/authentication-tokens', first.json().data.attributes.token, { data: { attributes: { description: 'forever' } } })
    t.equal(second.statusCode, 201)
    t.equal(second.json().data.attributes['expired-at'], soon, 'capped at its maker’s expiry')
    const later = new Date(Date.now() + 7_200_000).toISOString()
    const third = await post('/teams/team-leads/authentication-token', first.json().data.attributes.token, { data: { attributes: { 'expired-at': later } } })
    t.equal(third.json().data.attributes['expired-at'], soon, 'a regenerate too, though it revokes nothing of its maker')
  })

  t.test('a seed adopting an owners team with members declares them, or fails whole', async (t) => {
    const seed = directorySeed()
    await app.db.updateTable('teams').set({ managed_by: 'host' }).where('id', '=', 'team-owners').execute()
    seed.organizations[0].teams[0].members = []
    const before = await snapshot(app.db)
    await t.rejects(applySeedDocument(app.db, seed), { message: /the owners team "owners" was made by the host and has members/ })
    t.same(await snapshot(app.db), before)
  })

  t.test('a team create racing its organization’s removal: never a 500', async (t) => {
    const org = await app.teamAccess.directory.createOrganization({ name: 'fleeting' })
    await app.teamAccess.directory.createToken({ organizationId: org.id }, { secret: 'fleeting-org-token' })
    let release!: () => void
    const held = new Promise<void>((resolve) => { release = resolve })
    let deleted!: () => void
    const isDeleted = new Promise<void>((resolve) => { deleted = resolve })
    const deleting = app.db.transaction().execute(async (trx) => {
      await sql`delete from ${table.tokens} where organization_id = ${org.id}`.execute(trx)
      await sql`delete from ${table.organizations} where id = ${org.id}`.execute(trx)
      deleted()
      await held
    })
    await isDeleted
    const create = teams.create('fleeting', { name: 'late' }, 'fleeting-org-token')
    await sleep(300)
    release()
    await deleting
    t.ok([401, 404].includes((await create).statusCode), `401 or 404 (${(await create).statusCode})`)
  })
})
