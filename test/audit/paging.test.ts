import { randomUUID } from 'node:crypto'
import t from 'tap'
import { sql, type Kysely } from 'kysely'
import { purgeExpiredEvents } from '../../src/audit/audit-retention.js'
import type { Database } from '../../src/db/database.js'
import { applySeed } from '../../src/directory/seed.js'
import { pageNumbers } from '../../src/jsonapi/document.js'
import { build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { trailClient } from './trail-client.js'
import { table } from '../../src/db/tables.js'

/**
 * Issue 18: a page of the trail is found by skipping keys of the primary key, never by reading the
 * events it skips, and every page is the page the plain statement serves — a count of every event
 * after `since` and OFFSET in the trail's order (time, then id), which `expected` runs here, as the
 * reference: at every depth and size, with `since` (ties included), after a purge, and with
 * concurrent writers.
 */
async function expected (db: Kysely<Database>, organizationId: string, since: string | undefined, number: number, size: number) {
  const after = since === undefined ? sql`` : sql`and occurred_at > ${since}::timestamptz`
  const { rows: [counted] } = await sql<{ n: string | number }>`select count(*) as n from ${table.audit_events} where organization_id = ${organizationId} ${after}`.execute(db)
  const { rows } = await sql<{ id: string }>`select id from ${table.audit_events} where organization_id = ${organizationId} ${after}
    order by occurred_at, id limit ${size} offset ${(number - 1) * size}`.execute(db)
  const total = Number(counted!.n)
  const { totalPages, prev, next } = pageNumbers({ number, size }, total)
  return { ids: rows.map((r) => r.id), pagination: { current_page: number, prev_page: prev, next_page: next, total_pages: totalPages, total_count: total } }
}

const query = (number: number, size: number, since?: string) =>
  `?page%5Bnumber%5D=${number}&page%5Bsize%5D=${size}${since === undefined ? '' : `&since=${encodeURIComponent(since)}`}`

/** `count` events of acme with their own times, `days` ago and on, `perMoment` at each moment (ties go in by id). */
function oldEvents (count: number, days: number, perMoment: number) {
  const ids = Array.from({ length: count }, () => randomUUID())
  const moments = Math.ceil(count / perMoment)
  // sorted within each moment, as a trail in (time, id) order holds them
  for (let m = 0; m < moments; m++) ids.splice(m * perMoment, perMoment, ...ids.slice(m * perMoment, (m + 1) * perMoment).sort())
  return Array.from({ length: count }, (_, i) => ({
    id: ids[i]!,
    organization_id: 'org-acme',
    occurred_at: sql<Date>`now() - make_interval(days => ${days}::int) + make_interval(secs => ${Math.floor(i / perMoment)}::int)` as unknown as Date,
    accessor_kind: 'system' as const,
    accessor_id: null,
    accessor_description: 'import',
    request_id: `old-${i}`,
    action: 'add_team' as const,
    workspace_id: 'ws-prod',
    team_id: 'team-red',
    team_name: 'red',
    permissions: 'access=read'
  }))
}

t.test(`the trail's pages are the pages of count + OFFSET, on ${ENGINE}`, async (t) => {
  const app = await build(t)
  const trail = trailClient(t, app)
  // 90 imported events 100 days ago (3 per second: ties), then the seed's, then the API's
  await app.db.insertInto('audit_events').values(oldEvents(90, 100, 3)).execute()
  await applySeed(app.db, world)

  // concurrent writers in one organization: updates on four rows, each a change
  const rows = ['tws-admins-prod', 'tws-writers-prod', 'tws-red-prod', 'tws-blue-dev']
  const levels = ['read', 'plan', 'write', 'admin']
  const writes = await Promise.all(Array.from({ length: 60 }, (_, i) => app.inject({
    method: 'PATCH',
    url: `/api/v2/team-workspaces/${rows[i % 4]}`,
    headers: { authorization: `Bearer ${TOKENS.organization}`, 'content-type': 'application/vnd.api+json' },
    payload: { data: { attributes: { access: levels[Math.floor(i / 4) % 4] } } }
  })))
  t.ok(writes.every((r) => r.statusCode === 200), '60 concurrent writes answered 200')
  const { rows: [all] } = await sql<{ n: string | number }>`select count(*) as n from ${table.audit_events} where organization_id = 'org-acme'`.execute(app.db)
  const total = Number(all!.n)
  t.ok(total > 90 + 5, `${total} events`)

  const same = async (what: string, number: number, size: number, since?: string) => {
    const res = await trail.read(TOKENS.organization, query(number, size, since))
    t.equal(res.statusCode, 200, what)
    const body = res.json()
    const want = await expected(app.db, 'org-acme', since, number, size)
    t.same({ ids: body.data.map((e: { id: string }) => e.id), pagination: body.pagination }, want, what)
    return body
  }

  t.test('page 1, the middle, the last, past the end, far past the end; at several sizes', async (t) => {
    for (const size of [1, 7, 50, 1000]) {
      const last = Math.ceil(total / size)
      for (const number of [1, 2, Math.ceil(last / 2), last - 1, last, last + 1, 999_999_999_999].filter((n) => n >= 1)) {
        await same(`page ${number} of ${size}`, number, size)
      }
    }
  })

  t.test('every page of the trail in turn: each event once, in order, none missing', async (t) => {
    const { events } = await trail.readAll(TOKENS.organization, '', 13)
    t.same(events.map((e) => e.id), (await expected(app.db, 'org-acme', undefined, 1, 1000)).ids)
    t.equal(new Set(events.map((e) => e.id)).size, total, 'no event twice')
  })

  t.test('since: an event’s own time (a tie), between two moments, before all, after all', async (t) => {
    const served = (await trail.read(TOKENS.organization, query(1, 1000))).json().data.map((e: { timestamp: string }) => e.timestamp)
    const between = new Date(Date.parse(served[50]) + 500).toISOString()
    for (const since of [served[0], served[4], served[50], between, served[95], served.at(-2), served.at(-1), '2000-01-01T00:00:00Z', '2999-01-01T00:00:00Z']) {
      const { rows: [after] } = await sql<{ n: string | number }>`select count(*) as n from ${table.audit_events} where organization_id = 'org-acme' and occurred_at > ${since}::timestamptz`.execute(app.db)
      const n = Number(after!.n)
      for (const [number, size] of [[1, 1000], [1, 7], [2, 7], [Math.max(1, Math.ceil(n / 7)), 7], [Math.ceil(n / 7) + 1, 7]] as const) {
        await same(`since ${since}, page ${number} of ${size}`, number, size, since)
      }
    }
  })

  t.test('after a purge: the pages are the same as ever', async (t) => {
    t.equal(await purgeExpiredEvents(app.db, 30), 90, 'the 90 imported events')
    const left = total - 90
    for (const [number, size] of [[1, 7], [2, 7], [Math.ceil(left / 7), 7], [Math.ceil(left / 7) + 1, 7], [1, 1000]] as const) {
      await same(`after the purge, page ${number} of ${size}`, number, size)
    }
    const body = await same('and a page with since', 1, 5, (await trail.read(TOKENS.organization, query(3, 1))).json().data[0].timestamp)
    t.equal(body.pagination.total_count, left - 3)
    // a new event follows on
    const res = await app.inject({ method: 'PATCH', url: '/api/v2/team-workspaces/tws-blue-dev', headers: { authorization: `Bearer ${TOKENS.organization}`, 'content-type': 'application/vnd.api+json' }, payload: { data: { attributes: { access: 'read' } } } })
    t.equal(res.statusCode, 200)
    await same('after one more write, the last page', Math.ceil((left + 1) / 7), 7)
  })
})
