import t, { type Test } from 'tap'
import type { Browser, Page } from 'playwright-core'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { applySeedDocument } from '../src/directory/seed.js'
import { testConfig } from '../test/helper.js'
import { reviewWorld } from '../bench/review-world.js'
import { launchChromium } from '../bench/chromium.js'

/**
 * The access review's page keeps within the caller's rate limit (DESIGN §12.2), on a service at
 * the default RATE_LIMIT (30 requests a second per caller, as a service started with no setting
 * has it): a member of 40 teams and an owner of 5,000 workspaces load in full, with no 429 and no
 * error; and while another client spends the same token's budget, the page waits out the 429s
 * (their Retry-After) and loads, never showing them, never dropping the token.
 */
const API = '/api/v2'
const DEFAULTS = loadConfig({ DATA_DIR: 'memory://' })
const { document: seed, organization, tokens } = reviewWorld({ teams: 48, workspaces: 5000, projects: 8, users: 60, rowsPerTeam: 4, seed: 20261129, memberTeams: 40 })

t.test('the page at the default rate limit', async (t) => {
  t.equal(DEFAULTS.rateLimit, 30, 'the default RATE_LIMIT: 30 a second')
  const app = await buildApp(testConfig({ dataDir: 'memory://' }, { rateLimit: DEFAULTS.rateLimit, callerConcurrency: DEFAULTS.callerConcurrency }), { logger: false })
  t.teardown(() => app.close())
  const seeding = Date.now()
  await applySeedDocument(app.db, seed)
  t.comment(`seeded in ${((Date.now() - seeding) / 1000).toFixed(1)} s`)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const browser = await launchChromium()
  t.teardown(() => browser.close())

  await t.test('an owner of 5,000 workspaces: every workspace, every team, no 429', async (t) => {
    const began = Date.now()
    const { page, seen } = await open(t, browser, origin, tokens.owner)
    t.comment(`loaded and drawn in ${((Date.now() - began) / 1000).toFixed(1)} s`)
    t.equal(await page.getAttribute('#matrix', 'aria-colcount'), String(5000 + 1), 'every workspace a column')
    t.equal(await page.getAttribute('#matrix', 'aria-rowcount'), String(48 + 2), 'every team a row')
    t.ok(seen.requests > 50, `the workspaces in pages of 100, and the rest (${seen.requests} requests)`)
    t.same(seen.throttled, [], 'no answer 429: the page kept to the limit')
    t.same(seen.problems, [], 'no script error, no failed request')
    t.notMatch(await page.textContent('body'), /could not load|too many/i, 'no error shown')
    t.equal(await page.textContent('#who'), `${organization} · signed in as user000`)
  })

  await t.test('a member of 40 teams: each team\'s reach, no 429', async (t) => {
    const began = Date.now()
    const { page, seen } = await open(t, browser, origin, tokens.member)
    t.comment(`loaded and drawn in ${((Date.now() - began) / 1000).toFixed(1)} s`)
    t.equal(await page.getAttribute('#matrix', 'aria-rowcount'), String(40 + 2), 'the 40 teams, each a row')
    const expected = await memberCells(app)
    const reach = Number(await page.getAttribute('#matrix', 'data-reach'))
    t.equal(reach, expected, `every cell of the 40 teams' effective access (${expected})`)
    t.ok(seen.requests >= 40, `a request per team at least (${seen.requests} requests)`)
    t.same(seen.throttled, [], 'no answer 429: the page kept to the limit')
    t.same(seen.problems, [], 'no script error, no failed request')
    t.notMatch(await page.textContent('body'), /could not load|too many/i, 'no error shown')
  })

  await t.test('another client spends the token\'s budget: the page waits out the 429s and loads', async (t) => {
    // the same token, from elsewhere: 10 requests every 100 ms for 2.5 s, far past 30 a second
    let hammering = true
    const hammer = (async () => {
      const until = Date.now() + 2500
      while (Date.now() < until) {
        await Promise.all(Array.from({ length: 10 }, async () => await fetch(`${origin}${API}/account/details`, { headers: { authorization: `Bearer ${tokens.member}` } }).then(async (r) => await r.arrayBuffer())))
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      hammering = false
    })()
    await new Promise((resolve) => setTimeout(resolve, 300))
    t.ok(hammering, 'the budget is being spent')
    const began = Date.now()
    const { page, seen } = await open(t, browser, origin, tokens.member, async (page) => {
      await page.waitForFunction(() => document.getElementById('status')?.textContent?.includes("for the service's rate limit") === true, undefined, { timeout: 10_000 })
      t.pass('the page says it waits for the rate limit')
    })
    await hammer
    t.ok(seen.throttled.length > 0, `the service answered the page 429 (${seen.throttled.length} times), each waited out`)
    t.ok(Date.now() - began >= 1000, 'the page waited')
    t.equal(await page.getAttribute('#matrix', 'aria-rowcount'), String(40 + 2), 'and loaded in full')
    t.equal(Number(await page.getAttribute('#matrix', 'data-reach')), await memberCells(app), 'every cell')
    t.notMatch(await page.textContent('body'), /could not load|too many|More than 30/i, 'no error shown')
    t.ok(await page.evaluate((secret) => Object.values({ ...sessionStorage }).includes(secret), tokens.member), 'the token kept')
    t.same(seen.problems, [], 'no script error, no other failed request')
  })
})

/** A fresh browser context, the token pasted, the matrix drawn; what the page asked and what failed. */
async function open (t: Test, browser: Browser, origin: string, token: string, whileLoading?: (page: Page) => Promise<void>): Promise<{ page: Page, seen: { requests: number, throttled: string[], problems: string[] } }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  t.teardown(() => context.close())
  const page = await context.newPage()
  const seen = { requests: 0, throttled: [] as string[], problems: [] as string[] }
  page.on('request', (request) => { if (request.url().includes(API)) seen.requests++ })
  page.on('pageerror', (err) => seen.problems.push(err.message))
  page.on('response', (response) => {
    const status = response.status()
    if (status === 429) seen.throttled.push(response.url())
    // the 404s the page expects: the access review for a member, the account of a token that is no user's
    else if (status >= 400 && !(status === 404 && /\/access-review$|\/account\/details$/.test(response.url()))) seen.problems.push(`${status} ${response.url()}`)
  })
  await page.goto(`${origin}/ui/?organization=${organization}`)
  await page.fill('#token', token)
  await page.click('#sign-in button[type="submit"]')
  await whileLoading?.(page)
  await page.waitForSelector('#matrix[data-drawn]', { timeout: 60_000 })
  return { page, seen }
}

/** The member's teams' cells with access, as the access review answers them to the organization's token (one streamed document). */
async function memberCells (app: FastifyInstance): Promise<number> {
  const get = async (path: string): Promise<any> => {
    for (;;) {
      const response = await app.inject({ url: `${API}${path}`, headers: { authorization: `Bearer ${tokens.organization}` } })
      if (response.statusCode === 429) { await new Promise((resolve) => setTimeout(resolve, 1000)); continue }
      if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode}`)
      return response.json()
    }
  }
  const teams = new Set((await get(`/organizations/${organization}/teams?include=users&page[size]=100`)).data
    .filter((team: any) => team.relationships.users.data.some((u: { id: string }) => u.id === 'user-review-001'))
    .map((team: any) => team.id as string))
  return (await get(`/organizations/${organization}/access-review`)).data.filter((entry: any) => teams.has(entry.relationships.team.data.id)).length
}
