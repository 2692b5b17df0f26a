import t from 'tap'
import { buildApp } from '../../src/app.js'
import { applySeed } from '../../src/directory/seed.js'
import { freshLocation, testConfig, ENGINE } from '../helper.js'
import { world } from '../fixtures/world.js'
import { recordFigure } from './figures.js'

const CANARY = 'canary-token-7f3a9c2e-do-not-log'

t.test(`a known token never reaches a log line, at trace level, on ${ENGINE}`, async (t) => {
  const lines: string[] = []
  const app = await buildApp(testConfig(await freshLocation(t), { logLevel: 'trace' }), { logStream: { write: (line) => { lines.push(line) } } })
  t.teardown(() => app.close())
  await applySeed(app.db, { ...world, users: [...world.users, { id: 'user-canary', username: 'canary', tokens: [CANARY] }], organizations: world.organizations.map((o, i) => i === 0 ? { ...o, teams: o.teams.map((tm) => tm.name === 'owners' ? { ...tm, members: [...tm.members, 'canary'] } : tm) } : o) })
  const auth = { authorization: `Bearer ${CANARY}` }
  const json = { ...auth, 'content-type': 'application/vnd.api+json' }
  const traffic = [
    { url: '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-prod', headers: auth },
    { url: `/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-prod&token=${CANARY}&access_token=${CANARY}`, headers: auth },
    { url: '/api/v2/team-workspaces/tws-writers-prod', headers: auth },
    { url: '/api/v2/team-workspaces/tws-nope', headers: auth },
    { method: 'POST', url: '/api/v2/team-workspaces', headers: json, payload: JSON.stringify({ data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { team: { data: { type: 'teams', id: 'team-green' } }, workspace: { data: { type: 'workspaces', id: 'ws-prod' } } } } }) },
    { method: 'POST', url: '/api/v2/team-workspaces', headers: json, payload: `{"data":"${CANARY}"}` },
    { method: 'PATCH', url: '/api/v2/team-workspaces/tws-red-prod', headers: json, payload: '{"data":{"attributes":{"access":"write"}}}' },
    { method: 'DELETE', url: '/api/v2/team-workspaces/tws-red-prod', headers: json, payload: 'null' },
    { url: '/api/v2/team-workspaces/tws-1', headers: { authorization: `Bearer ${CANARY}x` } },
    { url: '/readyz', headers: auth }
  ]
  for (const request of traffic) await app.inject(request as any)
  // and with the database gone: the error path logs the error itself
  await app.db.destroy()
  const failed = await app.inject({ url: '/api/v2/team-workspaces/tws-1', headers: auth })
  t.equal(failed.statusCode, 503)
  t.notMatch(failed.body, /select|insert|stack|\.js:\d+/i, 'the 503 document holds no SQL and no stack')

  t.ok(lines.length > 20, `${lines.length} log lines written`)
  t.ok(lines.some((l) => l.includes('"level":10') || l.includes('"level":20') || l.includes('incoming request')), 'the log is verbose')
  const leaks = lines.filter((l) => l.includes(CANARY))
  t.same(leaks, [], 'the canary appears in no log line')
  t.ok(lines.some((l) => l.includes('token=[redacted]')), 'a token put in the query string is masked')
  await recordFigure(`log canary (${ENGINE})`, `${lines.length} log lines at trace level over ${traffic.length + 1} requests: ${leaks.length} contain the token`, '0 lines')
})

t.test(`limits on ${ENGINE}`, async (t) => {
  const app = await buildApp(testConfig(await freshLocation(t)), { logger: false })
  t.teardown(() => app.close())
  await applySeed(app.db, world)
  const auth = { authorization: 'Bearer acme-organization-token' }

  const big = await app.inject({ method: 'POST', url: '/api/v2/team-workspaces', headers: { ...auth, 'content-type': 'application/vnd.api+json' }, payload: JSON.stringify({ data: { type: 'team-workspaces', padding: 'x'.repeat(70 * 1024) } }) })
  t.equal(big.statusCode, 413, 'a body over 64 KiB')
  t.match(big.json(), { errors: [{ status: '413', title: 'payload too large' }] })

  const longToken = await app.inject({ url: '/api/v2/team-workspaces/tws-1', headers: { authorization: `Bearer ${'a'.repeat(513)}` } })
  t.equal(longToken.statusCode, 401, 'a token over 512 characters is refused without a lookup')

  const page = await app.inject({ url: '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-prod&page%5Bsize%5D=101', headers: auth })
  t.equal(page.statusCode, 422, 'page[size] over 100')

  const longId = await app.inject({ url: `/api/v2/team-workspaces/${'x'.repeat(600)}`, headers: auth })
  t.equal(longId.statusCode, 414, 'an id past the router’s 512-character limit')
  t.match(longId.json(), { errors: [{ status: '414' }] })
  await recordFigure(`limits (${ENGINE})`, 'body > 64 KiB → 413; token > 512 chars → 401; page[size] > 100 → 422; path id > 512 chars → 414; all JSON:API documents', 'each answered with its status')
})
