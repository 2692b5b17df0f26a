import t from 'tap'
import { Cancelled, Scheduler } from '../ui/scheduler.js'

/**
 * The page's request scheduler (ui/scheduler.ts, DESIGN §12.2) against a stand-in of
 * @fastify/rate-limit's fixed window: `limit` requests a window per caller, the headers it sends
 * (`x-ratelimit-limit`, `-remaining`, `-reset`), 429 with `retry-after` past the limit. The page's
 * behaviour in a browser, on the service itself, is test-browser/access-review-rate-limit.test.ts's.
 */
function rateLimited (limit: number, windowMs = 1000) {
  let start = 0
  let count = 0
  const arrivals: number[] = []
  const statuses: number[] = []
  /** Others spend the budget: this many requests counted in the current window at once. */
  const spend = (n: number) => { answer(); count += n - 1 }
  const answer = (): Response => {
    const now = performance.now()
    if (now >= start + windowMs) { start = now; count = 0 }
    count++
    arrivals.push(now)
    const reset = String(Math.ceil((start + windowMs - now) / 1000))
    const status = count > limit ? 429 : 200
    statuses.push(status)
    const headers: Record<string, string> = { 'x-ratelimit-limit': String(limit), 'x-ratelimit-remaining': String(Math.max(0, limit - count)), 'x-ratelimit-reset': reset }
    if (status === 429) headers['retry-after'] = reset
    return new Response(status === 429 ? '{"errors":[]}' : '{}', { status, headers })
  }
  return { answer, spend, arrivals, statuses }
}

t.test('keeps within the stated limit: no 429, never more than the limit in a window', async (t) => {
  const service = rateLimited(5)
  const scheduler = new Scheduler()
  const began = performance.now()
  const answers = await Promise.all(Array.from({ length: 16 }, async () => await scheduler.send(async () => {
    await new Promise((resolve) => setTimeout(resolve, 5))
    return service.answer()
  })))
  t.same(answers.map((a) => a.status), Array(16).fill(200), 'every answer 200')
  t.equal(scheduler.throttled, 0, 'no 429')
  for (const at of service.arrivals) {
    t.ok(service.arrivals.filter((other) => other >= at && other < at + 1000).length <= 5, 'at most 5 in any second')
  }
  // 16 requests at 4 a window (one left over): four windows, at least three waited out
  t.ok(performance.now() - began >= 3000, `paced: ${Math.round(performance.now() - began)} ms`)
})

t.test('a 429 is waited out (its retry-after) and the request sent again', async (t) => {
  const service = rateLimited(3)
  service.spend(3) // another client spent this window's budget
  const paused: number[] = []
  const scheduler = new Scheduler((until) => paused.push(until))
  const began = performance.now()
  const answers = await Promise.all(Array.from({ length: 3 }, async () => await scheduler.send(async () => service.answer())))
  t.same(answers.map((a) => a.status), [200, 200, 200], 'each answered 200 in the end')
  t.ok(scheduler.throttled >= 1, `the service answered 429 (${scheduler.throttled})`)
  t.ok(paused.length >= 1, 'the page was told it waits')
  t.ok(performance.now() - began >= 900, 'after the window reset')
})

t.test('no stated limit: the requests go at once, a few at a time', async (t) => {
  const scheduler = new Scheduler()
  let inFlight = 0
  let most = 0
  await Promise.all(Array.from({ length: 30 }, async () => await scheduler.send(async () => {
    most = Math.max(most, ++inFlight)
    await new Promise((resolve) => setTimeout(resolve, 10))
    inFlight--
    return new Response('{}', { status: 200 })
  })))
  t.equal(most, 6, 'six in flight at once once the first answer stated no limit: none held back to pace them')
  t.equal(scheduler.throttled, 0, 'no 429')
})

t.test('a request sent later lets the others pass; close drops what waits', async (t) => {
  const scheduler = new Scheduler()
  const order: string[] = []
  const send = async (name: string, later = false) => await scheduler.send(async () => {
    order.push(name)
    return new Response('{}', { status: 200 })
  }, later)
  // the first answer states no limit; until it comes, one at a time: the others queue
  const all = [send('first'), send('page 2', true), send('page 3', true), send('other list')]
  await Promise.all(all)
  t.same(order, ['first', 'other list', 'page 2', 'page 3'], 'the other list\'s first page before the rest of a list')
  const waiting = new Scheduler()
  const blocked = waiting.send(async () => await new Promise<Response>(() => {})) // never answers
  const dropped = waiting.send(async () => new Response('{}'))
  waiting.close()
  t.ok(await dropped.then(() => false, (err: unknown) => err instanceof Cancelled), 'a request still waiting is dropped (Cancelled)')
  void blocked
})

t.test('a request that reaches the service late, or is answered late, never takes the page past the limit', async (t) => {
  // a loaded browser: a request stalls up to 400 ms before it reaches the service (which counts it
  // then, as @fastify/rate-limit does) and up to 400 ms more before its answer comes back
  const service = rateLimited(10)
  const scheduler = new Scheduler()
  let seed = 20261128
  const random = () => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed / 2 ** 31 }
  const stall = async () => await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 400)))
  const answers = await Promise.all(Array.from({ length: 50 }, async () => await scheduler.send(async () => {
    await stall()
    const answer = service.answer()
    await stall()
    return answer
  })))
  t.same(answers.map((a) => a.status), Array(50).fill(200), 'every answer 200')
  t.equal(scheduler.throttled, 0, 'no 429')
  const most = Math.max(...service.arrivals.map((at) => service.arrivals.filter((other) => other >= at && other < at + 1000).length))
  t.ok(most <= 10, `at most 10 in any second where the service counts them (${most})`)
})
