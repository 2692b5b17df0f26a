import t from 'tap'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { reviewWorld } from '../../bench/review-world.js'
import { table } from '../../src/db/tables.js'
import { applySeedDocument } from '../../src/directory/seed.js'
import { regenerateOrganizationToken } from '../../src/mirror/organization-token.js'
import { runMirror } from '../../src/mirror/run.js'
import { ORGANIZATION_ACCESS_FLAGS } from '../../schemas/organization-access.js'
import { bearer, build, ENGINE } from '../helper.js'

/**
 * The mirror against this service itself standing in for HCP Terraform (DESIGN §13.3): a random
 * world of every level, custom permissions, organization-access flag, project grant and an
 * invitation, served over real HTTP; mirrored into another database. The mirror's access review
 * equals the source's, cell for cell (ids kept: they are HCP Terraform's); a dry run writes
 * nothing; the source changed through its API, a second run equals it again with the events the
 * source wrote for those changes, one for one (auth.type Mirror); a third run with nothing changed
 * writes nothing; --seed-out's document gives the same review on a fresh database; the token the
 * mirror read with is nowhere in the mirror's database or the seed.
 */
const ORGANIZATION = 'review'
const HOST = '127.0.0.1'

type Api = (method: string, url: string, body?: unknown) => Promise<any>
const apiOf = (app: FastifyInstance, token: string): Api => async (method, url, body) => {
  const res = await app.inject({ method: method as 'GET', url: `/api/v2${url}`, headers: { ...bearer(token), 'content-type': 'application/vnd.api+json' }, ...(body === undefined ? {} : { payload: body as object }) })
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
  return res.body === '' ? undefined : res.json()
}

/** The review as a reviewer reads it: every entry, its links left out (they name the service's own address). */
async function review (app: FastifyInstance, token: string): Promise<unknown[]> {
  const res = await app.inject({ url: `/api/v2/organizations/${ORGANIZATION}/access-review`, headers: bearer(token) })
  if (res.statusCode !== 200) throw new Error(`access review: ${res.statusCode} ${res.body}`)
  return (res.json().data as any[]).map(({ links: _links, ...entry }) => entry)
}

/** The audit events after `after` (an event count), as `type action id` lines, sorted: what changed, whoever wrote it. */
async function eventsAfter (app: FastifyInstance, organizationId: string, after: number): Promise<{ lines: string[], kinds: string[] }> {
  const rows = await app.db.selectFrom('audit_events').select(['resource_type', 'action', 'resource_id', 'workspace_id', 'team_id', 'accessor_kind', 'accessor_description'])
    .where('organization_id', '=', organizationId).where('resource_type', '<>', 'authentication-token').orderBy('occurred_at').orderBy('id').offset(after).limit(100_000).execute()
  return {
    lines: rows.map((e) => `${e.resource_type} ${e.action} ${e.resource_id ?? `${e.workspace_id!} ${e.team_id!}`}`).sort(),
    kinds: [...new Set(rows.map((e) => `${e.accessor_kind} ${e.accessor_description}`))]
  }
}

const countEvents = async (app: FastifyInstance, organizationId: string): Promise<number> => Number((await app.db.selectFrom('audit_events')
  .select((eb) => eb.fn.countAll<string>().as('n')).where('organization_id', '=', organizationId).where('resource_type', '<>', 'authentication-token').executeTakeFirstOrThrow()).n)

/** Every row of every table of the mirror's database, as text: what a dry run must leave as it was, and where a secret must not be. */
async function everything (app: FastifyInstance): Promise<string> {
  const tables = ['organizations', 'users', 'teams', 'team_memberships', 'workspaces', 'tokens', 'team_workspaces', 'projects', 'team_projects',
    'organization_memberships', 'organization_membership_teams', 'audit_events', 'mirrors'] as const
  const parts: string[] = []
  for (const name of tables) {
    const rows = await sql<{ row: unknown }>`select to_jsonb(r) as row from ${table[name]} r`.execute(app.db)
    parts.push(`${name}: ${rows.rows.map((r) => JSON.stringify(r.row)).sort().join('\n')}`)
  }
  return parts.join('\n')
}

