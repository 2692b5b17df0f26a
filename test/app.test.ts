import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import { buildApp } from '../src/app.js'
import { build, bearer, ENGINE, freshLocation, testConfig } from './helper.js'

const notFound = { errors: [{ status: '404', title: 'not found' }] }

t.test(`the standalone app on ${ENGINE}`, async (t) => {
  const app = await build(t)

  t.test('GET /api/v2/ping answers 204 with the API version go-tfe reads', async (t) => {
    const res = await app.inject('/api/v2/ping')
    t.equal(res.statusCode, 204)
    t.equal(res.headers['tfp-api-version'], '2.6')
    t.equal(res.body, '')
  })

  t.test('GET /.well-known/terraform.json tells clients where the API is', async (t) => {
    const res = await app.inject('/.well-known/terraform.json')
    t.equal(res.statusCode, 200)
    t.same(res.json(), { 'tfe.v2': '/api/v2/', 'tfe.v2.1': '/api/v2/', 'tfe.v2.2': '/api/v2/', 'modules.v1': '/api/registry/v1/modules/' })
  })

  t.test('health: /healthz while the process is up, /readyz while the database answers', async (t) => {
    t.equal((await app.inject('/healthz')).statusCode, 200)
    const ready = await app.inject('/readyz')
    t.equal(ready.statusCode, 200)
    t.same(ready.json(), { status: 'ok' })
  })

  t.test('every response carries a request id: the caller’s X-Request-Id when sane, else a new one', async (t) => {
    const given = await app.inject({ url: '/healthz', headers: { 'x-request-id': 'trace-42.a:b' } })
    t.equal(given.headers['x-request-id'], 'trace-42.a:b')
    const fresh = await app.inject('/api/v2/nope')
    t.match(fresh.headers['x-request-id'], /^[0-9a-f-]{36}$/)
    const hostile = await app.inject({ url: '/healthz', headers: { 'x-request-id': 'x'.repeat(500) } })
    t.match(hostile.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'an absurd one is replaced')
  })

  t.test('unknown routes answer the JSON:API 404 document, inside and outside the API', async (t) => {
    for (const url of ['/nope', '/api/v2/nope', '/api/v2/runs/run-x', '/api/v3/team-workspaces']) {
      const res = await app.inject(url)
      t.equal(res.statusCode, 404, url)
      t.same(res.json(), notFound, url)
      t.match(res.headers['content-type'], /^application\/vnd\.api\+json/, url)
    }
  })

  t.test('requests a client can send get no 500', async (t) => {
    const paths = ['/api/v2/ping', '/readyz', '/healthz', '/.well-known/terraform.json', '/api/v2/team-workspaces', '/api/v2/team-workspaces/x', '/%', '/api/v2/%E0%A4%A']
    const methods = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'OPTIONS'] as const
    const bodies = [undefined, '', 'null', '{', '[]', '{"data":1}', '\u0000']
    const types = [undefined, 'application/json', 'application/vnd.api+json', 'text/plain', 'application/x-www-form-urlencoded']
    let count = 0
    for (const url of paths) {
      for (const method of methods) {
        for (const payload of bodies) {
          for (const type of types) {
            const headers: Record<string, string> = { ...bearer('none-such-token') }
            if (type) headers['content-type'] = type
            const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })
            count++
            if (res.statusCode >= 500) t.fail(`${method} ${url} ${type} ${JSON.stringify(payload)} → ${res.statusCode} ${res.body}`)
            if (method !== 'HEAD' && res.statusCode >= 400 && !Array.isArray(res.json().errors)) t.fail(`${method} ${url}: not a JSON:API error document: ${res.body}`)
          }
        }
      }
    }
    t.pass(`${count} requests, none answered 5xx`)
  })

  t.test('a database that is gone: 503 documents from /readyz and the API, /healthz still 200', async (t) => {
    const broken = await build(t)
    await broken.db.destroy()
    const unavailable = { errors: [{ status: '503', title: 'service unavailable', detail: 'The database is unavailable; try again shortly.' }] }
    for (const url of ['/readyz', '/api/v2/team-workspaces/tws-1', '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-1']) {
      const res = await broken.inject({ url, headers: bearer('some-token-123') })
      t.equal(res.statusCode, 503, url)
      t.same(res.json(), unavailable, url)
    }
    t.equal((await broken.inject('/healthz')).statusCode, 200)
  })
})

// the embedded default only exists without DATABASE_URL
if (ENGINE === 'pglite') {
  t.test('the embedded default: demo data on an empty database, kept across restarts', async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'team-access-data-'))
    t.teardown(() => rm(dataDir, { recursive: true, force: true }))
    const config = testConfig({ dataDir }, { demo: true })
    const list = '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-DemoProduction01'

    const first = await buildApp(config, { logger: false })
    t.equal(first.demoSeeded, true, 'the demo seed was applied')
    const before = await first.inject({ url: list, headers: bearer('acme-owners-demo-token') })
    t.equal(before.statusCode, 200)
    t.ok(before.json().data.length > 0, 'the demo workspace has team access')
    await first.db.updateTable('workspaces').set({ name: 'production' }).where('id', '=', 'ws-DemoProduction01').execute()
    await first.close()

    const second = await buildApp(config, { logger: false })
    t.teardown(() => second.close())
    t.equal(second.demoSeeded, false, 'a database with data is not seeded again')
    const after = await second.inject({ url: list, headers: bearer('acme-owners-demo-token') })
    t.same(after.json().data.map((r: any) => r.id), before.json().data.map((r: any) => r.id), 'the rows survived the restart')
    t.match(after.json().data[0].relationships.workspace.links.related, /\/workspaces\/production$/, 'and so did the change')
  })
}

