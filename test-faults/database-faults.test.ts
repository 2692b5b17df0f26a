import t from 'tap'
import { createServer, connect, type AddressInfo } from 'node:net'
import pg from 'pg'
import { sql } from 'kysely'
import { buildApp } from '../src/app.js'
import { applySeed } from '../src/directory/seed.js'
import { testConfig } from '../test/helper.js'
import { world, TOKENS } from '../test/fixtures/world.js'
import { recordFigure } from '../test/hardening/figures.js'
import { throwawayPostgres } from './throwaway-postgres.js'

/**
 * A throwaway PostgreSQL of this test's own (initdb / pg_ctl from the machine's PostgreSQL 15,
 * its own data directory and port; the shared server is never touched), stopped under load and
 * started again; and the pool and lock timeouts run out. Every answer must be a 503 document
 * within the configured timeout, nothing may hang, and the service must recover by itself.
 */
// below the ephemeral range (32768-60999 here), so no outgoing connection can hold it when the server restarts
const PORT = 25432 + (process.pid % 50)
const CONNECT_MS = 1000
const STATEMENT_MS = 2000
const POOL = 4

t.test('database faults: stop under load, pool exhaustion, lock waits, recovery', async (t) => {
  const postgres = throwawayPostgres(PORT)
  t.teardown(() => postgres.remove())
  const url = postgres.url
  const app = await buildApp(testConfig({ url }, { databaseTimeouts: { poolSize: POOL, connectionTimeoutMs: CONNECT_MS, statementTimeoutMs: STATEMENT_MS } }), { logger: false })
  t.teardown(() => app.close())
  await applySeed(app.db, world)
  const auth = { authorization: `Bearer ${TOKENS.organization}` }
  const show = () => app.inject({ url: '/api/v2/team-workspaces/tws-writers-prod', headers: auth })
  const timed = async <T>(f: () => Promise<T>) => { const began = Date.now(); const value = await f(); return { value, ms: Date.now() - began } }
  t.equal((await show()).statusCode, 200, 'healthy to begin with')

  t.test('pool exhaustion ends in 503 within the connection timeout', async (t) => {
    const holders = Array.from({ length: POOL }, () => sql`select pg_sleep(${(STATEMENT_MS - 300) / 1000})`.execute(app.db))
    await new Promise((resolve) => setTimeout(resolve, 100))
    const { value: res, ms } = await timed(show)
    t.equal(res.statusCode, 503)
    t.match(res.json(), { errors: [{ status: '503', title: 'service unavailable' }] })
    t.ok(ms < CONNECT_MS + 500, `answered in ${ms} ms (timeout ${CONNECT_MS} ms)`)
    await Promise.all(holders)
    t.equal((await show()).statusCode, 200, 'and fine again once connections are free')
    await recordFigure('pool exhaustion', `503 after ${ms} ms with every connection busy (connection timeout ${CONNECT_MS} ms)`, `503 within ${CONNECT_MS} ms + 500`)
  })

  t.test('a lock wait ends in 503 within the statement timeout', async (t) => {
    const locker = new pg.Client({ connectionString: url })
    await locker.connect()
    await locker.query('begin')
    await locker.query("select * from team_access.team_workspaces where id = 'tws-red-prod' for update")
    const { value: res, ms } = await timed(() => app.inject({ method: 'PATCH', url: '/api/v2/team-workspaces/tws-red-prod', headers: { ...auth, 'content-type': 'application/vnd.api+json' }, payload: '{"data":{"attributes":{"access":"read"}}}' }))
    await locker.query('rollback')
    await locker.end()
    t.equal(res.statusCode, 503)
    t.ok(ms < STATEMENT_MS + 1000, `answered in ${ms} ms (lock timeout ${STATEMENT_MS} ms)`)
    const row = await app.db.selectFrom('team_workspaces').select('access').where('id', '=', 'tws-red-prod').executeTakeFirstOrThrow()
    t.equal(row.access, 'custom', 'nothing changed')
    await recordFigure('lock wait', `503 after ${ms} ms behind a row lock (lock timeout ${STATEMENT_MS} ms), row unchanged`, `503 within ${STATEMENT_MS} ms + 1000`)
  })

  t.test('a database that stops answering (the network drops its answers): 503 at the read timeout, then recovery', async (t) => {
    // a proxy in front of the server that, frozen, drops what the server sends: no statement_timeout reaches the service then
    let frozen = false
    const proxy = createServer((client) => {
      const upstream = connect(PORT, '127.0.0.1')
      client.on('data', (data) => upstream.write(data))
      upstream.on('data', (data) => { if (!frozen) client.write(data) })
      client.on('close', () => upstream.destroy())
      upstream.on('close', () => client.destroy())
      client.on('error', () => {})
      upstream.on('error', () => {})
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    t.teardown(() => { proxy.close() })
    const proxied = url.replace(`:${PORT}/`, `:${(proxy.address() as AddressInfo).port}/`)
    const behind = await buildApp(testConfig({ url: proxied }, { databaseTimeouts: { poolSize: 1, connectionTimeoutMs: CONNECT_MS, statementTimeoutMs: STATEMENT_MS } }), { logger: false })
    t.teardown(() => behind.close())
    const showBehind = () => behind.inject({ url: '/api/v2/team-workspaces/tws-writers-prod', headers: auth })
    t.equal((await showBehind()).statusCode, 200, 'answered through the proxy (the pool\'s one connection open)')
    frozen = true
    const { value: res, ms } = await timed(showBehind)
    t.equal(res.statusCode, 503)
    t.match(res.json(), { errors: [{ status: '503', title: 'service unavailable' }] })
    // the open connection's statement waited for the read timeout (statement timeout + 1 s): not a new connection's timeout
    t.ok(ms >= STATEMENT_MS + 1000 - 100 && ms < STATEMENT_MS + 2500, `answered in ${ms} ms (read timeout ${STATEMENT_MS + 1000} ms)`)
    frozen = false
    t.equal((await showBehind()).statusCode, 200, 'answering again: a new connection, and 200')
    await recordFigure('database stops answering', `503 after ${ms} ms on an open connection whose answers are lost (read timeout ${STATEMENT_MS + 1000} ms), 200 once it answers again`, `503 within ${STATEMENT_MS} ms + 2500`)
  })

  t.test('the database stops under load: 503s, no hang, no crash; started again, the service recovers by itself', async (t) => {
    let stop = false
    const seen = new Map<number, number>()
    let slowest = 0
    let notDocuments = 0
    const load = Promise.all(Array.from({ length: 8 }, async () => {
      // eslint-disable-next-line no-unmodified-loop-condition -- the test body sets it while the load runs
      while (!stop) {
        const { value: res, ms } = await timed(show)
        seen.set(res.statusCode, (seen.get(res.statusCode) ?? 0) + 1)
        if (res.statusCode === 503) slowest = Math.max(slowest, ms)
        if (res.statusCode !== 200 && res.statusCode !== 503) t.fail(`status ${res.statusCode}: ${res.body}`)
        if (res.statusCode === 503 && res.json().errors?.[0]?.status !== '503') notDocuments++
      }
    }))
    await new Promise((resolve) => setTimeout(resolve, 500))
    postgres.stop()
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const ready = await app.inject('/readyz')
    t.equal(ready.statusCode, 503, '/readyz says so')
    postgres.start()
    const restarted = Date.now()
    let recoveredMs = -1
    while (Date.now() - restarted < 10_000) {
      if ((await show()).statusCode === 200) { recoveredMs = Date.now() - restarted; break }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    stop = true
    await load
    t.ok((seen.get(200) ?? 0) > 0 && (seen.get(503) ?? 0) > 0, `answers: ${JSON.stringify(Object.fromEntries(seen))}`)
    t.equal(notDocuments, 0, 'every 503 is a JSON:API error document')
    t.ok(slowest < CONNECT_MS + STATEMENT_MS + 1000, `the slowest 503 took ${slowest} ms`)
    t.ok(recoveredMs >= 0 && recoveredMs <= 5000, `recovered ${recoveredMs} ms after the restart, without restarting the service`)
    t.equal((await app.inject('/readyz')).statusCode, 200)
    await recordFigure('database stopped under load', `${seen.get(503) ?? 0} × 503 (slowest ${slowest} ms), 0 other errors, no crash; recovered ${recoveredMs} ms after the database came back`, 'only 503s; recovery ≤ 5 s without a restart')
  })
})
