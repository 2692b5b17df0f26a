import t, { type Test } from 'tap'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { applySeedDocument } from '../src/directory/seed.js'
import { testConfig } from '../test/helper.js'
import { reviewWorld } from '../bench/review-world.js'
import { launchChromium } from '../bench/chromium.js'

/**
 * Signing in to the access review's page (DESIGN §12.2) and what it says in words: a token of one
 * organization opens it without a name typed, a token of two offers the choice (and the header
 * switches between them), `?organization=` opens the one it names — the organizations as GET
 * /organizations (§14.3) lists them; a member's project headers and project filter name the
 * projects they read and say "projects you cannot read" of the others, never an id; the page says
 * who the token is (a user, a team's token, the organization's). On a service without that list
 * (GET /organizations answers 404: the browser is made to see one) the name is typed.
 */
const API = '/api/v2'
const world = reviewWorld({ teams: 12, workspaces: 30, projects: 4, users: 20, rowsPerTeam: 4, seed: 20261130 })
const { organization, tokens } = world
const TEAM_TOKEN = 'review-team-003-token'
const SECOND = 'second'
const doc = world.document as any
const review = doc.organizations[0]
// the member's team-001 reads project-001 (a team-project row); the member reads no other project
review['project-access'].push({ id: 'tprj-member-001', team: 'team-001', project: 'project-001', access: 'read' })
review.teams.find((team: any) => team.name === 'team-003').tokens = [TEAM_TOKEN]
// a second organization, of which the member (user001) is also a member
doc.organizations.push({
  id: 'org-second',
  name: SECOND,
  teams: [
    { id: 'team-second-owners', name: 'owners', owners: true, members: ['user005'] },
    { id: 'team-second-ops', name: 'ops', visibility: 'organization', members: ['user001'] }
  ],
  workspaces: [{ id: 'ws-second-1', name: 'ops-prod' }, { id: 'ws-second-2', name: 'ops-dev' }],
  'team-access': [{ id: 'tws-second-ops-1', team: 'ops', workspace: 'ops-prod', access: 'write' }]
})
/** Each token's organizations, as GET /organizations answers them. */
const ORGANIZATIONS: Record<string, string[]> = {
  [tokens.owner]: [organization],
  [tokens.member]: [organization, SECOND],
  [tokens.organization]: [organization],
  [TEAM_TOKEN]: [organization]
}

