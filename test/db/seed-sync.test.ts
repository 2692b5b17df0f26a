import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { applySeedDocument } from '../../src/directory/seed.js'
import { tokenDigest } from '../../src/auth/token-digest.js'
import { bearer, build, ENGINE, snapshot } from '../helper.js'

/**
 * DESIGN §9.1: a seed is the whole truth for what it manages. What a document no longer declares
 * is removed — with what hangs on it, each removed team-access row with its `remove_team` event —
 * and counts from the very next request (§9.2); rows of the API or the host, and organizations
 * the document does not name, are never touched. A dry run is the same apply, rolled back.
 */
const base = () => ({
  users: [
    { id: 'user-ann', username: 'ann', tokens: ['ann-token-one'] },
    { id: 'user-ben', username: 'ben', tokens: ['ben-token-one'] }
  ],
  organizations: [{
    id: 'org-sync',
    name: 'sync',
    tokens: ['sync-org-token'],
    teams: [
      { id: 'team-s-owners', name: 'owners', owners: true, members: ['ann'], tokens: ['sync-owners-token'] },
      { id: 'team-s-red', name: 'red', members: ['ben'], tokens: ['sync-red-token'] },
      { id: 'team-s-blue', name: 'blue', members: ['ben'] }
    ],
    workspaces: [{ id: 'ws-s-prod', name: 'prod' }, { id: 'ws-s-dev', name: 'dev' }],
    'team-access': [
      { team: 'red', workspace: 'prod', access: 'write' },
      { team: 'red', workspace: 'dev', access: 'read' },
      { team: 'blue', workspace: 'dev', access: 'plan' }
    ] as Array<{ team: string, workspace: string, access: string }>
  }, {
    id: 'org-other',
    name: 'other',
    tokens: ['other-org-token'],
    teams: [{ id: 'team-o-x', name: 'x', members: ['ben'], tokens: ['other-x-token'] }],
    workspaces: [{ id: 'ws-o-w', name: 'w' }],
    'team-access': [{ team: 'x', workspace: 'w', access: 'read' }] as Array<{ team: string, workspace: string, access: string }>
  }]
})
type Doc = ReturnType<typeof base>
const edit = (change: (doc: Doc) => void): Doc => { const doc = base(); change(doc); return doc }
const withoutTeam = (doc: Doc, name: string) => {
  const org = doc.organizations[0]!
  org.teams = org.teams.filter((x) => x.name !== name)
  org['team-access'] = org['team-access'].filter((a) => a.team !== name)
}

const get = (app: FastifyInstance, token: string, url = '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-s-prod') =>
  app.inject({ url, headers: bearer(token) })

async function removeEvents (app: FastifyInstance) {
  const res = await get(app, 'sync-org-token', '/api/v2/organization/audit-trail')
  if (res.statusCode !== 200) throw new Error(`audit trail: ${res.statusCode}`)
  return (res.json().data as any[]).filter((e) => e.resource.action === 'remove_team')
}

/** The rows that carry the directory, and the audit trail and the seed's remembered grants: all a seed may write. */
async function everything (app: FastifyInstance) {
  const rows = await snapshot(app.db)
  rows.audit_events = (await app.db.selectFrom('audit_events').selectAll().execute()).map((r) => JSON.stringify(r)).sort()
  rows.seed_grants = (await app.db.selectFrom('seed_grants').selectAll().execute()).map((r) => JSON.stringify(r)).sort()
  return rows
}

