import t from 'tap'
import { buildApp } from '../src/app.js'
import { testConfig } from '../test/helper.js'
import { launchChromium } from '../bench/chromium.js'

/** /docs renders in a real browser: Debian's Chromium, driven by playwright-core. */
t.test('the /docs page renders the team access operations, the workspace and team reads, and the audit trail', async (t) => {
  const app = await buildApp(testConfig({ dataDir: 'memory://' }), { logger: false })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }

  const browser = await launchChromium()
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  const errors: string[] = []
  page.on('pageerror', (err) => errors.push(err.message))
  // the page's strict CSP (test/ui.test.ts) must refuse nothing the page needs
  const refused: string[] = []
  page.on('console', (message) => { if (/Content Security Policy/i.test(message.text())) refused.push(message.text()) })
  const response = await page.goto(`http://127.0.0.1:${port}/docs`, { waitUntil: 'load' })
  t.ok(response !== null && response.status() < 400, '/docs answers')

  await page.waitForSelector('.opblock', { timeout: 20_000 })
  const operations = await page.$$eval('.opblock', (blocks) => blocks.map((b) => {
    const method = b.querySelector('.opblock-summary-method')?.textContent?.trim() ?? ''
    const path = b.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? b.querySelector('.opblock-summary-path')?.textContent?.trim() ?? ''
    return `${method} ${path}`.replace(/\u200b/g, '')
  }))
  for (const operation of ['GET /api/v2/team-workspaces', 'POST /api/v2/team-workspaces', 'GET /api/v2/team-workspaces/{id}', 'PATCH /api/v2/team-workspaces/{id}', 'DELETE /api/v2/team-workspaces/{id}',
    'GET /api/v2/workspaces/{id}', 'GET /api/v2/organizations/{organization}/workspaces/{name}', 'GET /api/v2/organizations/{organization}/workspaces',
    'GET /api/v2/teams/{id}', 'GET /api/v2/organizations/{organization}/teams', 'GET /api/v2/organization/audit-trail']) {
    t.ok(operations.includes(operation), `the page shows ${operation}`)
  }
  const title = await page.textContent('.info .title')
  t.match(title, /team-access/)
  t.same(errors, [], 'no script errors on the page')
  t.same(refused, [], 'its CSP refuses nothing it loads')
})
