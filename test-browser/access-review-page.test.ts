import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { applySeedDocument } from '../src/directory/seed.js'
import { UI_CONTENT_SECURITY_POLICY } from '../src/ui.js'
import { testConfig } from '../test/helper.js'
import { reviewWorld } from '../bench/review-world.js'
import { launchChromium } from '../bench/chromium.js'

/**
 * The access review's page (DESIGN §12.2) in a real browser — Debian's Chromium, driven by
 * playwright-core: on a random world the matrix's cells equal the API's effective access, for an
 * owner (the whole organization) and for a member (their teams' reach); a cell's why names its
 * grants; the CSV button downloads the endpoint's bytes; the keyboard alone reaches a cell and
 * opens its why; the colours pass WCAG AA; the token is in sessionStorage and nowhere else — no
 * URL, request log, cookie or localStorage. SCREENSHOTS=docs writes docs/access-review-*.png.
 */
const API = '/api/v2'
const { document: seed, organization, tokens, member } = reviewWorld({ teams: 24, workspaces: 40, projects: 4, users: 30, rowsPerTeam: 5, seed: Number(process.env.SEED ?? 20261127) })

interface Drawn { teams: string[], workspaces: string[], cells: Record<string, string> }

t.test('the access review page', async (t) => {
  const logs: string[] = []
  const app = await buildApp(testConfig({ dataDir: 'memory://' }, { logLevel: 'debug' }), { logStream: { write: (line: string) => { logs.push(line) } } })
  t.teardown(() => app.close())
  await applySeedDocument(app.db, seed)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const browser = await launchChromium()
  t.teardown(() => browser.close())

  const served = await fetch(`${origin}/ui/`)
  t.equal(served.status, 200)
  t.equal(served.headers.get('content-security-policy'), UI_CONTENT_SECURITY_POLICY, 'a strict CSP')
  t.match(UI_CONTENT_SECURITY_POLICY, /default-src 'self'/)
  t.notMatch(await served.text(), /<script>|<style>| style=|unsafe-inline/, 'no inline script or style')
  t.equal((await fetch(`${origin}/ui`, { redirect: 'manual' })).headers.get('location'), '/ui/')

  await t.test('an owner sees the whole organization, as the API answers it', async (t) => {
    const { page, urls, problems } = await signIn(t, browser, origin, tokens.owner)
    const drawn = await readMatrix(page)
    const teams = await everyTeam(app, tokens.owner)
    t.same(drawn.teams, teams.map((team) => team.name).sort(), 'every team, secret ones too')
    const workspaces = await apiList(app, tokens.owner, `/organizations/${organization}/workspaces`)
    t.same([...drawn.workspaces].sort(), workspaces.map((w) => w.attributes.name).sort(), 'every workspace')
    // every workspace's own effective-access answer (DESIGN §10.2), cell by cell
    const expected: Record<string, string> = {}
    const names = new Map(teams.map((team) => [team.id, team.name]))
    for (const workspace of workspaces) {
      const answer = await inject(app, tokens.owner, `/workspaces/${workspace.id}/effective-access`)
      for (const entry of answer.data) expected[`${names.get(entry.relationships.team.data.id)!}|${workspace.attributes.name as string}`] = entry.attributes.access
    }
    t.same(drawn.cells, expected, `every cell is the workspace's effective access (${Object.keys(expected).length} cells)`)

    // why: a cell through a project row and one through a team-access row name their grants
    const review = await apiList(app, tokens.owner, `/organizations/${organization}/access-review`)
    for (const kind of ['team-project', 'team-access', 'organization-access.read-workspaces', 'owners']) {
      const entry = review.find((e) => e.attributes.grants.some((g: any) => g.kind === kind))
      if (entry === undefined) { t.fail(`the world has a grant of kind ${kind}`); continue }
      await page.click(`#matrix [aria-label="${entry.attributes['team-name'] as string} on ${entry.attributes['workspace-name'] as string}: ${entry.attributes.access as string}"]`)
      await page.waitForSelector('#why:not([hidden])')
      t.equal(await page.textContent('#why-title'), `${entry.attributes['team-name'] as string} on ${entry.attributes['workspace-name'] as string}`)
      t.same(await page.$$eval('#why-body .grants li', (items) => items.map((item) => item.getAttribute('data-kind'))), entry.attributes.grants.map((g: any) => g.kind), `why names the grants (${kind})`)
      const ids = entry.attributes.grants.flatMap((g: any) => [g['team-workspace'], g['team-project']].filter((id) => id !== undefined))
      const text = await page.textContent('#why-body') ?? ''
      for (const id of ids) t.match(text, id, `why names ${id as string}`)
      await page.waitForFunction(() => document.getElementById('why-events')?.textContent !== 'Loading…')
      // an owner's user token reads the trail (DESIGN §8): a seed's grant shows its event
      const events = await page.textContent('#why-events') ?? ''
      t.notMatch(events, /owners read|could not|error/i, 'an owner reads the audit trail')
      if (kind === 'team-access') t.match(events, /add_team by seed/, 'the seed’s grant, in the why panel')
      await page.keyboard.press('Escape')
    }

    // the CSV button downloads what the endpoint answers
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-csv')])
    const csv = await app.inject({ url: `${API}/organizations/${organization}/access-review`, headers: { authorization: `Bearer ${tokens.owner}`, accept: 'text/csv' } })
    t.equal(readFileSync(await download.path(), 'utf8'), csv.body, 'the CSV button downloads the endpoint\'s CSV, byte for byte')
    t.match(download.suggestedFilename(), new RegExp(`^${organization}-access-review-\\d{4}-\\d{2}-\\d{2}\\.csv$`))

    // the filters: a user's teams, a project's workspaces, one level
    const someone = teams.find((team) => team.members.length > 0 && !team.owners)!.members[0]!
    await page.fill('#filter-user', someone)
    await page.waitForFunction((user) => document.getElementById('summary')?.textContent?.includes(`${user} is in`), someone)
    t.same((await readMatrix(page)).teams, teams.filter((team) => team.members.includes(someone)).map((team) => team.name).sort(), `the user filter keeps ${someone}'s teams`)
    await page.fill('#filter-user', '')
    await page.selectOption('#filter-level', 'admin')
    await page.waitForFunction(() => [...document.querySelectorAll('#matrix [data-a]')].every((td) => td.getAttribute('data-a') === 'admin'))
    const admins = await readMatrix(page)
    t.same(admins.cells, Object.fromEntries(Object.entries(expected).filter(([, level]) => level === 'admin')), 'the level filter keeps the admin cells')
    await page.selectOption('#filter-level', '')

    if (process.env.SCREENSHOTS !== undefined) {
      // the matrix from its top, with one cell's why open
      const entry = review.find((e) => e.attributes.grants.length > 1) ?? review[0]
      await page.click(`#matrix [aria-label="${entry.attributes['team-name'] as string} on ${entry.attributes['workspace-name'] as string}: ${entry.attributes.access as string}"]`)
      await page.waitForSelector('#why:not([hidden])')
      await page.evaluate(() => { window.scrollTo(0, 0) })
      await page.screenshot({ path: `${process.env.SCREENSHOTS}/access-review-owner.png` })
      await page.keyboard.press('Escape')
    }
    await tokenNowhereButSession(t, page, urls, logs, tokens.owner)
    t.same(problems, [], 'no script error, no CSP violation')
  })

  await t.test('a member sees their own teams\' reach, and nothing else', async (t) => {
    const { page, urls, problems } = await signIn(t, browser, origin, tokens.member)
    const drawn = await readMatrix(page)
    const own = (await apiList(app, tokens.member, `/organizations/${organization}/teams?filter[own]=true`))
    t.ok(own.length >= 2, 'the member acts through teams of their own')
    t.same(drawn.teams, own.map((team) => team.attributes.name).sort(), 'their teams, and only theirs')
    const every = await everyTeam(app, tokens.owner)
    t.same(own.map((team) => team.id).sort(), every.filter((team) => team.members.includes(member)).map((team) => team.id).sort(), 'the teams filter[own] answers are the member\'s memberships')
    const expected: Record<string, string> = {}
    for (const team of own) {
      for (const entry of await apiList(app, tokens.member, `/teams/${team.id}/effective-access`)) {
        expected[`${team.attributes.name as string}|${/workspaces\/([^/]+)$/.exec(entry.relationships.workspace.links.related)![1]!}`] = entry.attributes.access
      }
    }
    t.same(drawn.cells, expected, `every cell is the team's effective access (${Object.keys(expected).length} cells)`)
    t.ok(await page.isHidden('#download-csv'), 'no CSV button: the access review is the owners\'')
    // why: a member is told that the owners read the history
    const [team, workspace] = Object.keys(expected)[0]!.split('|')
    await page.click(`#matrix [aria-label^="${team!} on ${workspace!}: "]`)
    await page.waitForSelector('#why:not([hidden])')
    await page.waitForFunction(() => document.getElementById('why-events')?.textContent !== 'Loading…')
    t.match(await page.textContent('#why-events'), /Only the organization's owners read the audit trail/, 'a member reads no audit trail: the page says so')
    await page.keyboard.press('Escape')
    if (process.env.SCREENSHOTS !== undefined) {
      await page.evaluate(() => { window.scrollTo(0, 0) })
      await page.screenshot({ path: `${process.env.SCREENSHOTS}/access-review-member.png` })
    }
    await tokenNowhereButSession(t, page, urls, logs, tokens.member)
    t.same(problems, [], 'no script error, no CSP violation')
  })

  await t.test("with the organization's token, why shows the cell's recent audit events", async (t) => {
    const row = (seed as any).organizations[0]['team-access'].find((r: any) => r.access === 'read')
    const changed = await app.inject({
      method: 'PATCH',
      url: `${API}/team-workspaces/${row.id as string}`,
      headers: { authorization: `Bearer ${tokens.owner}`, 'content-type': 'application/vnd.api+json' },
      payload: { data: { type: 'team-workspaces', attributes: { access: 'write' } } }
    })
    t.equal(changed.statusCode, 200, 'a change of access, in the audit trail')
    const { page, problems } = await signIn(t, browser, origin, tokens.organization)
    t.equal(await page.textContent('#who'), `the organization token of ${organization}`, 'the organization token, said so')
    await page.click(`#matrix [aria-label^="${row.team as string} on ${row.workspace as string}: "]`)
    await page.waitForFunction(() => document.querySelector('#why-events ul, #why-events p') !== null && document.getElementById('why-events')?.textContent !== 'Loading…')
    const events = await page.$$eval('#why-events li', (items) => items.map((item) => item.textContent ?? ''))
    t.match(events[0], /update_team_permissions by user000 — access=write/, 'the change, newest first, by whom and to what')
    t.same(problems, [], 'no script error, no CSP violation')
  })

  await t.test('a refused token is forgotten; an organization it cannot read is said so, the token kept', async (t) => {
    const context = await browser.newContext()
    t.teardown(() => context.close())
    const page = await context.newPage()
    await page.goto(`${origin}/ui/`)
    await page.fill('#token', 'no-such-token-at-all')
    await page.click('#sign-in button[type="submit"]')
    await page.waitForFunction(() => document.getElementById('sign-in-error')?.textContent !== '')
    t.match(await page.textContent('#sign-in-error'), /does not accept this token/)
    t.equal(await page.evaluate(() => sessionStorage.length), 0, 'nothing is kept')
    // an address naming an organization the token cannot read
    await page.goto(`${origin}/ui/?organization=nowhere`)
    await page.fill('#token', tokens.member)
    await page.click('#sign-in button[type="submit"]')
    await page.waitForFunction(() => document.getElementById('sign-in-error')?.textContent?.includes('nowhere') === true)
    t.ok(await page.evaluate((secret) => Object.values({ ...sessionStorage }).includes(secret), tokens.member), 'a 404 keeps the token for another try')
    t.notMatch(page.url(), /organization=/, 'the address names it no more')
    // the token's one organization, found by the page (or typed, where the service does not list them)
    if (await page.isVisible('#organization')) await page.fill('#organization', organization)
    await page.click('#sign-in button[type="submit"]')
    await page.waitForSelector('#matrix[data-drawn]')
    t.match(page.url(), new RegExp(`\\?organization=${organization}$`), 'the same token, its organization: drawn, and the address names it')
  })

  await t.test('the keyboard alone reaches a cell and opens its why', async (t) => {
    const { page } = await signIn(t, browser, origin, tokens.owner)
    let role: string | null = null
    for (let i = 0; i < 30 && role !== 'gridcell'; i++) {
      await page.keyboard.press('Tab')
      role = await page.evaluate(() => document.activeElement?.getAttribute('role') ?? null)
    }
    t.equal(role, 'gridcell', 'Tab reaches the matrix')
    await page.keyboard.press('ArrowRight')
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('ArrowLeft')
    await page.keyboard.press('ArrowUp')
    const label = await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))
    t.ok(label !== null && label !== undefined, 'the arrows come back to the first cell with access')
    await page.keyboard.press('Enter')
    await page.waitForSelector('#why:not([hidden])')
    t.equal(await page.textContent('#why-title'), label!.replace(/: \w+$/, ''), 'Enter opens its why')
    t.ok(await page.$$eval('#why-body .grants li', (items) => items.length > 0), 'with its grants')
    await page.keyboard.press('Escape')
    t.ok(await page.isHidden('#why'), 'Escape closes it')
    t.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), label, 'and focus returns to the cell')
  })

  await t.test('in a short window only the rows in view are in the DOM; scrolling and the keyboard reach every row', async (t) => {
    const tall = await readMatrix((await signIn(t, browser, origin, tokens.owner)).page)
    const { page, problems } = await signIn(t, browser, origin, tokens.owner, { width: 1280, height: 420 })
    const teams = await everyTeam(app, tokens.owner)
    const atFirst = await page.$$eval('#matrix .body [role="row"]', (rows) => rows.length)
    t.ok(atFirst < teams.length, `${atFirst} of ${teams.length} rows in the DOM at first`)
    const short = await readMatrix(page)
    t.ok(short.largestDrawn < teams.length, `never more than ${short.largestDrawn} at once`)
    t.same(short.teams, teams.map((team) => team.name).sort(), 'scrolled through: every team')
    t.same(short.cells, tall.cells, `every cell as a tall window draws them (${Object.keys(tall.cells).length})`)
    t.same(short.order, tall.order, 'in the same order')

    // from the grid's tab stop, PageDown to the last row: drawn, in view and focused
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press('Tab')
      if (await page.evaluate(() => document.activeElement?.getAttribute('role')) === 'gridcell') break
    }
    for (let i = 0; i < 3; i++) await page.keyboard.press('PageDown')
    const focused = async () => await page.evaluate(() => {
      const cell = document.activeElement!
      const row = cell.parentElement!
      const at = cell.getBoundingClientRect()
      const head = document.querySelector('#matrix .head')!.getBoundingClientRect()
      const wrap = document.getElementById('matrix-wrap')!.getBoundingClientRect()
      return { role: cell.getAttribute('role'), index: Number(row.getAttribute('aria-rowindex')), team: row.children[0]!.childNodes[0]!.textContent, inView: at.top >= head.bottom - 1 && at.bottom <= wrap.bottom + 1 }
    })
    const last = await focused()
    t.same(last, { role: 'gridcell', index: teams.length + 2, team: short.order.at(-1), inView: true }, 'PageDown reaches the last team, scrolled into view below the header')
    await page.keyboard.press('Enter')
    await page.waitForSelector('#why:not([hidden])')
    t.match(await page.textContent('#why-title'), new RegExp(`^${short.order.at(-1)!} on `), 'Enter opens its why')
    await page.keyboard.press('Escape')
    t.same(await focused(), last, 'Escape brings focus back to it')
    for (let i = 0; i < 3; i++) await page.keyboard.press('PageUp')
    t.same(await focused(), { ...last, index: 3, team: short.order[0] }, 'PageUp back to the first team')
    // the wheel scrolls the focused row out of the DOM: focus stays in the grid, on a row drawn since
    await page.hover('#matrix .body [role="row"]')
    await page.mouse.wheel(0, 2000)
    await page.waitForFunction(() => Number(document.activeElement?.parentElement?.getAttribute('aria-rowindex')) > 3)
    const after = await focused()
    t.equal(after.role, 'gridcell', `after a scroll, focus is still on a cell of the grid (row ${after.index})`)
    await page.keyboard.press('ArrowUp')
    t.same(await focused(), { ...after, index: after.index - 1, team: short.order[after.index - 4], inView: true }, 'and the arrows go on from there, in view')
    await page.keyboard.press('Control+Home')
    t.same(await focused(), { ...last, index: 3, team: short.order[0] }, 'Ctrl+Home: the first team')
    await page.keyboard.press('Control+End')
    t.equal((await focused()).index, teams.length + 2, 'Ctrl+End: the last team')
    t.same(problems, [], 'no script error, no CSP violation')
  })

  await t.test('every text colour passes WCAG AA against its background (4.5:1)', async (t) => {
    const { page } = await signIn(t, browser, origin, tokens.owner)
    const pairs = await page.evaluate(() => {
      // WCAG 2.x relative luminance and contrast ratio, of the computed colours
      const channel = (c: number) => { const s = c / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4 }
      const rgb = (value: string) => (value.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number)
      const luminance = (value: string) => { const [r, g, b] = rgb(value); return 0.2126 * channel(r!) + 0.7152 * channel(g!) + 0.0722 * channel(b!) }
      const background = (element: Element | null): string => {
        for (let e = element; e !== null; e = e.parentElement) {
          const color = getComputedStyle(e).backgroundColor
          if (color !== 'rgba(0, 0, 0, 0)' && color !== 'transparent') return color
        }
        return 'rgb(255, 255, 255)'
      }
      const selectors = ['.cell-key.l-admin', '.cell-key.l-write', '.cell-key.l-plan', '.cell-key.l-read', '.cell-key.l-custom', '#matrix .l-admin', '#matrix .l-read',
        'h1', '.who', '.hint', '.summary', '.toolbar label', '.badge', '.count', '#download-csv', '#matrix .projects [role="columnheader"]', '#matrix .workspaces [role="columnheader"]', '#matrix [role="rowheader"]']
      return selectors.map((selector) => {
        const element = document.querySelector(selector)
        if (element === null) return { selector, ratio: 0 }
        const [a, b] = [luminance(getComputedStyle(element).color), luminance(background(element))]
        return { selector, ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) }
      })
    })
    for (const { selector, ratio } of pairs) t.ok(ratio >= 4.5, `${selector}: ${ratio.toFixed(2)}:1`)
  })
})

