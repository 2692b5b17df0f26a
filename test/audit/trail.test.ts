import t from 'tap'
import { build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { addBody, client, NOT_FOUND } from '../team-workspaces/client.js'
import { goDecodeErrors } from './go-tfe.js'
import { trailClient } from './trail-client.js'

/** DESIGN §8, `GET /api/v2/organization/audit-trail`: HCP Terraform's audit-trail API as go-tfe reads it. */
const INITECH = 'initech-organization-token'
const seed = { ...world, organizations: [...world.organizations, { id: 'org-initech', name: 'initech', tokens: [INITECH] }] }
const q = (params: Record<string, string>) => `?${new URLSearchParams(params).toString()}`

t.test(`the audit trail on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed })
  const api = client(t, app)
  const trail = trailClient(t, app)

  // initech's trail: 60 events, three at each of 20 moments a second apart, 10:00:00.123456Z on
  const at = (second: number) => `2026-03-01T10:00:${String(second).padStart(2, '0')}.123456Z`
  await app.db.insertInto('audit_events').values(Array.from({ length: 60 }, (_, i) => ({
    organization_id: 'org-initech',
    occurred_at: at(Math.floor(i / 3)),
    accessor_kind: 'organization' as const,
    accessor_id: 'org-initech',
    accessor_description: 'initech',
    request_id: `req-${i}`,
    action: 'add_team' as const,
    workspace_id: `ws-${i}`,
    team_id: 'team-x',
    team_name: 'x',
    permissions: 'access=read'
  }))).execute()
  const rows = await app.db.selectFrom('audit_events').select(['id', 'request_id']).where('organization_id', '=', 'org-initech').orderBy('occurred_at').orderBy('id').execute()
  const stored = rows.map((e) => e.id)
  const idsAfter = (second: number) => stored.slice((second + 1) * 3)

  t.test('the answer decodes into go-tfe’s AuditTrailList, with the field types of DESIGN §8', async (t) => {
    const owner = { token: TOKENS.organization, headers: { 'x-request-id': 'req-go-tfe-1' } }
    t.equal((await api.add(addBody('team-green', 'ws-dev', { access: 'custom', runs: 'apply' }), owner)).statusCode, 200)
    const res = await trail.read(TOKENS.organization)
    t.equal(res.statusCode, 200)
    const body = res.json()
    t.same(goDecodeErrors(body), [], 'json.Unmarshal into AuditTrailList succeeds')
    t.same(Object.keys(body).sort(), ['data', 'pagination'], 'plain JSON: data and a top-level pagination, no JSON:API members')
    t.same(body.pagination, { current_page: 1, prev_page: null, next_page: null, total_pages: 1, total_count: 5 }, 'integers, null at both ends')
    const event = body.data.at(-1)
    t.same(event, {
      id: event.id,
      version: '0',
      type: 'Resource',
      timestamp: event.timestamp,
      auth: { accessor_id: 'org-acme', description: 'acme', type: 'Client', impersonator_id: null, organization_id: 'org-acme' },
      request: { id: 'req-go-tfe-1' },
      resource: {
        id: 'ws-dev',
        type: 'workspace',
        action: 'add_team',
        meta: { team: 'green', permissions: 'access=custom runs=apply variables=none state-versions=none sentinel-mocks=none workspace-locking=false run-tasks=false policy-overrides=false' }
      }
    })
    t.match(event.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'a UUID')
    t.match(event.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/, 'zoned (UTC), to the microsecond')
    t.ok(Math.abs(Date.parse(event.timestamp) - Date.now()) < 60_000, 'now')
    t.match(body.data[0], { auth: { type: 'System', description: 'seed', accessor_id: null }, resource: { action: 'add_team' } }, 'the seed’s grants came first')

    t.same(goDecodeErrors({ ...body, data: [{ ...event, version: 0 }] }), ['.data[0].version: cannot unmarshal number into Go value of type string'], 'the check is not vacuous: a numeric version fails')
    t.equal(goDecodeErrors({ ...body, data: [{ ...event, timestamp: '2026-03-01 10:00:00' }] }).length, 1, 'a timestamp without a zone fails')
    t.equal(goDecodeErrors({ ...body, data: [{ ...event, resource: { ...event.resource, meta: 'team=green' } }] }).length, 1, 'a meta that is not an object fails')
    t.equal(goDecodeErrors({ ...body, pagination: { ...body.pagination, total_count: '5' } }).length, 1, 'a count as a string fails')
  })

  t.test('the request id of an event is the id the write was answered with', async (t) => {
    const res = await api.update('tws-blue-dev', { data: { attributes: { access: 'plan' } } }, { token: TOKENS.organization })
    const last = (await trail.read(TOKENS.organization)).json().data.at(-1)
    t.equal(last.request.id, res.headers['x-request-id'])
    t.equal(last.resource.action, 'update_team_permissions')
  })

  t.test('oldest first: 60 events read back whole with page[size]=7, none twice', async (t) => {
    const { events, pages } = await trail.readAll(INITECH, '', 7)
    t.equal(pages.length, 9)
    t.same(events.map((e) => e.id), stored, 'every event, once, in time order (ties by id)')
    t.same(pages.map((p) => [p.current_page, p.prev_page, p.next_page, p.total_pages, p.total_count]),
      Array.from({ length: 9 }, (_, i) => [i + 1, i === 0 ? null : i, i === 8 ? null : i + 2, 9, 60]))
    t.same(events.map((e) => e.request.id), rows.map((e) => e.request_id), 'each with its own fields')
  })

  t.test('pages: 1000 by default and at most; past the end, an empty page that still counts', async (t) => {
    const all = (await trail.read(INITECH)).json()
    t.equal(all.data.length, 60)
    t.same(all.pagination, { current_page: 1, prev_page: null, next_page: null, total_pages: 1, total_count: 60 })
    t.equal((await trail.read(INITECH, q({ 'page[size]': '1000' }))).statusCode, 200)
    const past = (await trail.read(INITECH, q({ 'page[number]': '12', 'page[size]': '7' }))).json()
    t.same(past, { data: [], pagination: { current_page: 12, prev_page: 9, next_page: null, total_pages: 9, total_count: 60 } })
  })

  t.test('since: only events strictly after it, in every form go-tfe and people send', async (t) => {
    const ids = async (since: string) => {
      const res = await trail.read(INITECH, `?since=${since}`)
      t.equal(res.statusCode, 200, since)
      return res.json().data.map((e: { id: string }) => e.id)
    }
    const exact = (await trail.read(INITECH)).json().data[15].timestamp // the first event at second 5
    t.equal(exact, at(5))
    t.same(await ids(encodeURIComponent(exact)), idsAfter(5), 'a timestamp served: strictly after it, so not its own second’s events')
    t.same(await ids(encodeURIComponent('2026-03-01T15:30:05.123456+05:30')), idsAfter(5), 'the same moment at another offset')
    t.same(await ids(encodeURIComponent('2026-03-01T11:00:05+01:00')), idsAfter(4), 'whole seconds with the value’s own offset, as go-tfe sends it')
    t.same(await ids(encodeURIComponent('2026-03-01T05:00:05-05:00')), idsAfter(4), 'a negative offset')
    t.same(await ids('2026-03-01T10:00:05Z'), idsAfter(4), 'unescaped, Z')
    t.same(await ids('2026-03-01t10:00:05z'), idsAfter(4), 'lower-case T and Z')
    t.same(await ids(encodeURIComponent('2026-03-01T10:00:05.123455Z')), idsAfter(4), 'a microsecond before second 5’s events')
    t.same(await ids(encodeURIComponent('2026-03-01T10:00:05.123456999Z')), idsAfter(5), 'digits past the microsecond are dropped, never rounded up')
    t.same(await ids(encodeURIComponent('2026-03-01T11:00:05,5+0100')), idsAfter(5), 'a decimal comma and a basic-format offset')
    t.same(await ids(encodeURIComponent('2026-03-01T11:00:05+01')), idsAfter(4), 'an offset in hours')
    t.same(await ids('2026-03-01T11:00:05+01:00'), idsAfter(4), 'an unescaped + (read as a space) is still a +')
    t.same(await ids(encodeURIComponent('2026-03-01T10:00:19.123456Z')), [], 'after the last event: none')
    const page = (await trail.read(INITECH, '?since=2026-03-01T10:00:05Z&page%5Bsize%5D=7&page%5Bnumber%5D=2')).json()
    t.same(page.data.map((e: { id: string }) => e.id), idsAfter(4).slice(7, 14), 'pages of what is after since')
    t.equal(page.pagination.total_count, 45, 'counted after since')
  })

  t.test('a since or page parameter that is not valid: 422, a JSON:API error naming it', async (t) => {
    const cases: Array<[string, string]> = [
      ['since', 'yesterday'], ['since', '2026-03-01'], ['since', '2026-03-01T10:00:05'], ['since', '2026-02-30T00:00:00Z'],
      ['since', '2026-03-01T24:00:00Z'], ['since', '2026-03-01T10:60:00Z'], ['since', '2026-03-01T10:00:05+25:00'], ['since', ''],
      ['page[size]', '0'], ['page[size]', '1001'], ['page[size]', 'ten'], ['page[number]', '0'], ['page[number]', '-1']
    ]
    for (const [parameter, value] of cases) {
      const res = await trail.read(INITECH, q({ [parameter]: value }))
      t.equal(res.statusCode, 422, `${parameter}=${value}`)
      t.match(res.headers['content-type'], /^application\/vnd\.api\+json/)
      t.match(res.json(), { errors: [{ status: '422', title: 'invalid parameter', source: { parameter } }] })
    }
  })

  t.test('unknown parameters are ignored (go-tfe may send a stray ListOptions=)', async (t) => {
    const res = await trail.read(INITECH, '?ListOptions=&filter%5Bfoo%5D=bar&page%5Bsize%5D=2')
    t.equal(res.statusCode, 200)
    t.equal(res.json().data.length, 2)
  })

  t.test('its owners read a trail — the organization token, the owners team’s token, the owners team’s members; anyone else gets the ordinary 404', async (t) => {
    const missing = await app.inject({ url: '/api/v2/team-workspaces/tws-nope', headers: { authorization: `Bearer ${TOKENS.organization}` } })
    const byOrganization = (await trail.read(TOKENS.organization)).json()
    t.ok(byOrganization.data.length > 0)
    for (const [who, token] of [['the owners team’s token', TOKENS.ownersTeam], ['an owner’s user token', TOKENS.owner]] as const) {
      const res = await trail.read(token)
      t.equal(res.statusCode, 200, who)
      t.same(res.json(), byOrganization, `${who}: the organization’s trail, as its organization token reads it`)
    }
    for (const [who, token] of [
      ['a workspace admin', TOKENS.workspaceAdmin], ['a manage-workspaces member', TOKENS.manager],
      ['a team token', TOKENS.nonOwnerTeam], ['a member', TOKENS.writer], ['a user of another organization', TOKENS.otherOrganization], ['a user in no team', TOKENS.noTeam]
    ] as const) {
      const res = await trail.read(token)
      t.equal(res.statusCode, 404, who)
      t.equal(res.body, missing.body, `${who}: byte-identical to any 404`)
      t.same(res.json(), NOT_FOUND)
      t.equal(res.headers['content-type'], missing.headers['content-type'])
    }
    const acme = (await trail.read(TOKENS.organization)).json().data
    t.ok(acme.length > 0 && acme.every((e: any) => e.auth.organization_id === 'org-acme'), 'acme’s token: acme’s events only (not globex’s seed grant)')
    const initech = (await trail.read(INITECH)).json().data
    t.ok(initech.every((e: any) => e.auth.organization_id === 'org-initech'), 'initech’s token: initech’s only')
    const anonymous = await trail.read(null)
    t.equal(anonymous.statusCode, 401)
    t.same(anonymous.json(), { errors: [{ status: '401', title: 'unauthorized' }] })
  })

  t.test('an owner of two organizations names one; an owner no more reads nothing from the next request', async (t) => {
    await app.teamAccess.directory.createTeam({ organizationId: 'org-initech', name: 'owners', owners: true })
    const initechOwners = await app.db.selectFrom('teams').select('id').where('organization_id', '=', 'org-initech').where('is_owners', '=', true).executeTakeFirstOrThrow()
    await app.teamAccess.directory.addMember({ teamId: initechOwners.id, userId: 'user-owner' })
    await app.teamAccess.directory.addMember({ teamId: initechOwners.id, userId: 'user-manager' })
    const both = await trail.read(TOKENS.owner)
    t.equal(both.statusCode, 422, 'which trail is not said')
    t.same(both.json().errors[0], { status: '422', title: 'invalid parameter', detail: 'this token owns several organizations: name one with organization=<its name>', source: { parameter: 'organization' } })
    t.same((await trail.read(TOKENS.owner, '?organization=initech')).json(), (await trail.read(INITECH)).json(), 'initech’s, named')
    t.same((await trail.read(TOKENS.owner, '?organization=acme')).json(), (await trail.read(TOKENS.organization)).json(), 'acme’s, named')
    const other = await trail.read(TOKENS.owner, '?organization=globex')
    t.equal(other.statusCode, 404, 'an organization it does not own: the ordinary 404')
    t.equal((await trail.read(TOKENS.owner, '?organization=nowhere')).statusCode, 404)
    await app.teamAccess.directory.removeMember({ teamId: initechOwners.id, userId: 'user-owner' })
    t.equal((await trail.read(TOKENS.owner, '?organization=initech')).statusCode, 404, 'an owner no more: from the very next request')
    t.equal((await trail.read(TOKENS.owner)).statusCode, 200, 'its one organization again, unnamed')
  })
})