t.test(`a seed removes what it no longer declares (${ENGINE})`, async (t) => {
  t.test('a token replaced in the seed: the old one 401 on its next request, even one used a moment before; the new one 200', async (t) => {
    const app = await build(t, { seed: base() })
    t.equal((await get(app, 'ben-token-one')).statusCode, 200, 'the old token works, and is remembered')
    t.equal((await get(app, 'sync-red-token')).statusCode, 200, 'so does the team token')
    const summary = await applySeedDocument(app.db, edit((doc) => {
      doc.users[1]!.tokens = ['ben-token-two']
      doc.organizations[0]!.teams[1]!.tokens = ['sync-red-token-2']
    }))
    t.same(summary.removed.tokens, ['user ben', 'team sync/red'], 'named by kind and owner')
    t.same(summary.created.tokens, ['user ben', 'team sync/red'])
    t.notOk(JSON.stringify(summary).includes('ben-token') || JSON.stringify(summary).includes(tokenDigest('ben-token-one')), 'no secret, no digest in the summary')
    t.equal((await get(app, 'ben-token-one')).statusCode, 401, 'the replaced user token: 401 at once')
    t.equal((await get(app, 'sync-red-token')).statusCode, 401, 'the replaced team token: 401 at once')
    t.equal((await get(app, 'ben-token-one')).statusCode, 401, 'and after')
    t.equal((await get(app, 'ben-token-two')).statusCode, 200, 'the new user token: 200')
    t.equal((await get(app, 'sync-red-token-2')).statusCode, 200, 'the new team token: 200')
  })

  t.test('a team removed: its rows, memberships and tokens gone, one remove_team event per row, its members’ grants gone at once', async (t) => {
    const app = await build(t, { seed: base() })
    const seen = await get(app, 'ben-token-one')
    t.equal(seen.statusCode, 200)
    t.same(seen.json().data.map((r: any) => r.relationships.team.data.id), ['team-s-red'], 'ben sees prod through red')
    t.equal((await removeEvents(app)).length, 0)

    const summary = await applySeedDocument(app.db, edit((doc) => withoutTeam(doc, 'red')))
    t.same(summary.removed, {
      organizations: [],
      users: [],
      teams: ['sync/red'],
      memberships: ['sync/red: ben'],
      workspaces: [],
      tokens: ['team sync/red'],
      teamAccess: ['red on sync/dev', 'red on sync/prod'],
      projects: [],
      projectAccess: []
    })
    t.same(await app.db.selectFrom('teams').select('id').where('id', '=', 'team-s-red').execute(), [])
    t.same(await app.db.selectFrom('team_memberships').select('user_id').where('team_id', '=', 'team-s-red').execute(), [])
    t.same(await app.db.selectFrom('tokens').select('id').where('team_id', '=', 'team-s-red').execute(), [])
    t.same(await app.db.selectFrom('team_workspaces').select('id').where('team_id', '=', 'team-s-red').execute(), [])

    const events = await removeEvents(app)
    t.equal(events.length, 2, 'one event per removed row')
    t.same(events.map((e) => e.resource.id).sort(), ['ws-s-dev', 'ws-s-prod'])
    for (const e of events) {
      t.match(e, {
        version: '0',
        type: 'Resource',
        auth: { accessor_id: null, description: 'seed', type: 'System', organization_id: 'org-sync' },
        resource: { type: 'workspace', action: 'remove_team', meta: { team: 'red' } }
      }, 'the §8 shape, by the system')
      t.notOk('permissions' in e.resource.meta, 'a removal carries no permissions')
    }
    t.equal(new Set(events.map((e) => e.request.id)).size, 1, 'one application, one request id')

    t.equal((await get(app, 'ben-token-one')).statusCode, 404, 'ben’s grant on prod is gone on the next request')
    t.equal((await get(app, 'sync-red-token')).statusCode, 401, 'the team’s token is gone')
    t.equal((await get(app, 'ben-token-one', '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-s-dev')).statusCode, 200, 'ben keeps dev through blue')

    const again = await applySeedDocument(app.db, edit((doc) => withoutTeam(doc, 'red')))
    t.same(Object.values(again.removed).flat(), [], 'applying it again removes nothing more')
    t.equal((await removeEvents(app)).length, 2, 'and records nothing more')

    t.test('a team declared again gets its entries again: its remembered grants went with it', async (t) => {
      const back = await applySeedDocument(app.db, base())
      t.same(back.created.teams, ['sync/red'])
      t.same(back.created.teamAccess, ['red on sync/prod', 'red on sync/dev'])
      t.equal((await get(app, 'ben-token-one')).json().data.length, 1, 'ben sees prod again')
    })
  })

  t.test('a workspace removed: its team-access rows gone, each with its event', async (t) => {
    const app = await build(t, { seed: base() })
    const summary = await applySeedDocument(app.db, edit((doc) => {
      const org = doc.organizations[0]!
      org.workspaces = org.workspaces.filter((w) => w.name !== 'dev')
      org['team-access'] = org['team-access'].filter((a) => a.workspace !== 'dev')
    }))
    t.same(summary.removed.workspaces, ['sync/dev'])
    t.same(summary.removed.teamAccess, ['blue on sync/dev', 'red on sync/dev'])
    t.same([summary.removed.teams, summary.removed.memberships, summary.removed.tokens], [[], [], []], 'its teams stay')
    t.same(await app.db.selectFrom('workspaces').select('id').where('id', '=', 'ws-s-dev').execute(), [])
    t.same(await app.db.selectFrom('team_workspaces').select('id').where('workspace_id', '=', 'ws-s-dev').execute(), [])
    const events = await removeEvents(app)
    t.same(events.map((e) => [e.resource.id, e.resource.meta.team]).sort(), [['ws-s-dev', 'blue'], ['ws-s-dev', 'red']])
    t.equal((await get(app, 'ben-token-one', '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-s-dev')).statusCode, 404)
    t.equal((await get(app, 'ben-token-one')).statusCode, 200, 'prod is untouched')
  })

  t.test('a user removed: memberships and tokens gone, in every organization', async (t) => {
    const app = await build(t, { seed: base() })
    t.equal((await get(app, 'ben-token-one')).statusCode, 200)
    const summary = await applySeedDocument(app.db, edit((doc) => {
      doc.users = doc.users.filter((u) => u.username !== 'ben')
      for (const org of doc.organizations) for (const team of org.teams) team.members = team.members.filter((m) => m !== 'ben')
    }))
    t.same(summary.removed.users, ['ben'])
    t.same(summary.removed.memberships, ['other/x: ben', 'sync/blue: ben', 'sync/red: ben'])
    t.same(summary.removed.tokens, ['user ben'])
    t.same(summary.removed.teamAccess, [], 'a user takes no team access with it')
    t.same(await app.db.selectFrom('users').select('id').where('id', '=', 'user-ben').execute(), [])
    t.same(await app.db.selectFrom('team_memberships').select('team_id').where('user_id', '=', 'user-ben').execute(), [])
    t.same(await app.db.selectFrom('tokens').select('id').where('user_id', '=', 'user-ben').execute(), [])
    t.equal((await get(app, 'ben-token-one')).statusCode, 401, 'the removed user’s token: 401 on its next request')

    t.test('a member naming a user the seed removed is an error that changes nothing', async (t) => {
      const before = await everything(app)
      const doc = edit((doc) => { doc.users = doc.users.filter((u) => u.username !== 'ben') })
      await t.rejects(applySeedDocument(app.db, doc), /teams\[1\] "red" › members\[0\] "ben": no user named "ben"/)
      t.same(await everything(app), before)
    })
  })

  t.test('an organization the document does not name is untouched', async (t) => {
    const app = await build(t, { seed: base() })
    const ofOther = async () => {
      const rows = await snapshot(app.db)
      return {
        teams: rows.teams!.filter((r) => String(r).includes('org-other')),
        workspaces: rows.workspaces!.filter((r) => String(r).includes('org-other')),
        team_workspaces: rows.team_workspaces!.filter((r) => String(r).includes('org-other')),
        memberships: rows.team_memberships!.filter((r) => String(r).includes('team-o-')),
        tokens: await app.db.selectFrom('tokens').selectAll().where((eb) => eb.or([eb('organization_id', '=', 'org-other'), eb('team_id', '=', 'team-o-x')])).orderBy('id').execute(),
        organization: await app.db.selectFrom('organizations').selectAll().where('id', '=', 'org-other').execute()
      }
    }
    const before = await ofOther()
    t.equal(before.tokens.length, 2)
    const summary = await applySeedDocument(app.db, edit((doc) => { doc.organizations.pop() }))
    t.same(Object.values(summary.removed).flat(), [], 'nothing removed')
    t.same(await ofOther(), before, 'its teams, workspaces, rows, memberships and tokens as they were')
    t.equal((await get(app, 'other-org-token', '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-o-w')).statusCode, 200)
  })

  t.test('rows of the API or the host survive a seed that does not declare them; a row named is adopted', async (t) => {
    const app = await build(t, { seed: base() })
    const db = app.db
    await db.insertInto('users').values({ id: 'user-hal', username: 'hal', managed_by: 'host' }).execute()
    await db.insertInto('tokens').values({ id: 'at-hal', kind: 'user', organization_id: null, team_id: null, user_id: 'user-hal', digest: tokenDigest('hal-host-token'), expires_at: null, managed_by: 'host' }).execute()
    await db.insertInto('teams').values({ id: 'team-s-api', organization_id: 'org-sync', name: 'api-made', managed_by: 'api' }).execute()
    await db.insertInto('workspaces').values({ id: 'ws-s-host', organization_id: 'org-sync', name: 'host-made', managed_by: 'host' }).execute()
    await db.insertInto('team_memberships').values([
      { team_id: 'team-s-api', user_id: 'user-ben', managed_by: 'api' },
      { team_id: 'team-s-red', user_id: 'user-ann', managed_by: 'api' },
      { team_id: 'team-s-red', user_id: 'user-hal', managed_by: 'host' }
    ]).execute()
    await db.insertInto('tokens').values({ id: 'at-api-red', kind: 'team', organization_id: null, team_id: 'team-s-red', user_id: null, digest: tokenDigest('red-api-token'), expires_at: null, managed_by: 'api' }).execute()
    await db.insertInto('tokens').values({ id: 'at-api-ben', kind: 'user', organization_id: null, team_id: null, user_id: 'user-ben', digest: tokenDigest('ben-api-token'), expires_at: null, managed_by: 'api' }).execute()
    await db.insertInto('team_workspaces').values({ id: 'tws-s-api', organization_id: 'org-sync', team_id: 'team-s-api', workspace_id: 'ws-s-host', access: 'read', runs: 'read', variables: 'read', state_versions: 'read', sentinel_mocks: 'none', workspace_locking: false, run_tasks: false }).execute()
    const theirs = async () => ({
      users: await db.selectFrom('users').selectAll().where('id', '=', 'user-hal').execute(),
      teams: await db.selectFrom('teams').selectAll().where('id', '=', 'team-s-api').execute(),
      workspaces: await db.selectFrom('workspaces').selectAll().where('id', '=', 'ws-s-host').execute(),
      memberships: await db.selectFrom('team_memberships').selectAll().where('managed_by', '!=', 'seed').orderBy('team_id').orderBy('user_id').execute(),
      tokens: await db.selectFrom('tokens').selectAll().where('managed_by', '!=', 'seed').orderBy('id').execute(),
      rows: await db.selectFrom('team_workspaces').selectAll().where('id', '=', 'tws-s-api').execute()
    })
    const before = await theirs()
    t.equal(before.memberships.length, 3)
    t.equal(before.tokens.length, 3)

    // a seed that declares none of them, and drops every seed token of the subjects that hold theirs
    const summary = await applySeedDocument(db, edit((doc) => {
      doc.users[1]!.tokens = []
      doc.organizations[0]!.teams[1]!.tokens = []
    }))
    t.same(summary.removed.tokens, ['user ben', 'team sync/red'], 'only the seed’s own tokens')
    t.same([summary.removed.users, summary.removed.teams, summary.removed.workspaces, summary.removed.memberships, summary.removed.teamAccess], [[], [], [], [], []])
    t.same(await theirs(), before, 'every row of the API or the host as it was')
    t.equal((await get(app, 'ben-api-token')).statusCode, 200, 'ben’s API token still answers')

    t.test('a row the document names becomes the seed’s, and is removed when it no longer does', async (t) => {
      const adopted = await applySeedDocument(db, edit((doc) => { doc.users.push({ id: 'user-hal', username: 'hal', tokens: [] }) }))
      t.same(adopted.changed.users, ['hal'], 'adopted: a change')
      t.same(adopted.removed.tokens, ['user hal'], 'adopted whole: the token the document does not declare on it goes')
      t.same(adopted.warnings.filter((w) => !w.startsWith('workspace ids')), [
        'token of user ben (users[1] "ben" › tokens[0]): revoked, left out — remove it from the document',
        "user hal: made by the host, now the seed's — 1 token it does not declare removed",
        'token of team sync/red (organizations[0] "sync" › teams[1] "red" › tokens[0]): revoked, left out — remove it from the document'
      ], 'and the apply says so (the tokens the document dropped before are revoked for good: it declares them again in vain)')
      t.equal((await db.selectFrom('users').select('managed_by').where('id', '=', 'user-hal').executeTakeFirstOrThrow()).managed_by, 'seed')
      const dropped = await applySeedDocument(db, base())
      t.same(dropped.removed.users, ['hal'])
      t.same(dropped.removed.memberships, ['sync/red: hal'], 'its memberships go with it, whoever made them')
      t.same(dropped.removed.tokens, [], 'its token went when it was adopted')
    })
  })

  t.test('the dry run reports exactly what the apply then does, and changes nothing', async (t) => {
    const app = await build(t, { seed: base() })
    t.equal((await get(app, 'ben-token-one')).statusCode, 200)
    const next = edit((doc) => {
      withoutTeam(doc, 'blue')
      doc.users[1]!.tokens = ['ben-token-two']
      doc.users.push({ id: 'user-cy', username: 'cy', tokens: ['cy-token-one'] })
      const org = doc.organizations[0]!
      org.teams[1]!.members = ['ben', 'cy']
      org.teams.push({ id: 'team-s-green', name: 'green', members: ['cy'] } as any)
      org.workspaces = [{ id: 'ws-s-prod', name: 'production' }]
      org['team-access'] = [{ team: 'red', workspace: 'production', access: 'write' }, { team: 'green', workspace: 'production', access: 'read' }]
    })
    const before = await everything(app)
    const plan = await applySeedDocument(app.db, next, { dryRun: true })
    t.same(await everything(app), before, 'nothing changed: no row, no event, no remembered grant')
    t.equal((await get(app, 'ben-token-one')).statusCode, 200, 'the token it would remove still answers')
    t.equal(plan.dryRun, true)
    t.same(plan.removed, {
      organizations: [],
      users: [],
      teams: ['sync/blue'],
      memberships: ['sync/blue: ben'],
      workspaces: ['sync/dev'],
      tokens: ['user ben'],
      teamAccess: ['blue on sync/dev', 'red on sync/dev'],
      projects: [],
      projectAccess: []
    })
    t.same(plan.created, {
      organizations: [],
      users: ['cy'],
      teams: ['sync/green'],
      memberships: ['sync/red: cy', 'sync/green: cy'],
      workspaces: [],
      tokens: ['user ben', 'user cy'],
      teamAccess: ['green on sync/production'],
      projects: [],
      projectAccess: []
    })
    t.same(plan.changed.workspaces, ['sync/production'], 'a rename is a change')

    const applied = await applySeedDocument(app.db, next)
    t.same({ ...applied, dryRun: true }, plan, 'the apply did exactly what the plan said')
    t.equal((await removeEvents(app)).length, plan.removed.teamAccess.length, 'one event per row the plan named')
    t.equal((await get(app, 'ben-token-one')).statusCode, 401)

    const nothing = await applySeedDocument(app.db, next, { dryRun: true })
    t.same([nothing.created, nothing.changed, nothing.removed].map((c) => Object.values(c).flat()), [[], [], []], 'the same document again: nothing to do')
  })

  t.test('a document that breaks a rule fails whole, its removals included', async (t) => {
    const app = await build(t, { seed: base() })
    const before = await everything(app)
    const broken = edit((doc) => {
      withoutTeam(doc, 'red')
      doc.organizations[0]!['team-access'].push({ team: 'nobody', workspace: 'prod', access: 'read' })
    })
    for (const dryRun of [true, false]) {
      await t.rejects(applySeedDocument(app.db, broken, { dryRun }), /no team named "nobody"/, dryRun ? 'the dry run says so' : 'the apply says so')
      t.same(await everything(app), before, 'nothing removed, nothing recorded')
    }
    t.equal((await get(app, 'sync-red-token')).statusCode, 200)
  })
})

