import t from 'tap'
import { build, bearer, ENGINE } from './helper.js'
import { TOKENS, world } from './fixtures/world.js'
import { parseMetrics, sample } from './prometheus.js'
import { loadConfig } from '../src/config.js'
import { recordFigure } from './hardening/figures.js'

/**
 * Load shedding: an event loop that drowns — here, held busy 250 ms at
 * a time, over and over — gets API requests answered 503 with Retry-After, as JSON:API
 * documents, and /readyz failing, while /healthz and /metrics still answer; once the loop is
 * free again, 200s. No timing is asserted: the test waits (within bounds) for each state.
 */
const SHOW = '/api/v2/team-workspaces/tws-writers-prod'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function busy (ms: number): void {
  const until = Date.now() + ms
  while (Date.now() < until) { /* the event loop is blocked */ }
}

t.test(`a blocked event loop sheds API requests with 503 and Retry-After, then recovers, on ${ENGINE}`, async (t) => {
  const app = await build(t, {
    seed: world,
    config: { loadShedding: { maxEventLoopDelayMs: 100, maxHeapUsedBytes: 0, maxRssBytes: 0, sampleIntervalMs: 100, retryAfterS: 3 } }
  })
  const show = () => app.inject({ url: SHOW, headers: bearer(TOKENS.organization) })
  const servedAndReady = async () => {
    for (const until = Date.now() + 10_000; Date.now() < until;) {
      if ((await show()).statusCode === 200 && (await app.inject('/readyz')).statusCode === 200) return true
      await sleep(50)
    }
    return false
  }
  // starting (the database, migrations, the seed) held the loop too: wait for the first calm sample
  t.ok(await servedAndReady(), 'served and ready to begin with')

  // the loop is held 250 ms out of every ~270
  const blocker = setInterval(() => busy(250), 20)
  t.teardown(() => clearInterval(blocker))
  let shed
  let servedFirst = 0
  for (const until = Date.now() + 10_000; Date.now() < until;) {
    const res = await show()
    if (res.statusCode === 503) { shed = res; break }
    servedFirst++
    t.equal(res.statusCode, 200, 'until then, served')
    await sleep(10)
  }
  t.ok(shed, 'an API request is shed')
  t.equal(shed?.headers['retry-after'], '3', 'Retry-After')
  t.match(shed?.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(shed?.json(), { errors: [{ status: '503', title: 'service unavailable', detail: 'The service is overloaded (event-loop delay); retry in 3 s.' }] })
  const ready = await app.inject('/readyz')
  t.equal(ready.statusCode, 503, '/readyz fails while under pressure')
  t.same(ready.json(), { errors: [{ status: '503', title: 'service unavailable', detail: 'The service is overloaded.' }] })
  t.equal((await app.inject('/healthz')).statusCode, 200, '/healthz still answers')
  const metrics = await app.inject('/metrics')
  t.equal(metrics.statusCode, 200, '/metrics still answers')
  t.ok(sample(parseMetrics(metrics.body), 'http_request_duration_seconds_count', { route: '/api/v2/team-workspaces/:id', status_code: '503' }) >= 1, 'the 503s are counted')

  clearInterval(blocker)
  const recovered = await servedAndReady()
  t.ok(recovered, 'once the loop is free: 200, and /readyz ready again')
  await recordFigure(`load shedding (${ENGINE})`, `event loop held 250 ms of every 270 (threshold 100 ms): ${servedFirst} served before the first sample showed it, then 503 documents with Retry-After, /readyz 503, /healthz and /metrics 200; loop free: ${recovered ? '200 and ready again' : 'not recovered'}`, '503 + Retry-After while overloaded, 200 after')
})

t.test('the thresholds come from the settings', async (t) => {
  const defaults = loadConfig({})
  t.equal(defaults.loadShedding?.maxEventLoopDelayMs, 1000, 'event-loop delay: 1 s by default')
  t.ok((defaults.loadShedding?.maxHeapUsedBytes ?? 0) > 100 * 1024 * 1024, 'heap: 90% of the heap limit by default')
  t.equal(defaults.loadShedding?.maxRssBytes, 0, 'resident memory: off by default')
  const set = loadConfig({ LOAD_SHED_EVENT_LOOP_DELAY_MS: '0', LOAD_SHED_HEAP_USED_MB: '512', LOAD_SHED_RSS_MB: '1024' })
  t.same(set.loadShedding, { maxEventLoopDelayMs: 0, maxHeapUsedBytes: 512 * 1024 * 1024, maxRssBytes: 1024 * 1024 * 1024 })
  t.throws(() => loadConfig({ LOAD_SHED_RSS_MB: '-1' }), { name: 'ConfigError', message: /LOAD_SHED_RSS_MB must be >= 0/ })
})