/** A fresh browser context (its own sessionStorage), the page, the token pasted and the matrix drawn. */
async function signIn (t: Test, browser: Browser, origin: string, token: string, viewport?: { width: number, height: number }): Promise<{ page: Page, urls: string[], problems: string[] }> {
  const context = await browser.newContext({ acceptDownloads: true, ...(viewport === undefined ? {} : { viewport }) })
  t.teardown(() => context.close())
  const page = await context.newPage()
  const urls: string[] = []
  const problems: string[] = []
  page.on('request', (request) => urls.push(request.url()))
  page.on('pageerror', (err) => problems.push(err.message))
  // the API's 404s the page expects — the access review for anyone but owners, the audit trail for
  // anyone but owners, the account of a token that is no user's — are answers, not problems;
  // anything else that fails is
  page.on('response', (response) => {
    const expected = response.status() === 404 && /\/access-review$|\/organization\/audit-trail\?|\/account\/details$/.test(response.url())
    if (response.status() >= 400 && !expected) problems.push(`${response.status()} ${response.url()}`)
  })
  page.on('console', (message) => { if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text()) })
  // the address names the organization (the page's own GET /organizations: access-review-sign-in.test.ts)
  await page.goto(`${origin}/ui/?organization=${organization}`)
  await page.fill('#token', token)
  await page.click('#sign-in button[type="submit"]')
  await page.waitForSelector('#matrix[data-drawn]', { timeout: 30_000 })
  return { page, urls, problems }
}