t.test(`a mirror of this service, standing in for HCP Terraform, reviews the same (${ENGINE})`, async (t) => {
  const chosen = Number(process.env.SEED ?? Math.floor(Math.random() * 2 ** 31))
  t.comment(`world seed ${chosen} (SEED=${chosen} replays it)`)
  const world = reviewWorld({ teams: 24, workspaces: 40, projects: 4, users: 30, rowsPerTeam: 5, seed: chosen })
  const org = (world.document as any).organizations[0]
  // every organization-access flag on some team, emails for the users, custom project grants
  ORGANIZATION_ACCESS_FLAGS.forEach((flag, i) => {
    const team = org.teams[1 + (i % (org.teams.length - 1))]
    team['organization-access'] = { ...team['organization-access'], [flag]: true }
  })
  for (const team of org.teams) {
    // the flags' prerequisites (HCP Terraform's, and the seed's): manage-projects wants manage-workspaces, read-projects read-workspaces
    const flags = team['organization-access']
    if (flags?.['manage-projects'] === true) flags['manage-workspaces'] = true
    if (flags?.['read-projects'] === true) flags['read-workspaces'] = true
  }
  for (const user of (world.document as any).users) user.email = `${user.username as string}@example.com`
  org['project-access'].push({ team: org.teams[3].name, project: 'project-001', access: 'custom', 'project-access': { settings: 'update', teams: 'read' }, 'workspace-access': { runs: 'plan', variables: 'read', create: true, locking: true } })

  const source = await build(t, { seed: world.document })
  await source.listen({ port: 0, host: HOST })
  const from = `http://${HOST}:${(source.server.address() as { port: number }).port}`
  const owner = apiOf(source, world.tokens.owner)
  // an invitation, as HCP Terraform has them: an email no user has, into a team
  await owner('POST', `/organizations/${ORGANIZATION}/organization-memberships`, { data: { type: 'organization-memberships', attributes: { email: 'newcomer@example.com' }, relationships: { teams: { data: [{ type: 'teams', id: org.teams[2].id }] } } } })

  const mirror = await build(t)
  const run = async (options: { dryRun?: boolean } = {}) => await runMirror(mirror.db, { from, organization: ORGANIZATION, token: world.tokens.owner, rate: 1000, ...options })

  t.test('a dry run into an empty database says what it would create, and writes nothing', async (t) => {
    const before = await everything(mirror)
    const result = await run({ dryRun: true })
    t.ok(result.summary!.dryRun)
    t.equal(result.summary!.created.teams.length, org.teams.length, 'every team to create')
    t.equal(await everything(mirror), before, 'nothing written')
  })

  let reviewer = ''
  let organizationId = ''
  t.test('the first run: the same review, cell for cell, the same ids', async (t) => {
    const result = await run()
    t.ok(result.requests > org.workspaces.length, `${result.requests} requests`)
    reviewer = (await regenerateOrganizationToken(mirror.db, ORGANIZATION))!
    t.ok(reviewer, 'a token of the mirrored organization, made here')
    organizationId = (await mirror.db.selectFrom('organizations').select('id').where('name', '=', ORGANIZATION).executeTakeFirstOrThrow()).id
    t.same(await review(mirror, reviewer), await review(source, world.tokens.owner), 'the access review, cell for cell')
    const orgDocument = await apiOf(mirror, reviewer)('GET', `/organizations/${ORGANIZATION}`)
    t.match(orgDocument.data.attributes.mirror, { host: `${HOST}:${from.split(':').pop()!}` }, 'the organization says where it is mirrored from')
  })

  t.test('changes at the source: a second run equals it again, one event per change, each Mirror', async (t) => {
    const sourceOrgId = (await source.db.selectFrom('organizations').select('id').where('name', '=', ORGANIZATION).executeTakeFirstOrThrow()).id
    const [sourceBefore, mirrorBefore] = [await countEvents(source, sourceOrgId), await countEvents(mirror, organizationId)]
    const team = (await owner('POST', `/organizations/${ORGANIZATION}/teams`, { data: { type: 'teams', attributes: { name: 'late-team', visibility: 'secret' } } })).data.id
    await owner('POST', `/teams/${team as string}/relationships/users`, { data: [{ type: 'users', id: 'user001' }] })
    const project = (await owner('POST', `/organizations/${ORGANIZATION}/projects`, { data: { type: 'projects', attributes: { name: 'late-project' } } })).data.id
    const workspace = (await owner('POST', `/organizations/${ORGANIZATION}/workspaces`, { data: { type: 'workspaces', attributes: { name: 'late-workspace' }, relationships: { project: { data: { type: 'projects', id: project } } } } })).data.id
    await owner('POST', '/team-workspaces', { data: { type: 'team-workspaces', attributes: { access: 'write' }, relationships: { team: { data: { type: 'teams', id: team } }, workspace: { data: { type: 'workspaces', id: workspace } } } } })
    await owner('POST', '/team-projects', { data: { type: 'team-projects', attributes: { access: 'maintain' }, relationships: { team: { data: { type: 'teams', id: team } }, project: { data: { type: 'projects', id: project } } } } })
    const rows = (await owner('GET', `/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=${org.workspaces[0].id as string}`)).data
    if (rows.length > 0) await owner('PATCH', `/team-workspaces/${rows[0].id as string}`, { data: { type: 'team-workspaces', attributes: { access: rows[0].attributes.access === 'read' ? 'admin' : 'read' } } })
    if (rows.length > 1) await owner('DELETE', `/team-workspaces/${rows[1].id as string}`)
    await owner('PATCH', `/teams/${team as string}`, { data: { type: 'teams', attributes: { name: 'later-team' } } })

    const result = await run()
    t.notOk(result.summary!.dryRun)
    t.same(await review(mirror, reviewer), await review(source, world.tokens.owner), 'the access review, cell for cell')
    const [atSource, atMirror] = [await eventsAfter(source, sourceOrgId, sourceBefore), await eventsAfter(mirror, organizationId, mirrorBefore)]
    t.ok(atSource.lines.length >= 7, `${atSource.lines.length} changes at the source`)
    // the source's events are its API's, one per change; the mirror saw each once (a team made and renamed is one team, as read)
    const expected = atSource.lines.filter((line) => !line.startsWith('team update'))
    t.same(atMirror.lines, expected, 'the mirror wrote an event for each change the source made')
    t.same(atMirror.kinds, [`mirror ${HOST}:${from.split(':').pop()!}`], 'each event Mirror, described by the host read from')
  })

  t.test('a run that fails half-way changes nothing', async (t) => {
    await owner('POST', `/organizations/${ORGANIZATION}/workspaces`, { data: { type: 'workspaces', attributes: { name: 'half-way' } } })
    const before = await everything(mirror)
    let calls = 0
    // the connection to "HCP Terraform" drops for good after 12 requests: mid-read
    const failing: typeof fetch = async (input, init) => {
      if (++calls > 12) throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) })
      return await fetch(input, init)
    }
    const failed = await runMirror(mirror.db, { from, organization: ORGANIZATION, token: world.tokens.owner, rate: 1000, fetch: failing }).then(() => undefined, (err: Error) => err)
    t.match(failed?.message, /the connection failed \(ECONNRESET\), and again on each of 5 retries/)
    t.equal(await everything(mirror), before, 'nothing written')
    await run()
    t.same(await review(mirror, reviewer), await review(source, world.tokens.owner), 'the next run catches up')
  })

  t.test('a run with nothing changed writes nothing', async (t) => {
    const before = await countEvents(mirror, organizationId)
    const snapshotBefore = (await everything(mirror)).replace(/mirrors: .*/s, '')
    const result = await run()
    t.same([result.summary!.created, result.summary!.changed, result.summary!.removed].flatMap((part) => Object.values(part).flat()), [], 'nothing created, changed or removed')
    t.equal(await countEvents(mirror, organizationId), before, 'no event')
    t.equal((await everything(mirror)).replace(/mirrors: .*/s, ''), snapshotBefore, 'no row changed (the mirrors row notes the run)')
  })

  t.test('--seed-out: the same review from the seed document, on a fresh database; the token nowhere', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'team-access-seed-out-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const file = join(dir, 'seed.json')
    const result = await runMirror(undefined, { from, organization: ORGANIZATION, token: world.tokens.owner, rate: 1000, seedOut: file })
    t.equal(result.seedFile, file)
    const text = readFileSync(file, 'utf8')
    t.notOk(text.includes(world.tokens.owner), 'the token is not in the seed')
    const fresh = await build(t)
    await applySeedDocument(fresh.db, JSON.parse(text))
    const token = (await regenerateOrganizationToken(fresh.db, ORGANIZATION))!
    // a seed cannot give the default project an id (a fresh organization makes its own) nor keep a row id it does not take
    const defaultOf = async (app: FastifyInstance) => (await app.db.selectFrom('projects').innerJoin('organizations as o', 'o.id', 'projects.organization_id')
      .select('projects.id').where('o.name', '=', ORGANIZATION).where('projects.is_default', '=', true).executeTakeFirstOrThrow()).id
    const strip = (entries: unknown[], defaultProject: string) => JSON.parse(JSON.stringify(entries).replaceAll(defaultProject, 'prj-default'))
    t.same(strip(await review(fresh, token), await defaultOf(fresh)), strip(await review(source, world.tokens.owner), await defaultOf(source)), 'the access review, cell for cell')
    t.notOk((await everything(mirror)).includes(world.tokens.owner), 'the token is not in the mirror\'s database')
  })
})
