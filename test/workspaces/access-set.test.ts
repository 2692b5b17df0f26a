import t, { type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { build, snapshot, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { NOT_FOUND } from '../team-workspaces/client.js'
import { validateResponse } from '../openapi.js'
import { CUSTOM_DEFAULTS, IMPLICIT_PERMISSIONS } from '../../src/access/permissions.js'
import { AccessSetError } from '../../src/index.js'

/**
 * DESIGN §10.1: a workspace's team access as one set — GET with an ETag, PUT of the complete
 * desired set in one transaction (an audit event per row changed), dry runs, If-Match, and who
 * may. ws-prod holds tws-admins-prod (admin), tws-writers-prod (write) and tws-red-prod (custom,
 * a secret team).
 */

const SET = (workspaceId: string) => `/api/v2/workspaces/${encodeURIComponent(workspaceId)}/team-access`
const owner = TOKENS.organization

/** An entry as a client sends it. */
const entry = (teamId: string, attributes: Record<string, unknown>) =>
  ({ type: 'team-workspaces', attributes, relationships: { team: { data: { type: 'teams', id: teamId } } } })

/** The set as the seed leaves it, as entries. */
const seeded = () => [
  entry('team-admins', { access: 'admin' }),
  entry('team-writers', { access: 'write' }),
  entry('team-red', { access: 'custom', runs: 'plan', 'workspace-locking': true })
]

function api (t: Test, app: FastifyInstance) {
  const checked = (operation: 'showAccessSet' | 'replaceAccessSet', res: LightMyRequestResponse) => {
    if (res.statusCode < 300) {
      const { valid, errors } = validateResponse(operation, res.json())
      if (!valid) t.fail(`the ${res.statusCode} response does not match schemas/openapi.json`, { errors, body: res.body })
      t.match(res.headers['content-type'], /^application\/vnd\.api\+json/, 'JSON:API media type')
      t.match(res.headers.etag, /^"[A-Za-z0-9_-]+"$/, 'a strong, quoted ETag')
    }
    return res
  }
  return {
    get: async (workspaceId: string, token: string | null = owner) =>
      checked('showAccessSet', await app.inject({ method: 'GET', url: SET(workspaceId), headers: token === null ? {} : { authorization: `Bearer ${token}` } })),
    put: async (workspaceId: string, data: unknown, options: { token?: string, ifMatch?: string, dryRun?: boolean } = {}) =>
      checked('replaceAccessSet', await app.inject({
        method: 'PUT',
        url: `${SET(workspaceId)}${options.dryRun === true ? '?dry-run=true' : ''}`,
        headers: {
          authorization: `Bearer ${options.token ?? owner}`,
          'content-type': 'application/vnd.api+json',
          ...(options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch })
        },
        payload: JSON.stringify({ data })
      }))
  }
}

async function events (app: FastifyInstance) {
  return await app.db.selectFrom('audit_events').select(['action', 'team_id', 'workspace_id', 'request_id', 'permissions', 'accessor_id'])
    .where('workspace_id', 'is not', null).orderBy('occurred_at').orderBy('id').execute()
}

const teamsOf = (body: { data: Array<{ relationships: { team: { data: { id: string } } } }> }) => body.data.map((r) => r.relationships.team.data.id).sort()

t.test(`the access set of a workspace (DESIGN §10.1) on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world })
  const set = api(t, app)
  const before = await events(app)

  t.test('GET: every row, secret teams included, in creation order, with an ETag that names the set', async (t) => {
    const res = await set.get('ws-prod')
    t.equal(res.statusCode, 200)
    t.same(res.json().data.map((r: { id: string }) => r.id), ['tws-admins-prod', 'tws-writers-prod', 'tws-red-prod'])
    const list = await app.inject({ method: 'GET', url: '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-prod', headers: { authorization: `Bearer ${owner}` } })
    t.same(res.json().data, list.json().data, 'the resources are the list’s')
    t.equal((await set.get('ws-prod')).headers.etag, res.headers.etag, 'the same set, the same ETag')
    t.not((await set.get('ws-dev')).headers.etag, res.headers.etag, 'another workspace’s set, another ETag')
    const empty = await set.get('ws-globex', TOKENS.otherOrganization)
    t.equal(empty.statusCode, 200)
    t.equal(empty.json().data.length, 1)
  })

  t.test('PUT of the set as it is changes nothing and records nothing; GET’s answer may be sent back as it is', async (t) => {
    const got = await set.get('ws-prod')
    const res = await set.put('ws-prod', got.json().data)
    t.equal(res.statusCode, 200)
    t.same(res.json().meta, { changes: { added: [], updated: [], removed: [] }, 'dry-run': false })
    t.same(res.json().data, got.json().data)
    t.equal(res.headers.etag, got.headers.etag)
    t.same(await events(app), before, 'no audit event')
  })

  t.test('PUT that adds, changes and removes rows in one request: exactly the desired set, one audit event per change', async (t) => {
    const etag = (await set.get('ws-prod')).headers.etag as string
    const res = await set.put('ws-prod', [
      entry('team-admins', { access: 'admin' }),
      entry('team-writers', { access: 'plan' }),
      entry('team-green', { access: 'custom', variables: 'write' })
    ])
    t.equal(res.statusCode, 200)
    const body = res.json()
    t.same(body.meta, { changes: { added: ['team-green'], updated: ['team-writers'], removed: ['team-red'] }, 'dry-run': false })
    t.same(teamsOf(body), ['team-admins', 'team-green', 'team-writers'])
    const byTeam = Object.fromEntries(body.data.map((r: { relationships: { team: { data: { id: string } } } }) => [r.relationships.team.data.id, r]))
    t.equal(byTeam['team-admins'].id, 'tws-admins-prod', 'an unchanged row keeps its id')
    t.equal(byTeam['team-writers'].id, 'tws-writers-prod', 'a changed row keeps its id')
    t.same(byTeam['team-writers'].attributes, { access: 'plan', ...IMPLICIT_PERMISSIONS.plan })
    t.match(byTeam['team-green'].id, /^tws-[1-9A-HJ-NP-Za-km-z]{16}$/)
    t.same(byTeam['team-green'].attributes, { access: 'custom', ...CUSTOM_DEFAULTS, variables: 'write' }, 'omitted custom permissions take the custom defaults, as in an add')

    const rows = await app.db.selectFrom('team_workspaces').select(['id', 'team_id', 'access']).where('workspace_id', '=', 'ws-prod').orderBy('team_id').execute()
    t.same(rows.map((r) => [r.team_id, r.access]), [['team-admins', 'admin'], ['team-green', 'custom'], ['team-writers', 'plan']], 'the database holds exactly the set')
    t.equal(await app.db.selectFrom('team_workspaces').select('id').where('id', '=', 'tws-blue-dev').executeTakeFirst().then((r) => r?.id), 'tws-blue-dev', 'another workspace is untouched')

    const recorded = (await events(app)).slice(before.length)
    t.equal(recorded.length, 3, 'three events')
    t.same(recorded.map((e) => [e.action, e.team_id]).sort(), [['add_team', 'team-green'], ['remove_team', 'team-red'], ['update_team_permissions', 'team-writers']])
    t.ok(recorded.every((e) => e.workspace_id === 'ws-prod' && e.request_id === recorded[0]!.request_id && e.accessor_id === 'org-acme'), 'of this workspace, this request, this caller')
    t.match(recorded.find((e) => e.action === 'update_team_permissions')?.permissions, /^access=plan runs=plan /)

    const now = await set.get('ws-prod')
    t.equal(res.headers.etag, now.headers.etag, 'the answer’s ETag is the new set’s')
    t.not(now.headers.etag, etag, 'a new set, a new ETag')
    t.same(res.json().data, now.json().data)
    // back to the seed's set (team-red comes back with a new id)
    t.equal((await set.put('ws-prod', seeded())).statusCode, 200)
  })

  t.test('one bad entry fails the whole request, points at the entry, and changes nothing', async (t) => {
    const cases: Array<[string, unknown[], string[]]> = [
      ['a custom-only attribute under a fixed level', [...seeded(), entry('team-green', { access: 'read', runs: 'apply' })], ['/data/3/attributes/runs']],
      ['no access', [...seeded().slice(0, 1), entry('team-green', {})], ['/data/1/attributes/access']],
      ['an access out of its enum', [entry('team-green', { access: 'owner' }), ...seeded()], ['/data/0/attributes/access']],
      ['an unknown attribute', [...seeded(), entry('team-green', { access: 'read', color: 'red' })], ['/data/3/attributes/color']],
      ['a wrong type', [{ ...entry('team-green', { access: 'read' }), type: 'teams' }], ['/data/0/type']],
      ['the same team twice: the second one', [...seeded(), entry('team-writers', { access: 'read' })], ['/data/3/relationships/team']],
      ['an unknown team', [...seeded(), entry('team-nope', { access: 'read' })], ['/data/3/relationships/team']],
      ['a team of another organization', [entry('team-globex', { access: 'read' }), ...seeded()], ['/data/0/relationships/team']],
      ['the workspace of another path', [{ ...entry('team-green', { access: 'read' }), relationships: { team: { data: { type: 'teams', id: 'team-green' } }, workspace: { data: { type: 'workspaces', id: 'ws-dev' } } } }], ['/data/0/relationships/workspace']],
      ['several problems: each its error, in entry order', [entry('team-nope', { access: 'read' }), entry('team-green', { access: 'plan', 'run-tasks': true }), entry('team-nope', { access: 'read' })],
        ['/data/0/relationships/team', '/data/1/attributes/run-tasks', '/data/2/relationships/team']]
    ]
    for (const [name, data, pointers] of cases) {
      const state = await snapshot(app.db)
      const recorded = await events(app)
      const res = await set.put('ws-prod', data)
      t.equal(res.statusCode, 422, name)
      const errors = res.json().errors as Array<{ status: string, title: string, source: { pointer: string } }>
      t.same(errors.map((e) => e.source.pointer), pointers, `${name}: the pointers`)
      t.ok(errors.every((e) => e.status === '422' && e.title === 'invalid attribute'), `${name}: 422 invalid attribute`)
      t.same(await snapshot(app.db), state, `${name}: nothing changed`)
      t.same(await events(app), recorded, `${name}: no audit event`)
    }
  })

  t.test('PUT: a body that is not JSON is 415, one that is not a set is 422', async (t) => {
    const state = await snapshot(app.db)
    const send = async (contentType: string, payload: string) =>
      await app.inject({ method: 'PUT', url: SET('ws-prod'), headers: { authorization: `Bearer ${owner}`, 'content-type': contentType }, payload })
    const text = await send('text/plain', 'hello')
    t.equal(text.statusCode, 415)
    t.match(text.json(), { errors: [{ status: '415', title: 'invalid content type' }] })
    for (const [payload, pointer] of [['', ''], ['{}', '/data'], ['{"data":{}}', '/data'], ['{"data":[],"extra":1}', '/extra']] as const) {
      const res = await send('application/json; charset=utf-8', payload)
      t.equal(res.statusCode, 422, payload)
      t.match(res.json(), { errors: [{ status: '422', source: { pointer } }] })
    }
    t.same(await snapshot(app.db), state, 'nothing changed')
  })

  t.test('what a client can send gets no 500, and leaves the set as it is', async (t) => {
    const state = await snapshot(app.db)
    const long = 'x'.repeat(129)
    const bodies = [undefined, '', 'null', '{', '[]', '{"data":1}', '\u0000', '{"data":[null]}', '{"data":[{"type":"team-workspaces","attributes":{"access":"read"},"relationships":{"team":{"data":{"type":"teams","id":"team-\u0000"}}}}]}',
      JSON.stringify({ data: [entry(long, { access: 'read' })] }), JSON.stringify({ data: Array.from({ length: 1001 }, () => entry('team-green', { access: 'read' })) })]
    for (const url of [SET('ws-prod'), SET('ws-\u0000'), SET(long), `${SET('ws-prod')}?dry-run=maybe`]) {
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const) {
        for (const payload of bodies) {
          for (const ifMatch of [undefined, '', 'W/"x"', '"a", *', '\u00ff']) {
            const headers: Record<string, string> = { authorization: `Bearer ${owner}`, 'content-type': 'application/json' }
            if (ifMatch !== undefined) headers['if-match'] = ifMatch
            const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })
            if (res.statusCode >= 500) t.fail(`${method} ${url} ${JSON.stringify(payload)} → ${res.statusCode} ${res.body}`)
          }
        }
      }
    }
    t.same(await snapshot(app.db), state, 'nothing changed')
  })

  t.test('a team the caller cannot see answers as a team that does not exist', async (t) => {
    // the workspace admin (team-admins, secret) sees team-red's row on ws-prod, not team-blue (secret, no row here)
    const hidden = await set.put('ws-prod', [...seeded(), entry('team-blue', { access: 'read' })], { token: TOKENS.workspaceAdmin })
    const missing = await set.put('ws-prod', [...seeded(), entry('team-nope', { access: 'read' })], { token: TOKENS.workspaceAdmin })
    t.equal(hidden.statusCode, 422)
    t.equal(hidden.body, missing.body, 'byte-identical')
    const kept = await set.put('ws-prod', seeded(), { token: TOKENS.workspaceAdmin })
    t.equal(kept.statusCode, 200, 'a secret team with a row on the workspace may be named by its admin')
    const owners = await set.put('ws-prod', [...seeded(), entry('team-blue', { access: 'read' })], { dryRun: true })
    t.same(owners.json().meta.changes, { added: ['team-blue'], updated: [], removed: [] }, 'an owner sees every team')
  })

  t.test('dry run: the same meta.changes and set as the apply that follows, and nothing changed', async (t) => {
    const desired = [entry('team-admins', { access: 'write' }), entry('team-red', { access: 'custom', runs: 'apply' }), entry('team-green', { access: 'read' })]
    const current = await set.get('ws-prod')
    const state = await snapshot(app.db)
    const recorded = await events(app)
    const plan = await set.put('ws-prod', desired, { dryRun: true })
    t.equal(plan.statusCode, 200)
    t.same(plan.json().meta, { changes: { added: ['team-green'], updated: ['team-admins', 'team-red'], removed: ['team-writers'] }, 'dry-run': true })
    t.equal(plan.headers.etag, current.headers.etag, 'the ETag of the set as it still is')
    t.same(await snapshot(app.db), state, 'nothing changed')
    t.same(await events(app), recorded, 'no audit event')

    const apply = await set.put('ws-prod', desired, { ifMatch: plan.headers.etag as string })
    t.equal(apply.statusCode, 200, 'the plan’s ETag applies it')
    t.same(apply.json().meta.changes, plan.json().meta.changes, 'the changes the plan said')
    const attributes = (body: { data: Array<{ relationships: { team: { data: { id: string } } }, attributes: unknown }> }) =>
      Object.fromEntries(body.data.map((r) => [r.relationships.team.data.id, r.attributes]))
    t.same(attributes(apply.json()), attributes(plan.json()), 'the set the plan showed')
    t.equal((await events(app)).length - recorded.length, 4, 'an event per change')
    t.equal((await set.put('ws-prod', seeded())).statusCode, 200)
  })

  t.test('If-Match: a stale ETag is 412 and changes nothing; a current one or * applies', async (t) => {
    const stale = (await set.get('ws-prod')).headers.etag as string
    t.equal((await set.put('ws-prod', [...seeded(), entry('team-green', { access: 'read' })])).statusCode, 200, 'someone else changes the set')
    const state = await snapshot(app.db)
    const recorded = await events(app)
    for (const dryRun of [false, true]) {
      const res = await set.put('ws-prod', seeded(), { ifMatch: stale, dryRun })
      t.equal(res.statusCode, 412)
      t.match(res.json(), { errors: [{ status: '412', title: 'precondition failed' }] })
      t.match(res.headers['content-type'], /^application\/vnd\.api\+json/)
    }
    t.equal((await set.put('ws-prod', seeded(), { ifMatch: 'W/' + stale })).statusCode, 412, 'a weak tag never matches')
    t.same(await snapshot(app.db), state, 'nothing changed')
    t.same(await events(app), recorded, 'no audit event')
    const current = (await set.get('ws-prod')).headers.etag as string
    t.equal((await set.put('ws-prod', seeded(), { ifMatch: `"other", ${current}` })).statusCode, 200, 'a list with the current ETag')
    t.equal((await set.put('ws-prod', seeded(), { ifMatch: '*' })).statusCode, 200, '*')
  })

  t.test('who may: owners and workspace admins; anyone else gets the 404 of a missing workspace, byte-identical', async (t) => {
    const missing = await set.get('ws-nope')
    t.equal(missing.statusCode, 404)
    t.same(missing.json(), NOT_FOUND)
    const missingPut = await set.put('ws-nope', seeded())
    t.equal(missingPut.body, missing.body)

    const allowed: Array<[string, string]> = [
      ['organization token', TOKENS.organization], ['owners-team token', TOKENS.ownersTeam], ['owner user', TOKENS.owner],
      ['workspace admin through team access', TOKENS.workspaceAdmin], ['member of a manage-workspaces team', TOKENS.manager]
    ]
    for (const [name, token] of allowed) {
      t.equal((await set.get('ws-prod', token)).statusCode, 200, `${name}: GET`)
      t.equal((await set.put('ws-prod', seeded(), { token })).statusCode, 200, `${name}: PUT`)
      t.equal((await set.put('ws-prod', seeded(), { token, dryRun: true })).statusCode, 200, `${name}: dry run`)
    }

    const refused: Array<[string, string]> = [
      ['a plain member with write access', TOKENS.writer], ['a read-workspaces member', TOKENS.reader], ['a member of a secret team with a row', TOKENS.secretMember],
      ['a member of another secret team', TOKENS.otherSecretMember], ['a team token without the right', TOKENS.nonOwnerTeam],
      ['a user of another organization', TOKENS.otherOrganization], ['a user of no team', TOKENS.noTeam]
    ]
    const state = await snapshot(app.db)
    const recorded = await events(app)
    for (const [name, token] of refused) {
      const got = await set.get('ws-prod', token)
      t.equal(got.statusCode, 404, `${name}: GET`)
      t.equal(got.body, missing.body, `${name}: GET, byte-identical`)
      for (const options of [{ token }, { token, dryRun: true }, { token, ifMatch: '"stale"' }]) {
        const put = await set.put('ws-prod', [...seeded(), entry('team-nope', { access: 'read' })], options)
        t.equal(put.statusCode, 404, `${name}: PUT`)
        t.equal(put.body, missing.body, `${name}: PUT, byte-identical`)
      }
    }
    const otherOrganization = await set.put('ws-globex', [], { token: owner })
    t.equal(otherOrganization.body, missing.body, 'a workspace of another organization')
    t.equal((await set.get('ws-globex', owner)).body, missing.body)
    t.same(await snapshot(app.db), state, 'nothing changed')
    t.same(await events(app), recorded, 'no audit event')

    const anonymous = await set.get('ws-prod', null)
    t.equal(anonymous.statusCode, 401)
  })

  t.test('the host’s setWorkspaceAccess: the same flow, the same refusals', async (t) => {
    const caller = { kind: 'organization' as const, organizationId: 'org-acme' }
    const plan = await app.teamAccess.setWorkspaceAccess({ caller, workspaceId: 'ws-prod', entries: [{ teamId: 'team-admins', access: 'admin' }, { teamId: 'team-green', access: 'custom', runs: 'apply', variables: undefined }], dryRun: true })
    t.same(plan.changes, { added: ['team-green'], updated: [], removed: ['team-red', 'team-writers'] })
    t.equal(plan.dryRun, true)
    t.equal(plan.etag, (await set.get('ws-prod')).headers.etag)
    t.same(plan.rows.find((r) => r.teamId === 'team-green')?.permissions, { ...CUSTOM_DEFAULTS, runs: 'apply' })
    const applied = await app.teamAccess.setWorkspaceAccess({ caller, workspaceId: 'ws-prod', entries: [{ teamId: 'team-admins', access: 'admin' }, { teamId: 'team-green', access: 'custom', runs: 'apply' }], ifMatch: plan.etag, requestId: 'host-request-1' })
    t.same(applied.changes, plan.changes)
    t.equal(applied.etag, (await set.get('ws-prod')).headers.etag)
    const hostEvents = (await events(app)).filter((e) => e.request_id === 'host-request-1')
    t.equal(hostEvents.length, 3, 'an event per change, with the request id given')

    const refusal = async (input: Parameters<typeof app.teamAccess.setWorkspaceAccess>[0]) =>
      await app.teamAccess.setWorkspaceAccess(input).then(() => undefined, (err: unknown) => err)
    t.match(await refusal({ caller, workspaceId: 'ws-prod', entries: [], ifMatch: plan.etag }), { code: 'precondition-failed' })
    t.match(await refusal({ caller, workspaceId: 'ws-nope', entries: [] }), { code: 'not-found' })
    t.match(await refusal({ caller: { kind: 'user', userId: 'user-writer' }, workspaceId: 'ws-prod', entries: [] }), { code: 'not-found' })
    const invalid = await refusal({ caller, workspaceId: 'ws-prod', entries: [{ teamId: 'team-admins', access: 'read', runs: 'apply' }, { teamId: 'team-nope', access: 'read' }] })
    t.ok(invalid instanceof AccessSetError)
    t.match(invalid, { code: 'invalid', problems: [{ entry: 0, member: 'runs' }, { entry: 1, member: 'team', detail: 'Team not found.' }] })
    t.match(await refusal({ caller, workspaceId: 'ws-prod', entries: [{ teamId: 'team-admins', access: 'owner' as 'admin' }] }), { code: 'invalid', problems: [{ entry: 0, member: 'access' }] })
    t.equal((await set.put('ws-prod', seeded())).statusCode, 200)
  })
})

t.test(`10 concurrent PUTs with the same If-Match on ${ENGINE}: exactly one applies`, async (t) => {
  const app = await build(t, { seed: world })
  const set = api(t, app)
  const etag = (await set.get('ws-prod')).headers.etag as string
  const recorded = await events(app)
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) =>
    set.put('ws-prod', [...seeded().slice(1), entry('team-green', { access: i % 2 === 0 ? 'read' : 'plan' })], { ifMatch: etag })))
  const statuses = results.map((r) => r.statusCode)
  t.equal(statuses.filter((s) => s === 200).length, 1, 'one 200')
  t.equal(statuses.filter((s) => s === 412).length, 9, 'nine 412')
  const winner = results.find((r) => r.statusCode === 200)!
  t.same(winner.json().meta.changes, { added: ['team-green'], updated: [], removed: ['team-admins'] })
  t.same((await set.get('ws-prod')).json().data, winner.json().data, 'the set is the winner’s')
  t.equal((await events(app)).length - recorded.length, 2, 'the events of one change')
})
