import t from 'tap'
import Fastify from 'fastify'
import { sql } from 'kysely'
import teamAccess from '../../src/plugin.js'
import { purgeExpiredEvents } from '../../src/audit/audit-retention.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { build, freshDatabase, bearer, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'

/** DESIGN §5 and §8: events older than AUDIT_RETENTION_DAYS are purged in the background, never on a request's path. */

const event = (daysAgo: number, i = 0) => ({
  organization_id: 'org-acme',
  occurred_at: sql<Date>`now() - make_interval(days => ${daysAgo}::int, secs => ${i}::int)` as unknown as Date,
  accessor_kind: 'system' as const,
  accessor_id: null,
  accessor_description: 'seed',
  request_id: `old-${daysAgo}-${i}`,
  action: 'add_team' as const,
  workspace_id: 'ws-prod',
  team_id: 'team-red',
  team_name: 'red',
  permissions: 'access=read'
})
const ages = async (db: Awaited<ReturnType<typeof freshDatabase>>['db']) =>
  (await db.selectFrom('audit_events').select('request_id').orderBy('request_id').execute()).map((e) => e.request_id)
const until = async (done: () => Promise<boolean>) => {
  for (let i = 0; i < 250 && !(await done()); i++) await new Promise((resolve) => setTimeout(resolve, 20))
}

t.test('AUDIT_RETENTION_DAYS: 90 days unless set; 0 keeps everything; nothing else', async (t) => {
  t.equal(loadConfig({}).auditRetentionDays, 90)
  t.equal(loadConfig({ AUDIT_RETENTION_DAYS: '14' }).auditRetentionDays, 14)
  t.equal(loadConfig({ AUDIT_RETENTION_DAYS: '0' }).auditRetentionDays, 0)
  for (const bad of ['-1', 'ninety', '1.5']) t.throws(() => loadConfig({ AUDIT_RETENTION_DAYS: bad }), ConfigError, bad)
})

t.test(`the purge deletes exactly the events older than the retention, on ${ENGINE}`, async (t) => {
  const { db } = await freshDatabase(t)
  await db.insertInto('audit_events').values([event(31), event(45), event(29), event(1)]).execute()
  t.equal(await purgeExpiredEvents(db, 0), 0, '0 keeps everything')
  t.equal((await ages(db)).length, 4)
  t.equal(await purgeExpiredEvents(db, 30), 2, 'two were older than 30 days')
  t.same(await ages(db), ['old-1-0', 'old-29-0'])
  t.equal(await purgeExpiredEvents(db, 30), 0, 'again: nothing left to purge')
})

t.test(`the purge goes through any number of events, a batch at a time, on ${ENGINE}`, async (t) => {
  const { db } = await freshDatabase(t)
  await db.insertInto('audit_events').values(Array.from({ length: 2500 }, (_, i) => event(100, i))).execute()
  await db.insertInto('audit_events').values(event(2)).execute()
  t.equal(await purgeExpiredEvents(db, 90), 2500)
  t.same(await ages(db), ['old-2-0'])
})

t.test(`the plugin purges in the background: on start, then on its timer, on ${ENGINE}`, async (t) => {
  const { db } = await freshDatabase(t)
  await db.insertInto('audit_events').values([event(40), event(3)]).execute()
  const app = Fastify()
  await app.register(teamAccess, { database: db, migrate: false, auditRetentionDays: 30, auditPurgeEveryMs: 50 })
  t.teardown(() => app.close())
  await app.ready()
  await until(async () => (await ages(db)).length === 1)
  t.same(await ages(db), ['old-3-0'], 'on start')
  await db.insertInto('audit_events').values(event(31)).execute()
  await until(async () => (await ages(db)).length === 1)
  t.same(await ages(db), ['old-3-0'], 'and again on the timer')
})

t.test(`never on a request's path, and not at all without a retention, on ${ENGINE}`, async (t) => {
  const hourly = await build(t, { seed: world, config: { auditRetentionDays: 30 } })
  await hourly.ready()
  await new Promise((resolve) => setTimeout(resolve, 200)) // the purge on start is over: there was nothing to purge
  await hourly.db.insertInto('audit_events').values(event(40)).execute()
  const res = await hourly.inject({ url: '/api/v2/organization/audit-trail', headers: bearer(TOKENS.organization) })
  t.equal(res.statusCode, 200)
  t.ok(res.json().data.some((e: { request: { id: string } }) => e.request.id === 'old-40-0'), 'the request reads the expired event: the next purge, not the request, removes it')

  const keeping = await build(t, { seed: world, config: { auditRetentionDays: 0, auditPurgeEveryMs: 20 } })
  await keeping.db.insertInto('audit_events').values(event(4000)).execute()
  await keeping.ready()
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.ok(await keeping.db.selectFrom('audit_events').select('id').where('request_id', '=', 'old-4000-0').executeTakeFirst(), '0: kept')
})
