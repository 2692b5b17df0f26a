import t from 'tap'
import Fastify from 'fastify'
import { buildApp } from '../src/app.js'
import teamAccess, { connect, migrate } from '../src/index.js'
import { UI_CONTENT_SECURITY_POLICY } from '../src/ui.js'
import { DOCS_CONTENT_SECURITY_POLICY } from '../src/docs.js'
import { testConfig } from './helper.js'

/**
 * The access review's page is served (DESIGN §12.2): by the standalone service at /ui/, by the
 * plugin at <prefix>/ui/ only when the host asks (`ui: true`), its files and nothing else, each
 * with the strict CSP, its API address written into the page. Its behaviour in a browser is
 * test-browser/access-review-page.test.ts's.
 */
t.test('the standalone service serves the page at /ui/', async (t) => {
  const app = await buildApp(testConfig({ dataDir: 'memory://' }), { logger: false })
  t.teardown(() => app.close())
  const page = await app.inject({ url: '/ui/' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.equal(page.headers['content-security-policy'], UI_CONTENT_SECURITY_POLICY)
  t.equal(page.headers['x-content-type-options'], 'nosniff')
  t.equal(page.headers['referrer-policy'], 'no-referrer')
  t.match(page.body, '<meta name="api-base" content="/api/v2">')
  t.notMatch(page.body, /<script>|<style>|\sstyle=/, 'no inline script or style')
  for (const [file, type] of [['app.js', /^text\/javascript/], ['style.css', /^text\/css/], ['favicon.svg', /^image\/svg\+xml/]] as const) {
    const served = await app.inject({ url: `/ui/${file}` })
    t.equal(served.statusCode, 200, file)
    t.match(served.headers['content-type'], type)
    t.equal(served.headers['content-security-policy'], UI_CONTENT_SECURITY_POLICY)
  }
  const bare = await app.inject({ url: '/ui' })
  t.equal(bare.statusCode, 302)
  t.equal(bare.headers.location, '/ui/')
  for (const path of ['/ui/main.ts', '/ui/../package.json', '/ui/index.html/', '/ui/app.js.map']) {
    t.equal((await app.inject({ url: path })).statusCode, 404, `${path}: nothing else`)
  }
})

t.test('the plugin serves it under its prefix only with ui: true', async (t) => {
  const { db, close } = await connect({ dataDir: 'memory://' })
  t.teardown(close)
  await migrate(db)
  for (const ui of [true, false, undefined]) {
    const host = Fastify()
    t.teardown(() => host.close())
    await host.register(teamAccess, { database: db, migrate: false, prefix: '/tfe/api/v2', ...(ui === undefined ? {} : { ui }) })
    const page = await host.inject({ url: '/tfe/api/v2/ui/' })
    if (ui === true) {
      t.equal(page.statusCode, 200, 'ui: true')
      t.match(page.body, '<meta name="api-base" content="/tfe/api/v2">', 'the page calls the API under the host\'s prefix')
      t.match(page.headers['content-type'], /^text\/html/)
      t.equal(page.headers['content-security-policy'], UI_CONTENT_SECURITY_POLICY)
      t.match((await host.inject({ url: '/tfe/api/v2/ui/app.js' })).headers['content-type'], /^text\/javascript/, 'the files as what they are, not as JSON:API')
      t.equal((await host.inject({ url: '/tfe/api/v2/ui' })).headers.location, '/tfe/api/v2/ui/')
    } else {
      t.equal(page.statusCode, 404, `ui: ${String(ui)}: no page`)
    }
  }
})

t.test('/docs, where people paste a token, cannot be framed and runs only its own scripts', async (t) => {
  const app = await buildApp(testConfig({ dataDir: 'memory://' }), { logger: false })
  t.teardown(() => app.close())
  for (const url of ['/docs', '/docs/', '/docs/static/index.html', '/docs/static/swagger-initializer.js', '/docs/json']) {
    const served = await app.inject({ url })
    t.ok(served.statusCode < 400, `${url} answers`)
    t.equal(served.headers['content-security-policy'], DOCS_CONTENT_SECURITY_POLICY, `${url}: the CSP`)
    t.match(served.headers['content-security-policy'], /frame-ancestors 'none'/)
    t.notMatch(served.headers['content-security-policy'], /unsafe-eval|script-src[^;]*unsafe-inline|https:/)
    t.equal(served.headers['x-frame-options'], 'DENY', `${url}: no frame`)
  }
  const api = await app.inject({ url: '/ping' })
  t.equal(api.headers['x-frame-options'], undefined, 'the API answers as before')
})