/**
 * The matrix as drawn: row teams (in the page's order), column workspaces, and each cell with access
 * as `team|workspace` → level. Only the rows in view are in the DOM: the matrix is read scrolling
 * from its top to its bottom, half a screen at a time; `largestDrawn` is the most rows the DOM held at once.
 */
async function readMatrix (page: Page): Promise<Drawn & { order: string[], largestDrawn: number }> {
  return await page.evaluate(async () => {
    const grid = document.getElementById('matrix')!
    const wrap = document.getElementById('matrix-wrap')!
    const frames = async () => await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))
    const workspaces = [...grid.querySelectorAll('.workspaces [role="columnheader"]')].map((header) => header.getAttribute('title')!)
    const teams = new Map<number, string>()
    const cells: Record<string, string> = {}
    let largestDrawn = 0
    for (let top = 0; ; top += Math.max(1, Math.floor(wrap.clientHeight / 2))) {
      wrap.scrollTop = top
      await frames()
      const rows = grid.querySelectorAll('.body [role="row"]')
      largestDrawn = Math.max(largestDrawn, rows.length)
      for (const row of rows) {
        const team = row.children[0]!.childNodes[0]!.textContent!
        teams.set(Number(row.getAttribute('aria-rowindex')), team)
        for (let c = 1; c < row.children.length; c++) {
          const level = row.children[c]!.getAttribute('data-a')
          if (level !== null) cells[`${team}|${workspaces[c - 1]!}`] = level
        }
      }
      if (wrap.scrollTop + wrap.clientHeight >= wrap.scrollHeight) break
    }
    wrap.scrollTop = 0
    await frames()
    const order = [...teams.entries()].sort(([a], [b]) => a - b).map(([, team]) => team)
    return { teams: [...order].sort(), order, workspaces, cells, largestDrawn }
  }).then((drawn) => ({ ...drawn, cells: sortKeys(drawn.cells) }))
}