// the demo data exists only on the embedded database
if (ENGINE === 'pglite') {
  t.test('demo data only on a laptop: embedded, empty, no SEED_FILE, on loopback', async (t) => {
    const demoTokens = ['acme-owners-demo-token', 'acme-organization-demo-token', 'alice-demo-token', 'bob-demo-token', 'carol-demo-token', 'acme-red-demo-token']
    const list = '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-DemoProduction01'
    for (const host of ['0.0.0.0', '192.168.1.20']) {
      const app = await buildApp(testConfig({ dataDir: 'memory://' }, { demo: true, host }), { logger: false })
      t.teardown(() => app.close())
      t.equal(app.demoSeeded, false, `HOST=${host}: no demo data`)
      for (const token of demoTokens) t.equal((await app.inject({ url: list, headers: bearer(token) })).statusCode, 401, `HOST=${host}: ${token} is 401`)
    }
    for (const host of ['127.0.0.1', '::1']) {
      const app = await buildApp(testConfig({ dataDir: 'memory://' }, { demo: true, host }), { logger: false })
      t.teardown(() => app.close())
      t.equal(app.demoSeeded, true, `HOST=${host}: the quick start has its demo data`)
      t.equal((await app.inject({ url: list, headers: bearer('acme-owners-demo-token') })).statusCode, 200)
    }
  })
}

t.test('a database that is not reachable fails the start with the reason', async (t) => {
  await t.rejects(buildApp(testConfig({ url: 'postgres://postgres@127.0.0.1:1/none' }), { logger: false }), { message: /ECONNREFUSED/ })
})

t.test('SEED_FILE is applied on start; a broken one stops the start', async (t) => {
  const location = await freshLocation(t)
  const seedFile = new URL('./fixtures/design-seed.json', import.meta.url).pathname
  const app = await buildApp(testConfig(location, { seedFile }), { logger: false })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/api/v2/team-workspaces/tws-1', headers: bearer('acme-organization-token') })
  t.equal(res.statusCode, 200)
  await t.rejects(buildApp(testConfig({ dataDir: 'memory://' }, { seedFile: '/nonexistent/seed.json' }), { logger: false }),
    { name: 'SeedError', message: /seed\.json: cannot read the seed file/ })
})

/** Runs the server entry the way `npm start` does (through tap's TypeScript loader), and collects what it prints. */
function runServer (env: Record<string, string>): Promise<{ code: number | null, output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, new URL('../src/server.ts', import.meta.url).pathname], {
      env: { ...process.env, DATABASE_URL: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let output = ''
    child.stdout.on('data', (d) => { output += d })
    child.stderr.on('data', (d) => { output += d })
    child.on('exit', (code) => resolve({ code, output }))
  })
}

t.test('bad settings stop the server with a clear message and a non-zero exit, not a stack trace', async (t) => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'eighty' }, /team-access: invalid setting: PORT must be integer/],
    [{ PORT: '70000' }, /team-access: invalid setting: PORT must be <= 65535/],
    [{ DATABASE_URL: 'mysql://localhost/x' }, /team-access: invalid setting: DATABASE_URL must match pattern/],
    [{ DATABASE_URL: 'postgres://[bad' }, /team-access: invalid setting: DATABASE_URL is not a valid URL/],
    [{ LOG_LEVEL: 'loud' }, /team-access: invalid setting: LOG_LEVEL must be equal to one of the allowed values/],
    [{ RATE_LIMIT: '-1' }, /team-access: invalid setting: RATE_LIMIT must be >= 0/],
    [{ AUDIT_RETENTION_DAYS: 'ninety' }, /team-access: invalid setting: AUDIT_RETENTION_DAYS must be integer/],
    [{ SEED_FILE: '/nonexistent/seed.json', DATA_DIR: 'memory://' }, /team-access: \/nonexistent\/seed\.json: cannot read the seed file \(ENOENT\)/],
    [{ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' }, /team-access: cannot reach the database: connect ECONNREFUSED/],
    // a role the server refuses (on the server the PostgreSQL run has; PGlite has no roles)
    ...(ENGINE === 'postgres' ? [[{ DATABASE_URL: refusedRole(process.env.DATABASE_URL!) }, /^team-access: the PostgreSQL server at [^ ]+ refused user "no-such-role" \(.*\): check the user and password in DATABASE_URL\n$/] as [Record<string, string>, RegExp]] : [])
  ]
  // side by side: each is a process start, and they share nothing
  const runs = await Promise.all(cases.map(async ([env]) => await runServer(env)))
  for (const [i, [env, message]] of cases.entries()) {
    const { code, output } = runs[i]!
    t.equal(code, 1, JSON.stringify(env))
    t.match(output, message, JSON.stringify(env))
    t.notMatch(output, /\n\s+at /, 'no stack trace')
  }
})

function refusedRole (url: string): string {
  const refused = new URL(url)
  refused.username = 'no-such-role'
  return refused.href
}
