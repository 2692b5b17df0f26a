import t from 'tap'
import { build, bearer, ENGINE } from '../helper.js'
import { recordFigure } from './figures.js'

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

  t.test('without a valid token the budget is the client address’s', async (t) => {
    await waitForWindow()
    const statuses: number[] = []
    for (let i = 0; i < 7; i++) statuses.push((await get(i % 2 === 0 ? bearer(`unknown-token-${i}`) : {})).statusCode)
    t.same(statuses, [401, 401, 401, 401, 401, 429, 429])
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