t.test('signing in to the access review page', async (t) => {
  const app = await buildApp(testConfig({ dataDir: 'memory://' }), { logger: false })
  t.teardown(() => app.close())
  await applySeedDocument(app.db, world.document)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const browser = await launchChromium()
  t.teardown(() => browser.close())
  for (const [token, names] of Object.entries(ORGANIZATIONS)) {
    const answer = (await app.inject({ url: `${API}/organizations`, headers: { authorization: `Bearer ${token}` } })).json()
    t.same(answer.data.map((o: any) => o.attributes.name).sort(), [...names].sort(), `GET /organizations lists ${names.join(', ')}`)
  }

  await t.test('a token of one organization opens it, nothing typed', async (t) => {
    const { page, problems } = await signIn(t, browser, origin, tokens.owner)
    await page.waitForSelector('#matrix[data-drawn]')
    t.ok(await page.isHidden('#organization'), 'no organization field')
    t.match(page.url(), new RegExp(`/ui/\\?organization=${organization}$`), 'the address names it: a reload opens it again')
    t.equal(await page.textContent('#who'), `${organization} · signed in as user000`)
    t.ok(await page.isHidden('#switch-organization-field'), 'nothing to switch to')
    // the owner's project headers: every project by name, none cut off
    const headers = await projectHeaders(page)
    t.ok(headers.some((h) => h.text === 'Default Project'), 'the default project by name')
    for (const header of headers) {
      t.equal(header.title, header.text, `${header.text}: its title holds its name`)
      t.ok(header.whole, `${header.text}: its name whole over ${header.columns} workspace${header.columns === 1 ? '' : 's'}`)
    }
    await page.reload()
    await page.waitForSelector('#matrix[data-drawn]')
    t.pass('reloaded: the tab\'s token and the address open it again')
    t.same(problems, [], 'no script error, no failed request')
  })

  await t.test('a token of two organizations: a choice, then a switch in the header', async (t) => {
    const { page, problems } = await signIn(t, browser, origin, tokens.member)
    await page.waitForSelector('#choose:not([hidden])')
    t.same(await page.$$eval('#organizations button', (buttons) => buttons.map((b) => b.textContent)), [organization, SECOND], 'both, by name')
    t.ok(await page.isHidden('#review'), 'nothing drawn before the choice')
    await page.click(`#organizations button[data-organization="${SECOND}"]`)
    await page.waitForSelector('#matrix[data-drawn]')
    t.equal(await page.textContent('#review-title'), `Your teams' access in ${SECOND}`)
    t.equal(await page.textContent('#who'), `${SECOND} · signed in as user001`)
    t.match(page.url(), new RegExp(`\\?organization=${SECOND}$`))
    t.ok(await page.isVisible('#switch-organization'), 'the header switches between the two')
    await page.evaluate(() => { delete document.getElementById('matrix')!.dataset.drawn })
    await page.selectOption('#switch-organization', organization)
    await page.waitForSelector('#matrix[data-drawn]')
    t.equal(await page.textContent('#review-title'), `Your teams' access in ${organization}`, 'switched')
    t.same(problems, [], 'no script error, no failed request')
  })

  await t.test("a member's headers and filter name the projects they read, and no id", async (t) => {
    const { page, problems } = await signIn(t, browser, origin, tokens.member, { address: organization })
    await page.waitForSelector('#matrix[data-drawn]')
    const readable = (await memberGet(app, `/organizations/${organization}/projects?page[size]=100`)).data.map((p: any) => p.attributes.name)
    t.same(readable, ['project-001'], 'the member reads one project (the API says)')
    const headers = await projectHeaders(page)
    t.same(headers.map((h) => h.text), ['project-001', 'projects you cannot read'], 'the project by name; the others together, said so')
    for (const header of headers) t.ok(header.whole, `${header.text}: whole over ${header.columns} workspace${header.columns === 1 ? '' : 's'}`)
    const options = await page.$$eval('#filter-project option', (items) => items.map((o) => o.textContent))
    t.same(options, ['All projects', 'project-001', 'Projects you cannot read'], 'the project filter: names, and the rest together')
    t.notMatch(await page.textContent('#review'), /prj-/, 'no project id anywhere in the matrix or the filters')
    await page.selectOption('#filter-project', { label: 'project-001' })
    await page.waitForFunction(() => document.querySelectorAll('#matrix .project').length === 1)
    t.equal(await page.textContent('#matrix .project'), 'project-001', 'the filter keeps the project\'s workspaces')
    await page.selectOption('#filter-project', { label: 'Projects you cannot read' })
    await page.waitForFunction(() => document.querySelector('#matrix .project')?.textContent === 'projects you cannot read')
    t.pass('and the others\'')
    await page.selectOption('#filter-project', '')
    // a member's filters suggest no other person
    t.ok(await page.isHidden('#filter-user'), 'no user filter for a member: they see their own teams')
    // why, in words: the project row by its project's name, a team by "team <name>"
    const labels = await page.$$eval('#matrix [data-a][aria-label^="team-001 on "]', (cells) => cells.map((c) => c.getAttribute('aria-label')!))
    t.ok(labels.length > 0, 'team-001 has cells')
    const grants: string[] = []
    for (const label of labels) {
      await page.click(`#matrix [aria-label="${label}"]`)
      await page.waitForSelector('#why:not([hidden])')
      grants.push(...await page.$$eval('#why-body .grants li', (items) => items.map((i) => i.textContent ?? '')))
      await page.keyboard.press('Escape')
    }
    t.ok(grants.includes('team team-001: access to the project project-001 (tprj-member-001, read), read on its workspaces'), 'the project row\'s grant names its project')
    t.notMatch(grants.join('\n'), /'s team access/, 'no "devs\'s"')
    t.match(grants.join('\n'), /team team-001: team access on this workspace \(tws-/, 'a team-access row\'s grant: "team team-001: team access…"')
    t.same(problems, [], 'no script error, no failed request')
  })

  await t.test('a team\'s token and the organization\'s are named as such', async (t) => {
    for (const [token, who] of [[TEAM_TOKEN, `the token of team team-003 in ${organization}`], [tokens.organization, `the organization token of ${organization}`]] as const) {
      const { page, problems } = await signIn(t, browser, origin, token)
      await page.waitForSelector('#matrix[data-drawn]')
      t.equal(await page.textContent('#who'), who)
      t.same(problems, [], 'no script error, no failed request')
    }
  })

  await t.test('an address naming an organization the token does not belong to: said so, then its own', async (t) => {
    const { page } = await signIn(t, browser, origin, tokens.owner, { address: SECOND })
    await page.waitForFunction(() => document.getElementById('sign-in-error')?.textContent !== '')
    t.equal(await page.textContent('#sign-in-error'), `No organization ${SECOND} that this token may read.`)
    await page.click('#sign-in button[type="submit"]') // the tab's token again
    await page.waitForSelector('#matrix[data-drawn]')
    t.match(page.url(), new RegExp(`\\?organization=${organization}$`), 'its own organization')
  })

  await t.test('a service that does not list organizations (GET /organizations answers 404): the name is typed', async (t) => {
    const { page, problems } = await signIn(t, browser, origin, tokens.owner, { unlisted: true })
    await page.waitForSelector('#organization', { state: 'visible' })
    t.match(await page.textContent('#sign-in-error'), /Type the organization's name/)
    await page.fill('#organization', organization)
    await page.click('#sign-in button[type="submit"]')
    await page.waitForSelector('#matrix[data-drawn]')
    t.equal(await page.textContent('#who'), `${organization} · signed in as user000`)
    t.same(problems, [], 'no script error, no failed request')
  })
})

/**
 * A fresh browser context (its own sessionStorage), the page (at `?organization=` when `address`),
 * the token pasted and submitted. `unlisted`: the browser sees GET /organizations answer 404, as
 * a service from before it answers.
 */
async function signIn (t: Test, browser: Browser, origin: string, token: string, { unlisted = false, address }: { unlisted?: boolean, address?: string } = {}): Promise<{ page: Page, problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  t.teardown(() => context.close())
  if (unlisted) await withoutOrganizations(context)
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', (err) => problems.push(err.message))
  page.on('response', (response) => {
    // the 404s the page expects: the access review for a member, the audit trail, the account of a
    // token that is no user's, the organizations of a service that does not list them, an
    // organization the token is no member of
    const expected = response.status() === 404 && /\/access-review$|\/organization\/audit-trail\?|\/account\/details$|\/api\/v2\/organizations\?|\/organizations\/second\//.test(response.url())
    if (response.status() >= 400 && !expected) problems.push(`${response.status()} ${response.url()}`)
  })
  await page.goto(`${origin}/ui/${address === undefined ? '' : `?organization=${address}`}`)
  await page.fill('#token', token)
  await page.click('#sign-in button[type="submit"]')
  return { page, problems }
}

/** GET /organizations answers 404 in this context, as on a service from before §14.3 (its 404 for a path it does not know). */
async function withoutOrganizations (context: BrowserContext): Promise<void> {
  await context.route((url) => url.pathname === `${API}/organizations`, async (route) => await route.fulfill({
    status: 404,
    contentType: 'application/vnd.api+json',
    body: JSON.stringify({ errors: [{ status: '404', title: 'not found' }] })
  }))
}

/** The project headers as drawn: each one's text, title, columns and whether its name shows whole (not clipped). */
async function projectHeaders (page: Page): Promise<Array<{ text: string, title: string, columns: number, whole: boolean }>> {
  return await page.$$eval('#matrix .project', (headers) => headers.map((header) => {
    const cell = (document.querySelector('#matrix .workspaces [role="columnheader"]') as HTMLElement).getBoundingClientRect().width
    const element = header as HTMLElement
    return {
      text: element.textContent ?? '',
      title: element.title,
      columns: Math.round(element.getBoundingClientRect().width / cell),
      whole: element.scrollHeight <= element.clientHeight + 1 && element.scrollWidth <= element.clientWidth + 1
    }
  }))
}

async function memberGet (app: FastifyInstance, path: string): Promise<any> {
  const response = await app.inject({ url: `${API}${path}`, headers: { authorization: `Bearer ${tokens.member}` } })
  if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode}`)
  return response.json()
}
