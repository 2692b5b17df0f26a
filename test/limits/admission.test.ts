import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { connect as netConnect } from 'node:net'
import admission, { type AdmissionOptions } from '../../src/limits/admission.js'
import { errorHandler } from '../../src/jsonapi/errors.js'
import type { Caller } from '../../src/auth/caller.js'

/**
 * Admission (DESIGN §5, "one caller cannot starve the others") on a real Fastify app whose one
 * route holds its turn until the test lets it go, so that who runs when is the test's to see.
 */
async function harness (t: any, options: AdmissionOptions) {
  const app: FastifyInstance = Fastify()
  const ran: string[] = []
  const holds: Array<() => void> = []
  app.setErrorHandler(errorHandler)
  app.decorateRequest('caller', null as never)
  app.addHook('onRequest', async (request) => {
    // a slow authentication, for the requests that say so
    if (request.headers['x-slow'] !== undefined) await new Promise((resolve) => setTimeout(resolve, 100))
    request.caller = { kind: 'user', userId: String(request.headers['x-user']) } satisfies Caller
  })
  await app.register(admission, options)
  app.get('/work/:name', async (request) => {
    const { name } = request.params as { name: string }
    ran.push(name)
    await new Promise<void>((resolve) => holds.push(resolve))
    return { name }
  })
  t.teardown(() => app.close())
  const settle = () => new Promise((resolve) => setTimeout(resolve, 30))
  const letOneGo = async () => { await settle(); holds.shift()?.(); await settle() }
  // light-my-request starts a request only when it is awaited: start it now
  const send = (user: string, name: string) => Promise.resolve(app.inject({ url: `/work/${name}`, headers: { 'x-user': user } }))
  return { app, ran, holds, settle, letOneGo, send }
}

t.test('callers are served in turn: one caller’s backlog does not wait in front of another', async (t) => {
  const { ran, settle, letOneGo, send } = await harness(t, { concurrency: 1, queueLength: 10, maxWaitMs: 5000, perCaller: 0 })
  const answers = [send('a', 'a1'), send('a', 'a2'), send('a', 'a3'), send('a', 'a4')]
  await settle()
  answers.push(send('b', 'b1'))
  await settle()
  for (let i = 0; i < 5; i++) await letOneGo()
  t.same(ran, ['a1', 'a2', 'b1', 'a3', 'a4'], 'b waits for one of a’s, not for all of them')
  t.same((await Promise.all(answers)).map((r) => r.statusCode), [200, 200, 200, 200, 200])
})

t.test('a wait past the limit is 503 with Retry-After, as a JSON:API document', async (t) => {
  const { letOneGo, send, settle } = await harness(t, { concurrency: 1, queueLength: 10, maxWaitMs: 100, perCaller: 0 })
  const first = send('a', 'slow')
  await settle()
  const waited = await send('b', 'late')
  t.equal(waited.statusCode, 503)
  t.equal(waited.headers['retry-after'], '1')
  t.same(waited.json(), { errors: [{ status: '503', title: 'service unavailable', detail: 'The service is busy; try again shortly.' }] })
  await letOneGo()
  t.equal((await first).statusCode, 200)
  const next = send('b', 'next')
  await letOneGo()
  t.equal((await next).statusCode, 200, 'the slot came back')
})

t.test('a full queue is 503 at once', async (t) => {
  const { settle, letOneGo, send } = await harness(t, { concurrency: 1, queueLength: 2, maxWaitMs: 5000, perCaller: 0 })
  const held = [send('a', '1'), send('b', '2'), send('c', '3')]
  await settle()
  const refused = await send('d', '4')
  t.equal(refused.statusCode, 503)
  for (let i = 0; i < 3; i++) await letOneGo()
  t.same((await Promise.all(held)).map((r) => r.statusCode), [200, 200, 200])
})

t.test('one caller’s concurrent requests are capped: 429 past the cap, others unaffected', async (t) => {
  const { settle, letOneGo, send } = await harness(t, { concurrency: 1, queueLength: 10, maxWaitMs: 5000, perCaller: 2 })
  const held = [send('a', '1'), send('a', '2')]
  await settle()
  const capped = await send('a', '3')
  t.equal(capped.statusCode, 429)
  t.match(capped.json(), { errors: [{ status: '429', title: 'too many requests' }] })
  const other = send('b', '4')
  for (let i = 0; i < 3; i++) await letOneGo()
  t.same((await Promise.all([...held, other])).map((r) => r.statusCode), [200, 200, 200])
  const again = send('a', '5')
  await letOneGo()
  t.equal((await again).statusCode, 200, 'answered requests give the caller its room back')
})

t.test('work queued for a client that has gone away is dropped, not run', async (t) => {
  const { app, ran, settle, letOneGo } = await harness(t, { concurrency: 1, queueLength: 10, maxWaitMs: 5000, perCaller: 0 })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port
  const first = fetch(`http://127.0.0.1:${port}/work/first`, { headers: { 'x-user': 'a' } })
  await settle()
  const gone = netConnect(port, '127.0.0.1')
  await new Promise((resolve) => gone.once('connect', resolve))
  gone.write('GET /work/gone HTTP/1.1\r\nHost: 127.0.0.1\r\nx-user: b\r\n\r\n')
  await settle()
  gone.destroy()
  await settle()
  const last = fetch(`http://127.0.0.1:${port}/work/last`, { headers: { 'x-user': 'c' } })
  await settle()
  await letOneGo()
  await letOneGo()
  t.equal((await first).status, 200)
  t.equal((await last).status, 200)
  t.same(ran, ['first', 'last'], 'the request whose client left never ran')
})

t.test('a request whose client leaves before its turn is asked for never takes a slot', async (t) => {
  const { app, ran, settle, letOneGo } = await harness(t, { concurrency: 1, queueLength: 10, maxWaitMs: 500, perCaller: 0 })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port
  for (let i = 0; i < 3; i++) {
    const gone = netConnect(port, '127.0.0.1')
    await new Promise((resolve) => gone.once('connect', resolve))
    gone.write(`GET /work/gone${i} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-user: a\r\nx-slow: 1\r\n\r\n`)
    await new Promise((resolve) => setTimeout(resolve, 20))
    gone.destroy() // during the (slow) authentication
  }
  await new Promise((resolve) => setTimeout(resolve, 200))
  const after = fetch(`http://127.0.0.1:${port}/work/after`, { headers: { 'x-user': 'b' } })
  await settle()
  await letOneGo()
  t.equal((await after).status, 200, 'the one slot is still there')
  t.same(ran, ['after'], 'none of the abandoned requests ran')
})