/** The token was sent, and is in sessionStorage — and in no URL, cookie, localStorage or log line. */
async function tokenNowhereButSession (t: Test, page: Page, urls: string[], logs: string[], token: string): Promise<void> {
  t.ok(urls.length > 5, `the page made its requests (${urls.length})`)
  t.same(urls.filter((url) => url.includes(token)), [], 'no request URL holds the token')
  t.equal(page.url().includes(token), false, 'nor the page\'s own')
  t.same((await page.context().cookies()).filter((c) => c.value.includes(token)), [], 'no cookie holds it')
  t.equal(await page.evaluate(() => JSON.stringify({ ...localStorage })), '{}', 'localStorage is empty')
  t.ok(await page.evaluate((secret) => Object.values({ ...sessionStorage }).includes(secret), token), 'sessionStorage holds it')
  t.ok(logs.some((line) => line.includes('/access-review') || line.includes('/effective-access')), 'the service logged the page\'s requests')
  t.same(logs.filter((line) => line.includes(token)), [], 'no log line holds the token')
}

const sortKeys = (record: Record<string, string>) => Object.fromEntries(Object.entries(record).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))

async function inject (app: FastifyInstance, token: string, path: string): Promise<any> {
  const response = await app.inject({ url: `${API}${path}`, headers: { authorization: `Bearer ${token}` } })
  if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode} ${response.body}`)
  return response.json()
}

/** Every page of a list. */
async function apiList (app: FastifyInstance, token: string, path: string): Promise<any[]> {
  const all: any[] = []
  for (let n = 1; ; n++) {
    const page = await inject(app, token, `${path}${path.includes('?') ? '&' : '?'}page[size]=100&page[number]=${n}`)
    all.push(...page.data)
    if (page.meta.pagination['next-page'] === null) return all
  }
}

async function everyTeam (app: FastifyInstance, token: string): Promise<Array<{ id: string, name: string, owners: boolean, members: string[] }>> {
  const teams = await apiList(app, token, `/organizations/${organization}/teams?include=users`)
  const members = new Map<string, string[]>()
  for (const team of teams) members.set(team.id, team.relationships.users.data.map((u: { id: string }) => u.id))
  const users = new Map((seed as any).users.map((u: any) => [u.id, u.username]))
  return teams.map((team) => ({ id: team.id, name: team.attributes.name, owners: team.attributes.name === 'owners', members: members.get(team.id)!.map((id) => users.get(id) as string) }))
}
