import t from 'tap'
import { sql } from 'kysely'
import { applySeedDocument } from '../../src/directory/seed.js'
import { build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { addBody, client } from '../team-workspaces/client.js'
import { table } from '../../src/db/tables.js'

/**
 * DESIGN §8: every successful add, update and remove writes exactly one audit event, in the same
 * transaction as the change; a denied, invalid or duplicate request writes none.
 */
const WRITE_ALL = 'access=write runs=apply variables=write state-versions=write sentinel-mocks=read workspace-locking=true run-tasks=false policy-overrides=false'

t.test(`audit events are recorded with every change, and only then, on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world })
  const api = client(t, app)
  const events = () => app.db.selectFrom('audit_events').selectAll().orderBy('occurred_at').orderBy('id').execute()

  /** The events a request left behind. */
  const recorded = async (send: () => Promise<{ statusCode: number }>, status: number) => {
    const before = new Set((await events()).map((e) => e.id))
    const res = await send()
    t.equal(res.statusCode, status, `answers ${status}`)
    return (await events()).filter((e) => !before.has(e.id))
  }
  const as = (token: string, requestId?: string) => ({ token, ...(requestId === undefined ? {} : { headers: { 'x-request-id': requestId } }) })

  t.test('add: one add_team event — organization token, the permissions the row got, the request id', async (t) => {
    const added = await recorded(() => api.add(addBody('team-green', 'ws-prod', { access: 'write' }), as(TOKENS.organization, 'req-add-green')), 200)
    t.equal(added.length, 1, 'exactly one event')
    t.match(added[0], {
      organization_id: 'org-acme',
      accessor_kind: 'organization',
      accessor_id: 'org-acme',
      accessor_description: 'acme',
      request_id: 'req-add-green',
      action: 'add_team',
      workspace_id: 'ws-prod',
      team_id: 'team-green',
      team_name: 'green',
      permissions: WRITE_ALL
    })
  })

  t.test('update: one update_team_permissions event — a user, the permissions after the change', async (t) => {
    const updated = await recorded(() => api.update('tws-red-prod', { data: { attributes: { variables: 'read' } } }, as(TOKENS.owner)), 200)
    t.equal(updated.length, 1, 'exactly one event')
    t.match(updated[0], {
      accessor_kind: 'user',
      accessor_id: 'user-owner',
      accessor_description: 'owner',
      action: 'update_team_permissions',
      workspace_id: 'ws-prod',
      team_id: 'team-red',
      team_name: 'red',
      // runs and workspace-locking kept from the seed, variables changed
      permissions: 'access=custom runs=plan variables=read state-versions=none sentinel-mocks=none workspace-locking=true run-tasks=false policy-overrides=false'
    })
    t.match(updated[0]!.request_id, /\S/, 'the request’s own id when the client sent none')
  })

  t.test('update by a team token: the team behind it is the accessor', async (t) => {
    const updated = await recorded(() => api.update('tws-red-prod', { data: { attributes: { access: 'read' } } }, as(TOKENS.ownersTeam)), 200)
    t.equal(updated.length, 1)
    t.match(updated[0], { accessor_kind: 'team', accessor_id: 'team-owners', accessor_description: 'owners', permissions: 'access=read runs=read variables=read state-versions=read sentinel-mocks=none workspace-locking=false run-tasks=false policy-overrides=false' })
  })

  t.test('remove: one remove_team event, team only, by a workspace admin', async (t) => {
    const removed = await recorded(() => api.remove('tws-writers-prod', as(TOKENS.workspaceAdmin)), 204)
    t.equal(removed.length, 1)
    t.match(removed[0], { accessor_kind: 'user', accessor_id: 'user-wsadmin', accessor_description: 'wsadmin', action: 'remove_team', workspace_id: 'ws-prod', team_id: 'team-writers', team_name: 'writers', permissions: null })
  })

  t.test('a denied write leaves no event (404)', async (t) => {
    t.same(await recorded(() => api.add(addBody('team-blue', 'ws-prod', { access: 'read' }), as(TOKENS.writer)), 404), [], 'add')
    t.same(await recorded(() => api.update('tws-red-prod', { data: { attributes: { access: 'admin' } } }, as(TOKENS.secretMember)), 404), [], 'update')
    t.same(await recorded(() => api.remove('tws-red-prod', as(TOKENS.otherOrganization)), 404), [], 'remove')
    t.same(await recorded(() => api.remove('tws-globex', as(TOKENS.organization)), 404), [], 'another organization’s row')
  })

  t.test('a write of nothing leaves no event (404)', async (t) => {
    t.same(await recorded(() => api.add(addBody('team-nope', 'ws-prod', { access: 'read' }), as(TOKENS.organization)), 404), [], 'add, no such team')
    t.same(await recorded(() => api.update('tws-nope', { data: { attributes: { access: 'read' } } }, as(TOKENS.organization)), 404), [], 'update, no such row')
    t.same(await recorded(() => api.remove('tws-nope', as(TOKENS.organization)), 404), [], 'remove, no such row')
  })

  t.test('an invalid write leaves no event (422 custom-only)', async (t) => {
    t.same(await recorded(() => api.add(addBody('team-blue', 'ws-prod', { access: 'read', runs: 'apply' }), as(TOKENS.organization)), 422), [], 'add')
    // refused by the row's current level (write), in the database
    t.same(await recorded(() => api.update('tws-admins-prod', { data: { attributes: { runs: 'plan' } } }, as(TOKENS.organization)), 422), [], 'update')
  })

  t.test('an update that changes nothing answers 200 with the row, records no event, and writes nothing', async (t) => {
    // the row's version (xmin) moves with any write of it, even one that rewrites the same values
    const version = async (id: string) => (await sql<{ v: string }>`select xmin::text as v from ${table.team_workspaces} where id = ${id}`.execute(app.db)).rows[0]!.v
    const owner = as(TOKENS.organization)
    /** The update's answer, the events it left, and whether the row was written. */
    const update = async (id: string, body: unknown) => {
      const written = await version(id)
      let res: Awaited<ReturnType<typeof api.update>> | undefined
      const events = await recorded(async () => (res = await api.update(id, body, owner)), 200)
      return { data: res!.json().data, events, written: (await version(id)) !== written }
    }

    const admins = (await api.show('tws-admins-prod', owner)).json().data
    for (const [what, body] of [
      ['no attributes', { data: { attributes: {} } }],
      ['no attributes, with data.type and data.id', { data: { type: 'team-workspaces', id: 'tws-admins-prod', attributes: {} } }],
      ['its own level', { data: { attributes: { access: 'admin' } } }],
      ['every attribute as it is, as a client that reads and sends back', { data: { type: 'team-workspaces', id: 'tws-admins-prod', attributes: admins.attributes } }]
    ] as const) {
      const { data, events, written } = await update('tws-admins-prod', body)
      t.same(data, admins, `${what}: the row as it is`)
      t.same(events, [], `${what}: no event`)
      t.notOk(written, `${what}: the row is not written`)
    }

    // a custom row: the permissions it holds, sent again, change nothing; one that differs does
    const first = await update('tws-blue-dev', { data: { attributes: { access: 'custom', runs: 'plan', 'workspace-locking': true } } })
    t.equal(first.events.length, 1, 'a change: its event')
    t.ok(first.written)
    for (const [what, attributes] of [
      ['the same body again', { access: 'custom', runs: 'plan', 'workspace-locking': true }],
      ['custom, no permission', { access: 'custom' }],
      ['one permission as it is', { variables: first.data.attributes.variables }]
    ] as const) {
      const again = await update('tws-blue-dev', { data: { attributes } })
      t.same(again.data, first.data, `${what}: the row as it is`)
      t.same(again.events, [], `${what}: no event`)
      t.notOk(again.written, `${what}: the row is not written`)
    }
    const changed = await update('tws-blue-dev', { data: { attributes: { runs: 'apply', 'workspace-locking': true } } })
    t.equal(changed.data.attributes.runs, 'apply')
    t.equal(changed.events.length, 1, 'one value of two differs: a change, one event')
    t.match(changed.events[0], { action: 'update_team_permissions', team_id: 'team-blue', permissions: /^access=custom runs=apply .*workspace-locking=true/ })

    // a caller who may not change the row still gets the 404 of a missing one, for nothing too
    const denied = await recorded(() => api.update('tws-admins-prod', { data: { attributes: {} } }, as(TOKENS.writer)), 404)
    t.same(denied, [], 'denied: no event')
    t.same(await recorded(() => api.update('tws-nope', { data: { attributes: {} } }, owner), 404), [], 'missing: no event')
  })

  t.test('a duplicate add leaves no event (422 already taken)', async (t) => {
    t.same(await recorded(() => api.add(addBody('team-admins', 'ws-prod', { access: 'read' }), as(TOKENS.organization)), 422), [])
  })

  t.test('20 concurrent identical adds: one 200, one event', async (t) => {
    const before = (await events()).length
    const body = addBody('team-blue', 'ws-prod', { access: 'plan' })
    const results = await Promise.all(Array.from({ length: 20 }, () => api.add(body, as(TOKENS.organization))))
    t.equal(results.filter((r) => r.statusCode === 200).length, 1)
    const after = await events()
    t.equal(after.length, before + 1, 'one event')
    t.match(after.at(-1), { action: 'add_team', team_id: 'team-blue', workspace_id: 'ws-prod' })
  })

  t.test('a change that finds its row gone leaves no event, even while it waited for it', async (t) => {
    const before = (await events()).length
    let update: Promise<{ statusCode: number }> | undefined
    // the row vanishes in a transaction that holds it while the update is sent (on PostgreSQL the
    // update waits for its lock; on PGlite, for the one connection), then commits
    await app.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('team_workspaces').where('id', '=', 'tws-blue-dev').execute()
      update = api.update('tws-blue-dev', { data: { attributes: { access: 'write' } } }, as(TOKENS.organization))
      await new Promise((resolve) => setTimeout(resolve, 200))
    })
    t.equal((await update!).statusCode, 404)
    t.equal((await events()).length, before, 'no event')
  })

  t.test('a change whose event cannot be written does not happen', async (t) => {
    await sql`create function audit_refuse() returns trigger language plpgsql as $$ begin raise exception 'no events today'; end $$`.execute(app.db)
    await sql`create trigger audit_refuse before insert on ${table.audit_events} for each row execute function audit_refuse()`.execute(app.db)
    t.teardown(async () => { await sql`drop trigger if exists audit_refuse on ${table.audit_events}`.execute(app.db) })
    const res = await api.add(addBody('team-green', 'ws-dev', { access: 'read' }), as(TOKENS.organization))
    t.equal(res.statusCode, 500)
    t.notOk(await app.db.selectFrom('team_workspaces').select('id').where('team_id', '=', 'team-green').where('workspace_id', '=', 'ws-dev').executeTakeFirst(), 'no row without its event')
    const removed = await api.remove('tws-admins-prod', as(TOKENS.organization))
    t.equal(removed.statusCode, 500)
    t.ok(await app.db.selectFrom('team_workspaces').select('id').where('id', '=', 'tws-admins-prod').executeTakeFirst(), 'the row stays')
  })

  t.test('an event outlives the team and workspace it names', async (t) => {
    const before = await events()
    await app.db.deleteFrom('teams').where('id', '=', 'team-green').execute()
    t.same(await events(), before, 'deleting a team (and its rows) removes no event, and records none')
    t.ok(before.some((e) => e.team_id === 'team-green' && e.team_name === 'green'), 'its name is kept')
  })
})

t.test(`seed files record their grants as the system, once, on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world })
  const system = () => app.db.selectFrom('audit_events').selectAll().where('accessor_kind', '=', 'system').orderBy('occurred_at').orderBy('id').execute()

  t.test('each grant applied: one add_team event, System, described as seed, one id per application', async (t) => {
    const events = await system()
    t.same(events.map((e) => `${e.organization_id} ${e.team_name} ${e.workspace_id}`), [
      'org-acme admins ws-prod', 'org-acme writers ws-prod', 'org-acme red ws-prod', 'org-acme blue ws-dev', 'org-globex everyone ws-globex'
    ], 'in the order applied')
    t.ok(events.every((e) => e.action === 'add_team' && e.accessor_id === null && e.accessor_description === 'seed'))
    t.equal(new Set(events.map((e) => e.request_id)).size, 1, 'the events of one application share its id')
    t.equal(events[2]!.permissions, 'access=custom runs=plan variables=none state-versions=none sentinel-mocks=none workspace-locking=true run-tasks=false policy-overrides=false')
  })

  t.test('applying the same seed again records nothing', async (t) => {
    const before = await system()
    await applySeedDocument(app.db, world)
    t.same(await system(), before)
  })

  t.test('an edited entry is applied once, as an update of the existing row', async (t) => {
    const before = await system()
    const edited = structuredClone(world)
    edited.organizations[0]!['team-access'][3] = { id: 'tws-blue-dev', team: 'blue', workspace: 'dev', access: 'write' }
    await applySeedDocument(app.db, edited)
    const added = (await system()).slice(before.length)
    t.equal(added.length, 1)
    t.match(added[0], { action: 'update_team_permissions', team_id: 'team-blue', workspace_id: 'ws-dev', permissions: WRITE_ALL })
    t.not(added[0]!.request_id, before[0]!.request_id, 'another application, another id')
  })

  t.test('a seed that fails records nothing', async (t) => {
    const before = await system()
    const broken = structuredClone(world)
    ;(broken.organizations[0]!['team-access'] as unknown[]).push({ id: 'tws-green-dev', team: 'green', workspace: 'dev', access: 'read' }, { id: 'tws-x', team: 'nobody', workspace: 'dev', access: 'read' } as any)
    await t.rejects(applySeedDocument(app.db, broken), { name: 'SeedError' })
    t.same(await system(), before)
  })
})
