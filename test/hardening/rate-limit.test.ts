import t from 'tap'
import { randomBytes } from 'node:crypto'
import { buildApp } from '../../src/app.js'
import { applySeed } from '../../src/directory/seed.js'
import { build, bearer, ENGINE, freshLocation, testConfig } from '../helper.js'
import { recordFigure } from './figures.js'
import { connectRateLimitRedis } from '../../src/limits/rate-limit-redis.js'
import type { FastifyBaseLogger } from 'fastify'

/** RATE_LIMIT (DESIGN §5): requests per second per caller, per address without a valid token. */
const seed = {
  users: [
    { id: 'user-ann', username: 'ann', tokens: ['ann-token-one', 'ann-token-two'] },
    { id: 'user-ben', username: 'ben', tokens: ['ben-token-one'] }
  ],
  organizations: [{ id: 'org-a', name: 'a', teams: [{ name: 'owners', owners: true, members: ['ann', 'ben'] }], workspaces: [{ id: 'ws-a', name: 'a' }] }]
}
const LIST = '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-a'

t.test(`rate limiting on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed, config: { rateLimit: 5 } })
  const get = (headers: Record<string, string>, url = LIST) => app.inject({ url, headers })
  const waitForWindow = () => new Promise((resolve) => setTimeout(resolve, 1100))

  t.test('one caller’s tokens share one budget; the next request is 429 with the limit headers', async (t) => {
    await waitForWindow()
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) statuses.push((await get(bearer(i % 2 === 0 ? 'ann-token-one' : 'ann-token-two'))).statusCode)
    t.same(statuses, [200, 200, 200, 200, 200])
    const limited = await get(bearer('ann-token-two'))
    t.equal(limited.statusCode, 429)
    t.match(limited.json(), { errors: [{ status: '429', title: 'too many requests', detail: /More than 5 requests per second/ }] })
    t.match(limited.headers['content-type'], /^application\/vnd\.api\+json/)
    t.equal(limited.headers['x-ratelimit-limit'], '5')
    t.equal(limited.headers['x-ratelimit-remaining'], '0')
    t.ok(Number(limited.headers['x-ratelimit-reset']) >= 0, 'x-ratelimit-reset')
    t.ok(limited.headers['retry-after'], 'retry-after')

    const other = await get(bearer('ben-token-one'))
    t.equal(other.statusCode, 200, 'another caller has a budget of their own')
    t.equal(other.headers['x-ratelimit-remaining'], '4')

    await waitForWindow()
    t.equal((await get(bearer('ann-token-one'))).statusCode, 200, 'the budget comes back after a second')
    await recordFigure(`rate limiting (${ENGINE})`, '5 requests/s per caller: 6th answered 429 with X-RateLimit-* headers; shared across one user’s tokens; reset after 1 s', '429 past the limit')
  })

  t.test('lookups of unknown tokens are the client address’s budget; no token costs none', async (t) => {
    // the budget is per clock second: a trial counts when its seven requests fall in one (on a
    // busy machine they may straddle two, and the second's failures start again); each trial has
    // tokens of its own, since a token found unknown is answered 401 without counting for seconds
    let statuses: number[] = []
    for (let trial = 0; trial < 5; trial++) {
      await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5)) // a second's start
      const second = Math.floor(Date.now() / 1000)
      statuses = []
      for (let i = 0; i < 7; i++) statuses.push((await get(bearer(`unknown-token-${trial}-${i}`))).statusCode)
      if (Math.floor(Date.now() / 1000) === second) break
    }
    t.same(statuses, [401, 401, 401, 401, 401, 429, 429])
    t.equal((await get({})).statusCode, 401, 'a request without a token needs no lookup: 401')
    t.equal((await get(bearer('ann-token-one'))).statusCode, 200, 'a valid token from the same address is served')
  })

  t.test('ping and discovery are not limited', async (t) => {
    for (let i = 0; i < 8; i++) t.equal((await app.inject('/api/v2/ping')).statusCode, 204)
  })
})

t.test('RATE_LIMIT=0 switches it off', async (t) => {
  const app = await build(t, { seed, config: { rateLimit: 0 } })
  for (let i = 0; i < 40; i++) {
    const res = await app.inject({ url: LIST, headers: bearer('ann-token-one') })
    if (res.statusCode !== 200) t.fail(`request ${i}: ${res.statusCode}`)
  }
  const res = await app.inject({ url: LIST, headers: bearer('ann-token-one') })
  t.equal(res.headers['x-ratelimit-limit'], undefined)
})

/**
 * REDIS_URL (DESIGN §5): the budget lives in Redis, so that replicas share it — here two apps,
 * each on a database of its own, on the machine's Redis (TEST_REDIS_URL, else 127.0.0.1:6379).
 * The caller's id is new on every run, so runs never share a budget.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

t.test(`with REDIS_URL, two apps share one budget per caller, on ${ENGINE}`, async (t) => {
  const user = `user-shared-${randomBytes(6).toString('hex')}`
  const shared = { ...seed, users: [...seed.users, { id: user, username: 'shared', tokens: ['shared-token-one'] }], organizations: [{ ...seed.organizations[0]!, teams: [{ name: 'owners', owners: true, members: ['ann', 'ben', 'shared'] }] }] }
  const [one, two] = await Promise.all([build(t, { seed: shared, config: { rateLimit: 5, redisUrl: REDIS_URL } }), build(t, { seed: shared, config: { rateLimit: 5, redisUrl: REDIS_URL } })])
  // the budget is per second from the first request: a trial counts when its eight requests fit in
  // one window (a busy machine may stretch them over two), and when no check went without Redis
  // (a command past its 250 ms on a busy machine fails open: that app answers a full budget,
  // remaining 5); otherwise the window runs out, and again. Apps that never share fail every trial.
  let statuses: number[] = []
  let remaining: string[] = []
  for (let attempt = 0; attempt < 5; attempt++) {
    statuses = []
    remaining = []
    const began = performance.now()
    for (let i = 0; i < 8; i++) {
      const res = await (i % 2 === 0 ? one : two).inject({ url: LIST, headers: bearer('shared-token-one') })
      statuses.push(res.statusCode)
      remaining.push(String(res.headers['x-ratelimit-remaining']))
    }
    if (performance.now() - began < 800 && !remaining.includes('5')) break
    await new Promise((resolve) => setTimeout(resolve, 1100))
  }
  t.same(statuses, [200, 200, 200, 200, 200, 429, 429, 429], 'five in all, not five each')
  t.same(remaining.slice(0, 5), ['4', '3', '2', '1', '0'], 'each app sees what the other counted')
  await recordFigure(`rate limiting through Redis (${ENGINE})`, '5 requests/s per caller across two apps on one Redis: 5 × 200, then 429', '5 in all')
})

t.test(`Redis unreachable: requests are served (the limit fails open), one warning, on ${ENGINE}`, async (t) => {
  const lines: string[] = []
  const app = await buildApp(testConfig(await freshLocation(t), { rateLimit: 2, redisUrl: 'redis://127.0.0.1:1', logLevel: 'warn' }), { logStream: { write: (line) => { lines.push(line) } } })
  t.teardown(() => app.close())
  await applySeed(app.db, seed)
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) {
    statuses.push((await app.inject({ url: LIST, headers: bearer('ann-token-one') })).statusCode)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.same(statuses, [200, 200, 200, 200, 200, 200], 'all served, past the limit of 2')
  const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 40 && /Redis unreachable/.test(l.msg))
  t.equal(warnings.length, 1, 'one warning for the outage, however many reconnection attempts')
  t.equal(warnings[0]?.redis, '127.0.0.1:1', 'naming where, never the password')
})

t.test(`Redis unreachable: /metrics says so, and the warning comes again while it lasts (at most once per interval), on ${ENGINE}`, async (t) => {
  const app = await buildApp(testConfig(await freshLocation(t), { rateLimit: 2, redisUrl: 'redis://127.0.0.1:1' }), { logger: false })
  t.teardown(() => app.close())
  const metrics = await app.inject({ url: '/metrics' })
  t.match(metrics.body, /^team_access_rate_limit_redis_up 0$/m, '/metrics: team_access_rate_limit_redis_up 0')
  t.equal((await app.inject({ url: '/readyz' })).statusCode, 200, 'and the service is ready: the limit fails open')

  // the connection itself, with a short repeat so that the test need not wait a minute
  const said: Array<{ at: number, msg: string }> = []
  const log = { warn: (_fields: unknown, msg: string) => said.push({ at: Date.now(), msg }), info: () => {} } as unknown as FastifyBaseLogger
  const redis = await connectRateLimitRedis('redis://127.0.0.1:1', log, { repeatWarningMs: 300 })
  t.teardown(() => redis.close())
  t.equal(redis.reachable(), false)
  await new Promise((resolve) => setTimeout(resolve, 1000))
  t.ok(said.length >= 3 && said.length <= 5, `${said.length} warnings in about 1 s with a repeat every 300 ms (${said.map((s) => s.msg).join(' | ')})`)
  t.match(said[0]!.msg, /Redis unreachable/)
  t.ok(said.slice(1).every((s) => /Redis still unreachable/.test(s.msg)), 'then "still unreachable"')
  const gaps = said.slice(1).map((s, i) => s.at - said[i]!.at)
  t.ok(gaps.slice(1).every((gap) => gap >= 250), `never more often than the interval (gaps ${gaps.join(', ')} ms)`)
})
