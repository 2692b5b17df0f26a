import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { addBody, client } from '../team-workspaces/client.js'

/**
 * A burst no limit forbids is served, never refused (issue: the per-caller cap answered 429 to a
 * burst that no limit the operator set forbids). The standalone defaults, as the environment
 * gives them (CALLER_CONCURRENCY, QUEUE_WAIT_MS, the pool), with only RATE_LIMIT chosen.
 */
const defaults = (rateLimit: string) => {
  const { callerConcurrency, queueWaitMs, rateLimit: limit } = loadConfig({ RATE_LIMIT: rateLimit })
  return { callerConcurrency: callerConcurrency!, queueWaitMs: queueWaitMs!, rateLimit: limit }
}

t.test(`rate limit off: 50 concurrent identical adds by one caller on ${ENGINE} → one 200 and 49 × 422, no 429`, async (t) => {
  const config = defaults('0')
  t.equal(config.callerConcurrency, 8, 'the default per-caller cap is in force')
  const app = await build(t, { seed: world, config })
  const api = client(t, app)
  const body = addBody('team-green', 'ws-prod', { access: 'write' })
  const results = await Promise.all(Array.from({ length: 50 }, () => api.add(body, { token: TOKENS.organization })))
  const statuses = results.map((r) => r.statusCode)
  t.same(count(statuses), { 200: 1, 422: 49 }, statuses.join(' '))
  for (const r of results.filter((x) => x.statusCode === 422)) {
    t.match(r.json(), { errors: [{ status: '422', title: 'invalid attribute', detail: 'Team has already been taken' }] })
  }
})

t.test(`default rate limit (30/s): 20 concurrent requests by one caller on ${ENGINE} → 20 × 200`, async (t) => {
  const config = defaults('30')
  t.equal(config.rateLimit, 30)
  const app = await build(t, { seed: world, config })
  const api = client(t, app)
  const results = await Promise.all(Array.from({ length: 20 }, () => api.show('tws-red-prod', { token: TOKENS.organization })))
  t.same(count(results.map((r) => r.statusCode)), { 200: 20 })
})

function count (statuses: number[]): Record<number, number> {
  const out: Record<number, number> = {}
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1
  return out
}
