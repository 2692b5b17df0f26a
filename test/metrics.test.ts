import t from 'tap'
import Fastify from 'fastify'
import fastifyMetrics from 'fastify-metrics'
import promClient from 'prom-client'
import teamAccess, { registerPoolMetrics } from '../src/index.js'
import { connect } from '../src/db/connect.js'
import { migrate } from '../src/db/migrate.js'
import { build, bearer, ENGINE, freshLocation } from './helper.js'
import { TOKENS, world } from './fixtures/world.js'
import { parseMetrics, sample } from './prometheus.js'
import { recordFigure } from './hardening/figures.js'

const SHOW = '/api/v2/team-workspaces/:id'
const LIST = '/api/v2/team-workspaces'

t.test(`/metrics after known traffic on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world, config: { rateLimit: 3 } })
  const scrape = async () => {
    const res = await app.inject('/metrics')
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/)
    return parseMetrics(res.body)
  }
  const before = await scrape()
  t.equal(sample(before, 'http_request_duration_seconds_count', { route: SHOW }), 0, 'no API request counted yet')

  // 3 shows answered 200, then 2 × 429 for the same caller; 2 × 404 and 1 list for another; 1 × 401
  for (let i = 0; i < 5; i++) await app.inject({ url: '/api/v2/team-workspaces/tws-writers-prod', headers: bearer(TOKENS.organization) })
  for (let i = 0; i < 2; i++) await app.inject({ url: '/api/v2/team-workspaces/tws-none-such', headers: bearer(TOKENS.owner) })
  await app.inject({ url: '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-prod', headers: bearer(TOKENS.owner) })
  await app.inject({ url: '/api/v2/team-workspaces/tws-writers-prod', headers: bearer('no-such-token-at-all') })
  await app.inject({ method: 'POST', url: '/api/v2/team-workspaces', headers: { ...bearer(TOKENS.manager), 'content-type': 'application/vnd.api+json' }, payload: '{"data":{}}' })
  await app.inject('/healthz')

  const after = await scrape()
  const count = (route: string, method: string, status: string) => sample(after, 'http_request_duration_seconds_count', { route, method, status_code: status })
  t.equal(count(SHOW, 'GET', '200'), 3, 'GET show 200 × 3')
  t.equal(count(SHOW, 'GET', '429'), 2, 'GET show 429 × 2 (rate limited)')
  t.equal(count(SHOW, 'GET', '404'), 2, 'GET show 404 × 2')
  t.equal(count(SHOW, 'GET', '401'), 1, 'GET show 401 × 1')
  t.equal(count(LIST, 'GET', '200'), 1, 'GET list 200 × 1')
  t.equal(count(LIST, 'POST', '422'), 1, 'POST 422 × 1')
  t.equal(count('/healthz', 'GET', '200'), 1, 'GET /healthz 200 × 1')

  // a latency histogram: cumulative buckets, the last of them (+Inf) equal to the count
  const buckets = after.filter((s) => s.name === 'http_request_duration_seconds_bucket' && s.labels.route === SHOW && s.labels.status_code === '200')
  t.ok(buckets.length >= 10, `${buckets.length} buckets`)
  t.ok(buckets.every((b, i) => i === 0 || b.value >= buckets[i - 1]!.value), 'cumulative')
  t.equal(buckets.find((b) => b.labels.le === '+Inf')?.value, 3)
  t.ok(sample(after, 'http_request_duration_seconds_sum', { route: SHOW, status_code: '200' }) > 0, 'a duration sum')

  t.ok(after.some((s) => s.name === 'process_resident_memory_bytes'), 'process metrics')
  t.ok(after.some((s) => s.name === 'nodejs_eventloop_lag_seconds'), 'event-loop lag')
  if (ENGINE === 'postgres') {
    t.equal(sample(after, 'team_access_db_pool_max'), 10, 'the pool size')
    t.ok(sample(after, 'team_access_db_pool_connections') >= 1, 'connections open')
    t.equal(sample(after, 'team_access_db_pool_in_use'), 0, 'none in use between requests')
    t.equal(sample(after, 'team_access_db_pool_waiting'), 0, 'nobody waiting')
  } else {
    t.notOk(after.some((s) => s.name.startsWith('team_access_db_pool')), 'no pool on the embedded database')
  }
  await recordFigure(`metrics (${ENGINE})`, `after 11 known requests, /metrics counted each by route, method and status: show ${count(SHOW, 'GET', '200')} × 200, ${count(SHOW, 'GET', '429')} × 429, ${count(SHOW, 'GET', '404')} × 404, ${count(SHOW, 'GET', '401')} × 401; list ${count(LIST, 'GET', '200')} × 200; add ${count(LIST, 'POST', '422')} × 422${ENGINE === 'postgres' ? `; pool ${sample(after, 'team_access_db_pool_connections')}/${sample(after, 'team_access_db_pool_max')} connections open` : ''}`, 'the exact counts')
})

t.test('two apps in one process keep their own counts', async (t) => {
  const one = await build(t)
  const two = await build(t)
  await one.inject('/healthz')
  await one.inject('/healthz')
  await two.inject('/healthz')
  const healthz = async (app: typeof one) => sample(parseMetrics((await app.inject('/metrics')).body), 'http_request_duration_seconds_count', { route: '/healthz' })
  t.equal(await healthz(one), 2)
  t.equal(await healthz(two), 1)
})

t.test(`a host with metrics of its own adds ours (as the README shows), on ${ENGINE}`, async (t) => {
  const connection = await connect(await freshLocation(t))
  t.teardown(() => connection.close())
  await migrate(connection.db)

  const host = Fastify()
  t.teardown(() => host.close())
  await host.register(fastifyMetrics.default, { endpoint: '/metrics' }) // the host's, on prom-client's global registry
  host.get('/hello', async () => ({ hello: 'world' }))
  await host.register(teamAccess, { prefix: '/tfe/api/v2', database: connection.db, migrate: false })
  registerPoolMetrics(promClient.register, connection)
  t.teardown(() => promClient.register.clear())

  await host.inject('/hello')
  await host.inject({ url: '/tfe/api/v2/team-workspaces/tws-1', headers: bearer('no-such-token-at-all') })
  const samples = parseMetrics((await host.inject('/metrics')).body)
  t.equal(sample(samples, 'http_request_duration_seconds_count', { route: '/hello', status_code: '200' }), 1, 'the host’s route')
  t.equal(sample(samples, 'http_request_duration_seconds_count', { route: '/tfe/api/v2/team-workspaces/:id', status_code: '401' }), 1, 'ours, timed by the host’s plugin')
  t.equal(samples.some((s) => s.name === 'team_access_db_pool_max'), ENGINE === 'postgres', 'the pool gauges, on PostgreSQL')

  // and the standalone app in the same process keeps its own registry
  const app = await build(t)
  t.equal((await app.inject('/metrics')).statusCode, 200, 'no collision with the global registry')
})
