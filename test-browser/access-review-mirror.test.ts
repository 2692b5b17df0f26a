import t, { type Test } from 'tap'
import type { Browser, Page } from 'playwright-core'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { applySeedDocument } from '../src/directory/seed.js'
import { runMirror } from '../src/mirror/run.js'
import { regenerateOrganizationToken } from '../src/mirror/organization-token.js'
import { testConfig } from '../test/helper.js'
import { reviewWorld } from '../bench/review-world.js'
import { launchChromium } from '../bench/chromium.js'

/**
 * A mirrored organization on the access review's page (DESIGN §12.2, §13): the page says where it
 * is mirrored from and how long ago, that it is read-only here, and lists what the last run that
 * found a change saw change; a cell's why shows that change as the mirror saw it in HCP Terraform.
 * An organization that is not mirrored says none of it. This service stands in for HCP Terraform.
 */
const world = reviewWorld({ teams: 8, workspaces: 12, projects: 2, users: 10, rowsPerTeam: 3, seed: 20261128 })
const { organization, tokens } = world

async function serve (t: Test): Promise<{ app: FastifyInstance, origin: string }> {
  const app = await buildApp(testConfig({ dataDir: 'memory://' }), { logger: false })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, origin: `http://127.0.0.1:${(app.server.address() as { port: number }).port}` }
}

async function signIn (t: Test, browser: Browser, origin: string, token: string): Promise<{ page: Page, problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  t.teardown(() => context.close())
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', (err) => problems.push(err.message))
  page.on('response', (response) => {
    // the account of a token that is no user's: 404, as the page expects
    if (response.status() >= 400 && !/\/account\/details$/.test(response.url())) problems.push(`${response.status()} ${response.url()}`)
  })
  await page.goto(`${origin}/ui/`)
  await page.fill('#token', token)
  await page.click('#sign-in button[type="submit"]')
  await page.waitForSelector('#matrix[data-drawn]')
  return { page, problems }
}

t.test('a mirrored organization on the page: where from, how long ago, what changed', async (t) => {
  const source = await serve(t)
  await applySeedDocument(source.app.db, world.document)
  const mirror = await serve(t)
  const run = async () => await runMirror(mirror.app.db, { from: source.origin, organization, token: tokens.owner, rate: 1000 })
  await run()
  // a change in "HCP Terraform": a team's level on a workspace, then the next run
  const row = (await source.app.db.selectFrom('team_workspaces').select(['id', 'team_id', 'workspace_id', 'access']).where('access', '<>', 'custom').orderBy('id').executeTakeFirstOrThrow())
  const level = row.access === 'read' ? 'admin' : 'read'
  const patched = await source.app.inject({ method: 'PATCH', url: `/api/v2/team-workspaces/${row.id}`, headers: { authorization: `Bearer ${tokens.owner}`, 'content-type': 'application/vnd.api+json' }, payload: { data: { type: 'team-workspaces', attributes: { access: level } } } })
  t.equal(patched.statusCode, 200)
  const second = await run()
  t.same(second.summary!.changed.teamAccess.length, 1, 'the second run changed the one row')
  const reviewer = (await regenerateOrganizationToken(mirror.app.db, organization))!
  const [team, workspace] = await Promise.all([
    source.app.db.selectFrom('teams').select('name').where('id', '=', row.team_id).executeTakeFirstOrThrow(),
    source.app.db.selectFrom('workspaces').select('name').where('id', '=', row.workspace_id).executeTakeFirstOrThrow()
  ])

  const browser = await launchChromium()
  t.teardown(() => browser.close())
  const host = source.origin.replace('http://', '')

  await t.test('the mirrored organization says where from, how long ago, and what changed', async (t) => {
    const { page, problems } = await signIn(t, browser, mirror.origin, reviewer)
    await page.waitForSelector('#mirror:not([hidden])')
    t.match(await page.textContent('#mirror-origin'), new RegExp(`^Mirrored from ${host.replace(/\./g, '\\.')}, just now\\. Read-only here`), 'its origin and age')
    await page.waitForSelector('#mirror-changes .events li')
    const changes = await page.$$eval('#mirror-changes .events li', (items) => items.map((i) => i.textContent))
    t.equal(changes.length, 1, 'the last run\'s one change')
    t.match(changes[0], new RegExp(`^update team permissions: team ${team.name} on workspace ${workspace.name} \\(access=${level} runs=`), 'in words')
    t.match(await page.textContent('#mirror-changes h3'), /What changed at the last mirror run that found a change \(just now\)/)
    // the cell's why: its history as the mirror saw it
    await page.click(`#matrix [aria-label="${team.name} on ${workspace.name}: ${level}"]`)
    await page.waitForSelector('#why-events .events li')
    const events = await page.$$eval('#why-events .events li', (items) => items.map((i) => i.textContent ?? ''))
    t.match(events[0], new RegExp(`update_team_permissions in HCP Terraform, seen by the mirror of ${host.replace(/\./g, '\\.')} — access=${level}`), 'the newest event first, as the mirror saw it')
    t.same(problems, [], 'no script error, no failed request')
  })

  await t.test('an organization that is not mirrored says none of it', async (t) => {
    const { page, problems } = await signIn(t, browser, source.origin, tokens.owner)
    t.ok(await page.isHidden('#mirror'), 'no mirror section')
    t.same(problems, [], 'no script error, no failed request')
  })
})
