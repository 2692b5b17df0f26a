/**
 * `npm run bench:page` (DESIGN §12.2, issue 34): the access review's page in headless Chromium on
 * an organization of 200 teams × 500 workspaces (10 projects, members, every level, organization
 * access on some teams, project rows) — the time from "Show access" to the matrix drawn and
 * painted, for an owner (the whole organization) and for a member (their teams' reach). Three runs
 * each, every one in a fresh browser context; the median and the runs are printed.
 *
 * The service is the standalone one on its default, embedded database (PGlite), or on PostgreSQL
 * when DATABASE_URL is set (a database of its own, dropped after). CHROMIUM_PATH: the browser
 * (default /usr/bin/chromium).
 */
import type { Browser } from 'playwright-core'
import { buildApp } from '../src/app.js'
import { applySeedDocument } from '../src/directory/seed.js'
import { reviewWorld } from './review-world.js'
import { launchChromium } from './chromium.js'
import { throwawayDatabase } from './processes.js'

const RUNS = 3
const world = reviewWorld({ teams: 200, workspaces: 500, projects: 10, users: 400, rowsPerTeam: 20, seed: 12 })

const database = await databaseLocation()
const app = await buildApp({ port: 0, host: '127.0.0.1', database: database.location, logLevel: 'silent', rateLimit: 0, demo: false }, { logger: false })
await applySeedDocument(app.db, world.document)
await app.listen({ port: 0, host: '127.0.0.1' })
const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
const browser = await launchChromium()

try {
  console.log(`the access review's page, 200 teams × 500 workspaces, on ${database.engine}, headless Chromium ${browser.version()}`)
  for (const [who, token] of [['owner', world.tokens.owner], ['member', world.tokens.member]] as const) {
    const runs: Array<Awaited<ReturnType<typeof drawOnce>>> = []
    for (let i = 0; i < RUNS; i++) runs.push(await drawOnce(browser, token))
    const sorted = runs.map((r) => r.ms).sort((a, b) => a - b)
    console.log(`  ${who}: drawn in ${sorted[Math.floor(RUNS / 2)]!} ms (median of ${RUNS}: ${runs.map((r) => r.ms).join(', ')} ms), ` +
      `of which the API's answers ${runs.map((r) => r.loadMs).join(', ')} ms; ${runs[0]!.cells.toLocaleString('en')} cells with access of ${runs[0]!.rows} rows × ${runs[0]!.columns} columns (${runs[0]!.drawnRows} rows in the DOM), ${runs[0]!.requests} requests`)
  }
} finally {
  await browser.close()
  await app.close()
  await database.drop()
}

/** One sign-in, from the click to the matrix drawn and painted (two animation frames after it is in the DOM). */
async function drawOnce (browser: Browser, token: string): Promise<{ ms: number, cells: number, rows: number, drawnRows: number, columns: number, requests: number, loadMs: number }> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } })
  try {
    const page = await context.newPage()
    let requests = 0
    page.on('request', (request) => { if (request.url().includes('/api/')) requests++ })
    // the address names the organization: the page opens it once the token is pasted
    await page.goto(`${origin}/ui/?organization=${world.organization}`)
    await page.fill('#token', token)
    const began = Date.now()
    await page.click('#sign-in button[type="submit"]')
    await page.waitForSelector('#matrix[data-drawn]', { timeout: 60_000 })
    await page.evaluate(async () => await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))))
    const ms = Date.now() - began
    const size = await page.evaluate(() => {
      const grid = document.getElementById('matrix')!
      const submitted = performance.getEntriesByName('team-access:submitted')[0]?.startTime ?? 0
      const at = (name: string) => Math.round((performance.getEntriesByName(name)[0]?.startTime ?? 0) - submitted)
      return {
        cells: Number(grid.dataset.reach),
        rows: Number(grid.getAttribute('aria-rowcount')) - 2,
        drawnRows: grid.querySelectorAll('.body [role="row"]').length,
        columns: grid.querySelectorAll('.workspaces [role="columnheader"]').length,
        loadMs: at('team-access:loaded')
      }
    })
    return { ms, ...size, requests }
  } finally {
    await context.close()
  }
}

async function databaseLocation (): Promise<{ engine: string, location: { dataDir: string } | { url: string }, drop: () => Promise<void> }> {
  const url = process.env.DATABASE_URL
  if (url === undefined) return { engine: 'embedded PGlite', location: { dataDir: 'memory://' }, drop: async () => {} }
  const own = await throwawayDatabase(url, `team_access_bench_page_${process.pid}`)
  return { engine: 'PostgreSQL', location: { url: own.url }, drop: own.drop }
}