t.test(`a seed's removals are in the audit trail, by the system (${ENGINE})`, async (t) => {
  const app = await build(t, { seed: base() })
  const trail = async (organization = 'sync-org-token') => {
    const res = await get(app, organization, '/api/v2/organization/audit-trail')
    return (res.json().data as any[]).filter((e) => e.resource.type !== 'workspace')
  }
  t.same(await trail(), [], 'creating the directory records no directory event')
  await applySeedDocument(app.db, edit((doc) => {
    withoutTeam(doc, 'red')
    doc.users = doc.users.filter((u) => u.username !== 'ben')
    for (const org of doc.organizations) for (const team of org.teams) team.members = team.members.filter((m) => m !== 'ben')
  }))
  const events = await trail()
  const seen = events.map((e) => [e.resource.type, e.resource.action, e.resource.meta])
  t.same(seen.filter(([, action]) => action === 'destroy' || action === 'remove_member').length, events.length, 'only removals')
  // one statement's events share their moment: compared as a set
  t.same(seen.map((e) => JSON.stringify(e)).sort(), [
    ['team', 'remove_member', { team: 'blue', user: 'ben' }],
    ['team', 'remove_member', { team: 'red', user: 'ben' }],
    ['authentication-token', 'destroy', { subject: 'red' }],
    ['team', 'destroy', { team: 'red' }],
    ['organization-membership', 'destroy', { user: 'ben' }]
  ].map((e) => JSON.stringify(e)).sort(), 'the user’s memberships of teams and of the organization (their own token is in no organization’s trail), the team’s token and the team')
  t.equal(events.length, 5)
  for (const e of events) {
    t.match(e, { version: '0', type: 'Resource', auth: { accessor_id: null, description: 'seed', type: 'System', organization_id: 'org-sync' } })
    t.notOk(JSON.stringify(e).includes('token-one') || JSON.stringify(e).includes('sync-red-token'), 'never a secret')
  }
  t.equal(events.find((e) => e.resource.type === 'team' && e.resource.action === 'destroy').resource.id, 'team-s-red')
  const other = await trail('other-org-token')
  t.same(other.map((e) => JSON.stringify([e.resource.type, e.resource.action, e.resource.meta])).sort(), [
    ['organization-membership', 'destroy', { user: 'ben' }],
    ['team', 'remove_member', { team: 'x', user: 'ben' }]
  ].map((e) => JSON.stringify(e)), 'each organization records the memberships it lost, and nothing of the user’s own token')
})

