import t from 'tap'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import fc from 'fast-check'
import { connect as netConnect } from 'node:net'
import { Readable } from 'node:stream'
import admission, { inTurn, type AdmissionOptions } from '../../src/limits/admission.js'
import { errorHandler, notFound } from '../../src/jsonapi/errors.js'
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
  const work = async (request: FastifyRequest) => {
    const { name } = request.params as { name: string }
    ran.push(name)
    await new Promise<void>((resolve) => holds.push(resolve))
    return { name }
  }
  app.get('/work/:name', work)
  app.get('/alone/:name', { config: { onePerCaller: true } }, work)
  t.teardown(() => app.close())
  const settle = () => new Promise((resolve) => setTimeout(resolve, 30))
  const letOneGo = async () => { await settle(); holds.shift()?.(); await settle() }
  // light-my-request starts a request only when it is awaited: start it now
  const send = (user: string, name: string, route = 'work') => Promise.resolve(app.inject({ url: `/${route}/${name}`, headers: { 'x-user': user } }))
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

t.test('a one-at-a-time route runs one of a caller’s requests at a time; the others and other callers go on', async (t) => {
  const { ran, settle, letOneGo, send, app } = await harness(t, { concurrency: 3, queueLength: 10, maxWaitMs: 5000, perCaller: 0 })
  const answers = [send('a', 'a1', 'alone'), send('a', 'a2', 'alone'), send('a', 'a3', 'alone')]
  await settle()
  answers.push(send('b', 'b1', 'alone'), send('a', 'w1'))
  await settle()
  t.same(ran, ['a1', 'b1'], 'a’s second page waits for its first; b’s runs beside it; a’s ordinary request waits behind a’s own')
  t.same(app.admissionState(), { running: 2, waiting: 3, callers: 2 }, 'a free turn is left free')
  for (let i = 0; i < 5; i++) await letOneGo()
  t.same((await Promise.all(answers)).map((r) => r.statusCode), [200, 200, 200, 200, 200])
  t.same(ran, ['a1', 'b1', 'a2', 'a3', 'w1'])
  t.same(app.admissionState(), { running: 0, waiting: 0, callers: 0 })
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

t.test('one caller’s requests past its cap wait their turn — never refused for it — while others run', async (t) => {
  const { app, ran, settle, letOneGo, send } = await harness(t, { concurrency: 3, queueLength: 10, maxWaitMs: 5000, perCaller: 2 })
  const answers = [send('a', 'a1'), send('a', 'a2'), send('a', 'a3'), send('a', 'a4')]
  await settle()
  t.same(ran, ['a1', 'a2'], 'two of a’s run; its others wait though a turn is free')
  t.same(app.admissionState(), { running: 2, waiting: 2, callers: 1 })
  answers.push(send('b', 'b1'))
  await settle()
  t.same(ran, ['a1', 'a2', 'b1'], 'the free turn is b’s at once')
  for (let i = 0; i < 5; i++) await letOneGo()
  t.same((await Promise.all(answers)).map((r) => r.statusCode), [200, 200, 200, 200, 200], 'every one answered, none 429')
  t.same(ran, ['a1', 'a2', 'b1', 'a3', 'a4'])
  t.same(app.admissionState(), { running: 0, waiting: 0, callers: 0 })
})

t.test('a full queue makes room for a caller with few waiting: the caller with the most waiting gives way', async (t) => {
  const { app, ran, settle, letOneGo, send } = await harness(t, { concurrency: 1, queueLength: 3, maxWaitMs: 5000, perCaller: 0 })
  const a = [send('a', 'a1'), send('a', 'a2'), send('a', 'a3'), send('a', 'a4')]
  await settle()
  t.same(app.admissionState(), { running: 1, waiting: 3, callers: 1 }, 'a fills the queue')
  const ownMore = await send('a', 'a5')
  t.equal(ownMore.statusCode, 503, 'a’s next is refused: a has the most waiting')
  const b = send('b', 'b1')
  await settle()
  const evicted = await a[3]!
  t.equal(evicted.statusCode, 503, 'a’s newest gives its place to b')
  t.equal(evicted.headers['retry-after'], '1')
  const c = send('c', 'c1')
  await settle()
  t.equal((await a[2]!).statusCode, 503, 'and again to c: a still had the most waiting')
  const b2 = await send('b', 'b2')
  t.equal(b2.statusCode, 503, 'a, b and c have one waiting each: b’s second is refused, nobody gives way for it')
  for (let i = 0; i < 4; i++) await letOneGo()
  t.same((await Promise.all([a[0]!, a[1]!, b, c])).map((r) => r.statusCode), [200, 200, 200, 200])
  t.same(ran, ['a1', 'a2', 'b1', 'c1'])
  t.same(app.admissionState(), { running: 0, waiting: 0, callers: 0 })
})

/**
 * Every way a request can end gives its turn or its place back, exactly once: random bursts of
 * GETs and PATCHes (whose bodies are read, so Node never calls them aborted) over real sockets,
 * each answered, refused by its handler, made to wait by its caller's cap, refused by a full queue or giving way in it (503), timed out
 * waiting (503), or abandoned by its client while waiting or while its handler runs — on routes
 * that run any number of a caller's requests at once and on one that runs one at a time. When the
 * last handler has ended, admission holds nothing.
 */
t.test('whatever way requests end, admission returns to empty', async (t) => {
  const endings = new Map<string, number>()
  const seen = (ending: string) => endings.set(ending, (endings.get(ending) ?? 0) + 1)
  const app: FastifyInstance = Fastify()
  app.setErrorHandler(errorHandler)
  app.decorateRequest('caller', null as never)
  app.addHook('onRequest', async (request) => {
    request.caller = { kind: 'user', userId: String(request.headers['x-user']) } satisfies Caller
  })
  await app.register(admission, { concurrency: 2, queueLength: 4, maxWaitMs: 60, perCaller: 3 })
  let handlers = 0
  const work = async (request: FastifyRequest) => {
    handlers++
    try {
      await new Promise((resolve) => setTimeout(resolve, Number(request.headers['x-ms'])))
      if (request.headers['x-refuse'] !== undefined) throw notFound()
      return { ok: true }
    } finally {
      handlers--
    }
  }
  const busyHandlers = () => handlers
  app.get('/work', work)
  app.patch('/work', work)
  // a streamed answer: two reads, each in a turn of its own, after its handler has returned
  app.get('/stream', async (request) => {
    async function * reads () {
      for (let i = 0; i < 2; i++) yield await inTurn(request, async () => { await work(request); return `read ${i}\n` })
    }
    return Readable.from(reads())
  })
  app.get('/alone', { config: { onePerCaller: true } }, work)
  app.patch('/alone', { config: { onePerCaller: true } }, work)
  app.addHook('onSend', async (request, reply, payload) => {
    const left = request.raw.socket.destroyed
    const stage = request.admission?.stage
    seen(`${reply.statusCode}${left ? ' client left' : ''}${stage === undefined ? ' never admitted' : ''}`)
    return payload
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const port = (app.server.address() as { port: number }).port

  const one = fc.record({
    user: fc.constantFrom('a', 'b', 'c'),
    method: fc.constantFrom('GET', 'PATCH'),
    route: fc.constantFrom('work', 'alone', 'stream'),
    ms: fc.integer({ min: 0, max: 80 }),
    refuse: fc.boolean(),
    // the client hangs up this long after sending, or waits for its answer
    leaveAfter: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined })
  })
  await fc.assert(fc.asyncProperty(fc.array(one, { minLength: 1, maxLength: 14 }), async (requests) => {
    await Promise.all(requests.map(async (r) => {
      const socket = netConnect(port, '127.0.0.1')
      await new Promise((resolve) => socket.once('connect', resolve))
      const method = r.route === 'stream' ? 'GET' : r.method
      const body = method === 'PATCH' ? '{"data":{}}' : ''
      socket.write(`${method} /${r.route} HTTP/1.1\r\nHost: x\r\nx-user: ${r.user}\r\nx-ms: ${r.ms}\r\n${r.refuse ? 'x-refuse: 1\r\n' : ''}` +
        (body === '' ? '' : `content-type: application/json\r\ncontent-length: ${body.length}\r\n`) + `connection: close\r\n\r\n${body}`)
      socket.resume()
      if (r.leaveAfter === undefined) await new Promise((resolve) => socket.once('close', resolve))
      else {
        await new Promise((resolve) => setTimeout(resolve, r.leaveAfter))
        socket.destroy()
      }
    }))
    // every handler has ended, and the wait limit has passed for anything still queued (polled: a
    // loaded machine fires the timers late, and nothing here is about how soon)
    const empty = () => busyHandlers() === 0 && JSON.stringify(app.admissionState()) === JSON.stringify({ running: 0, waiting: 0, callers: 0 })
    for (let i = 0; i < 500 && !empty(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
    t.equal(handlers, 0)
    t.same(app.admissionState(), { running: 0, waiting: 0, callers: 0 })
  }), { numRuns: 40 })
  // the property saw the endings it is about
  const kinds = [...endings.keys()]
  for (const ending of ['200', '404', '503 never admitted', '503', '200 client left', '503 client left']) {
    t.ok(kinds.includes(ending), `some request ended ${ending} (${kinds.join(', ')})`)
  }
})

/**
 * A streamed answer (DESIGN §12.1's CSV) is its request's work until its last byte: it holds its
 * place under its caller's cap all along, takes a turn at the database for each read — so other
 * callers run between its reads — and gives everything back when it ends or its client leaves.
 * HEAD never reads it.
 */
async function streaming (t: any, options: AdmissionOptions) {
  const { app, ran, holds, settle, letOneGo } = await harness(t, options)
  let reads = 0
  app.get('/stream/:name', async (request) => {
    const { name } = request.params as { name: string }
    async function * body () {
      for (let i = 0; i < 3; i++) {
        yield await inTurn(request, async () => {
          reads++
          ran.push(`${name}:${i}`)
          await new Promise<void>((resolve) => holds.push(resolve))
          return `${name} read ${i}\n`
        })
      }
    }
    return Readable.from(body())
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const get = async (user: string, path: string, method = 'GET') => {
    const response = await fetch(`${origin}${path}`, { method, headers: { 'x-user': user } })
    return { status: response.status, body: await response.text(), headers: response.headers }
  }
  return { app, ran, settle, letOneGo, get, origin, reads: () => reads }
}

t.test('a stream holds its place under its caller’s cap until its answer ends, and takes a turn for each read', async (t) => {
  const { app, ran, settle, letOneGo, get } = await streaming(t, { concurrency: 1, queueLength: 10, maxWaitMs: 5000, perCaller: 1 })
  const stream = get('a', '/stream/a')
  await settle()
  const b = get('b', '/work/b1')
  const a2 = get('a', '/work/a2')
  await settle()
  t.same(ran, ['a:0'], 'the stream’s first read holds the one turn')
  await letOneGo()
  t.same(ran, ['a:0', 'b1'], 'between two reads of a’s stream, b’s request runs')
  t.same(app.admissionState(), { running: 1, waiting: 2, callers: 2 }, 'the stream’s next read and a’s second request wait')
  await letOneGo()
  t.same(ran, ['a:0', 'b1', 'a:1'], 'the stream’s read goes before a’s new request')
  await letOneGo()
  t.same(ran, ['a:0', 'b1', 'a:1', 'a:2'], 'a’s second request waits while its stream is under way, though a turn is free')
  await letOneGo()
  t.same(ran, ['a:0', 'b1', 'a:1', 'a:2', 'a2'], 'the stream ended: a’s next request runs')
  await letOneGo()
  const [whole, other, second] = await Promise.all([stream, b, a2])
  t.same([whole.status, whole.body, other.status, second.status], [200, 'a read 0\na read 1\na read 2\n', 200, 200])
  t.same(app.admissionState(), { running: 0, waiting: 0, callers: 0 })
})

t.test('HEAD of a streamed answer reads nothing, holds nothing, and says what GET would', async (t) => {
  const { app, get, reads, letOneGo } = await streaming(t, { concurrency: 1, queueLength: 10, maxWaitMs: 5000, perCaller: 1 })
  for (let i = 0; i < 20; i++) {
    const head = await get('a', '/stream/h', 'HEAD')
    t.equal(head.status, 200)
    t.equal(head.body, '')
  }
  t.equal(reads(), 0, 'twenty HEADs, no read')
  t.same(app.admissionState(), { running: 0, waiting: 0, callers: 0 })
  const whole = get('a', '/stream/g')
  for (let i = 0; i < 3; i++) await letOneGo()
  t.equal((await whole).body, 'g read 0\ng read 1\ng read 2\n', 'GET reads it')
})

t.test('a client leaving a stream ends its reads and gives its place back', async (t) => {
  const { app, ran, settle, letOneGo, origin } = await streaming(t, { concurrency: 1, queueLength: 10, maxWaitMs: 5000, perCaller: 1 })
  const socket = netConnect(Number(new URL(origin).port), '127.0.0.1')
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write('GET /stream/x HTTP/1.1\r\nHost: x\r\nx-user: a\r\n\r\n')
  socket.resume()
  await settle()
  t.same(ran, ['x:0'])
  socket.destroy()
  await letOneGo()
  await settle()
  t.same(ran, ['x:0'], 'no read after the client left')
  t.same(app.admissionState(), { running: 0, waiting: 0, callers: 0 })
})
