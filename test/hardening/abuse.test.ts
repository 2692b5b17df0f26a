import t from 'tap'
import Fastify from 'fastify'
import { sql } from 'kysely'
import teamAccess from '../../src/plugin.js'
import { buildApp } from '../../src/app.js'
import { connect } from '../../src/db/connect.js'
import { migrate } from '../../src/db/migrate.js'
import { applySeed } from '../../src/directory/seed.js'
import { tokenDigest } from '../../src/auth/token-digest.js'
import { bearer, build, ENGINE, freshLocation, testConfig } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { table } from '../../src/db/tables.js'

/** DESIGN §4-§5: what an attacker can send must not land in a link, a cache, a log, or cost the database. */
const PAGE = '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-prod&page%5Bsize%5D=1'

t.test(`links and caches on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world })
  const owner = bearer(TOKENS.organization)

  t.test('a forged Host is 400 and never lands in a link', async (t) => {
    for (const host of ['evil.example:1/x?', 'a b', 'evil.example:99999999', 'x@evil.example', '"><script>']) {
      const res = await app.inject({ url: PAGE, headers: { ...owner, host } })
      t.equal(res.statusCode, 400, host)
      t.same(res.json(), { errors: [{ status: '400', title: 'bad request', detail: 'The Host header is not a valid host[:port].' }] })
    }
  })
  t.test('a well-formed Host makes the links', async (t) => {
    for (const host of ['tfe.example.com', 'tfe.example.com:8443', '127.0.0.1:3000', '[::1]:3000']) {
      const res = await app.inject({ url: PAGE, headers: { ...owner, host } })
      t.equal(res.statusCode, 200, host)
      t.equal(res.json().links.first, `http://${host}/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-prod&page%5Bnumber%5D=1&page%5Bsize%5D=1`)
    }
  })
  t.test('authenticated answers are Cache-Control: no-store', async (t) => {
    const answers = [
      await app.inject({ url: PAGE, headers: owner }),
      await app.inject({ url: '/api/v2/team-workspaces/tws-red-prod', headers: owner }),
      await app.inject({ url: '/api/v2/team-workspaces/tws-none', headers: owner }),
      await app.inject({ method: 'POST', url: '/api/v2/team-workspaces', headers: { ...owner, 'content-type': 'application/json' }, payload: '{}' })
    ]
    t.same(answers.map((r) => [r.statusCode, r.headers['cache-control']]), [[200, 'no-store'], [200, 'no-store'], [404, 'no-store'], [422, 'no-store']])
  })
})

t.test(`PUBLIC_URL is the origin of every link, whatever the Host (${ENGINE})`, async (t) => {
  const app = await build(t, { seed: world, config: { publicUrl: 'https://tfe.example.com' } })
  const res = await app.inject({ url: PAGE, headers: { ...bearer(TOKENS.organization), host: 'evil.example:1/x?' } })
  t.equal(res.statusCode, 200)
  t.match(res.json().links, { self: /^https:\/\/tfe\.example\.com\/api\/v2\/team-workspaces\?/, last: /^https:\/\/tfe\.example\.com\// })
})

t.test(`a flood of made-up tokens costs a bounded number of lookups per second (${ENGINE})`, async (t) => {
  let queries = 0
  const connection = await connect(await freshLocation(t), { log: () => { queries++ } })
  t.teardown(() => connection.close())
  await migrate(connection.db)
  await applySeed(connection.db, world)
  const app = Fastify()
  await app.register(teamAccess, { prefix: '/api/v2', database: connection.db, migrate: false, rateLimit: 5 })
  t.teardown(() => app.close())
  await app.ready()
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 10)) // the start of a second
  queries = 0
  const statuses: number[] = []
  for (let i = 0; i < 50; i++) statuses.push((await app.inject({ url: PAGE, headers: bearer(`made-up-token-${i}-${Math.random()}`) })).statusCode)
  t.same(statuses.slice(0, 5), [401, 401, 401, 401, 401], 'the first few are looked up and refused')
  t.ok(statuses.slice(5).every((s) => s === 429), 'the rest are 429 without a lookup')
  t.ok(queries <= 10, `${queries} lookups for 50 made-up tokens (≤ 5 per second per address)`)
  t.equal((await app.inject({ url: PAGE, headers: bearer(TOKENS.organization), remoteAddress: '10.0.0.2' })).statusCode, 200, 'another address is not affected')
  await new Promise((resolve) => setTimeout(resolve, 1000))
  t.equal((await app.inject({ url: PAGE, headers: bearer(TOKENS.organization) })).statusCode, 200, 'the flooding address gets its budget back the next second')
})

t.test(`a failing statement's parameters never reach the log (${ENGINE})`, async (t) => {
  const lines: string[] = []
  const app = await buildApp(testConfig(await freshLocation(t), { logLevel: 'info' }), { logStream: { write: (line) => { lines.push(line) } } })
  t.teardown(() => app.close())
  await applySeed(app.db, world)
  await sql`drop table ${table.team_workspaces} cascade`.execute(app.db)
  const res = await app.inject({ url: '/api/v2/team-workspaces/tws-secret-id-in-the-path', headers: bearer(TOKENS.organization) })
  t.equal(res.statusCode, 500)
  t.same(res.json(), { errors: [{ status: '500', title: 'internal server error' }] })
  const failure = lines.find((l) => l.includes('request failed'))
  t.ok(failure, 'the failure is logged')
  t.match(failure, /team_workspaces/, 'with the database’s message')
  for (const value of ['tws-secret-id-in-the-path', 'org-acme', tokenDigest(TOKENS.organization), TOKENS.organization]) {
    t.notOk(lines.some((l) => l.includes('"params"') || (l.includes(value) && !l.includes('"url"'))), `no line carries ${value.slice(0, 20)}… as a statement value`)
  }
})