t.test(`every organization-access flag is the seed's to give; absent flags are false (${ENGINE})`, async (t) => {
  const app = await build(t, { seed: edit((doc) => { (doc.organizations[0]!.teams[1] as any)['organization-access'] = { 'manage-teams': true, 'manage-agent-pools': true, 'manage-workspaces': true } }) })
  const row = await app.db.selectFrom('teams').selectAll().where('id', '=', 'team-s-red').executeTakeFirstOrThrow()
  t.match(row, { manage_teams: true, manage_agent_pools: true, manage_workspaces: true, manage_membership: false, read_workspaces: false, manage_policies: false })
  const summary = await applySeedDocument(app.db, base())
  t.same(summary.changed.teams, ['sync/red'], 'a flag the document no longer gives is a change')
  t.match(await app.db.selectFrom('teams').selectAll().where('id', '=', 'team-s-red').executeTakeFirstOrThrow(),
    { manage_teams: false, manage_agent_pools: false, manage_workspaces: false })
})

t.test(`a secret revoked through the API is never brought back by a seed that still declares it (${ENGINE})`, async (t) => {
  const app = await build(t, { seed: base() })
  t.equal((await get(app, 'ben-token-one')).statusCode, 200)
  // what a revocation through the API does: the token goes, its digest is remembered
  await app.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('tokens').where('digest', '=', tokenDigest('ben-token-one')).execute()
    await trx.insertInto('revoked_tokens').values({ digest: tokenDigest('ben-token-one') }).execute()
  })
  t.equal((await get(app, 'ben-token-one')).statusCode, 401)
  for (const dryRun of [true, false, false]) {
    const summary = await applySeedDocument(app.db, base(), { dryRun })
    t.same(summary.created.tokens, [], 'not created again')
    const tokenWarnings = summary.warnings.filter((w) => !w.startsWith('workspace ids'))
    t.equal(tokenWarnings.length, 1)
    t.match(tokenWarnings[0], /^token of user ben \(users\[1\] "ben" › tokens\[0\]\): revoked, left out/, 'the warning names the owner')
    t.notOk(JSON.stringify(summary).includes('ben-token-one') || JSON.stringify(summary).includes(tokenDigest('ben-token-one')), 'never the secret or its digest')
    t.equal((await get(app, 'ben-token-one')).statusCode, 401, dryRun ? 'after a dry run' : 'after an apply')
  }
  t.equal((await get(app, 'sync-red-token')).statusCode, 200, 'the other tokens stay')
})
