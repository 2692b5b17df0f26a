import t, { type Test } from 'tap'
import { readFile } from 'node:fs/promises'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import type { Kysely } from 'kysely'
import teamAccess from '../../src/plugin.js'
import type { Database } from '../../src/db/database.js'
import { DirectoryError, type Directory } from '../../src/directory/host-directory.js'
import { AccessSetError } from '../../src/access/access-sets.js'
import { applySeed, applySeedDocument } from '../../src/directory/seed.js'
import { projectFile } from '../../src/project-file.js'
import { bearer, ENGINE, freshDatabase } from '../helper.js'
import { DRIFTER, makeOrganization, memberToken, ownersToken, removeOrganization, stateOf, writes, type WriteRequest } from './read-only-writes.js'

/**
 * A mirrored organization is read-only here (DESIGN §13.3). Every write route of the API — as the
 * plugin registers them (Fastify's onRoute), so that a route added later without a case here fails
 * this test — answers the owners team of a mirrored organization 422 `managed by the mirror (change
 * it in HCP Terraform)` and changes nothing (not a row, not an audit event); a caller who may not
 * act gets the 404 of a missing id; the very same requests to an organization that is not mirrored
 * change it. Tokens are this service's own: made and revoked as ever. The host's directory, its
 * access sets and a seed are refused too.
 */
const MANAGED_BY_MIRROR = 'managed by the mirror (change it in HCP Terraform)'
const REFUSAL = [{ status: '422', title: 'invalid attribute', detail: MANAGED_BY_MIRROR, source: { pointer: '/data' } }]
const OUTSIDER = 'outsider-token'
const WRITE_METHODS = new Set(['POST', 'PATCH', 'PUT', 'DELETE'])

/**
 * Write routes with no case here, each for its reason. Tokens are this service's own (DESIGN
 * §9.5, §13.3: HCP Terraform's are never copied, and a leaked one must be revocable at once): a
 * mirrored organization's team and organization tokens are made and revoked as on any — shown
 * below. A user's own tokens touch no organization row at all.
 */
const ALLOWED = new Map([
  ['POST /api/v2/teams/:id/authentication-token', 'a team token: this service\'s own'],
  ['DELETE /api/v2/teams/:id/authentication-token', 'a team token: this service\'s own'],
  ['POST /api/v2/teams/:id/authentication-tokens', 'a team token: this service\'s own'],
  ['POST /api/v2/organizations/:organization/authentication-token', 'the organization token: this service\'s own'],
  ['DELETE /api/v2/organizations/:organization/authentication-token', 'the organization token: this service\'s own'],
  ['POST /api/v2/users/:id/authentication-tokens', 'a user\'s own token: no organization row'],
  ['DELETE /api/v2/authentication-tokens/:id', 'any token by id: this service\'s own']
])

type Method = 'POST' | 'PATCH' | 'PUT' | 'DELETE'
const send = async (app: FastifyInstance, token: string, route: string, request: WriteRequest): Promise<LightMyRequestResponse> => await app.inject({
  method: route.split(' ')[0] as Method,
  url: request.url,
  headers: { ...bearer(token), ...(request.body === undefined ? {} : { 'content-type': 'application/vnd.api+json' }) },
  ...(request.body === undefined ? {} : { payload: request.body as object })
})
const answer = (res: LightMyRequestResponse) => ({ status: res.statusCode, type: res.headers['content-type'], body: res.body })

t.test(`a mirrored organization is read-only here (${ENGINE})`, async (t) => {
  const { db } = await freshDatabase(t)
  // the API as a host embeds it: every route the plugin registers is seen as it is registered
  const app = Fastify({ logger: false })
  t.teardown(() => app.close())
  const routes: string[] = []
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (WRITE_METHODS.has(method)) routes.push(`${method} ${route.url}`)
  })
  await app.register(teamAccess, { prefix: '/api/v2', database: db, migrate: false, ui: true, openapi: true })
  await app.ready()
  await applySeedDocument(db, {
    users: [{ username: 'outsider', tokens: [OUTSIDER] }, DRIFTER],
    organizations: [{ name: 'elsewhere', teams: [{ name: 'owners', owners: true, members: ['outsider'] }] }]
  })
  await makeOrganization(db, 'm', 'mirrored', true)
  const cases = writes('m', 'mirrored')
  const missing = writes('x', 'nowhere')

  t.test('every write route has its cases, or is allowed for its reason', async (t) => {
    t.same(routes.filter((route) => !route.startsWith('/api/v2/', route.indexOf(' ') + 1)), [], 'every write route is under the API prefix')
    t.same(routes.filter((route) => !(route in cases) && !ALLOWED.has(route)), [], 'no write route without a case')
    t.same(Object.keys(cases).filter((route) => !routes.includes(route)), [], 'no case for a route that is gone')
    t.same([...ALLOWED.keys()].filter((route) => !routes.includes(route)), [], 'no allowance for a route that is gone')
    // the standalone service mounts this very plugin: no write route it documents is one the plugin lacks
    const documented = JSON.parse(await readFile(projectFile('schemas/openapi.json'), 'utf8')) as { paths: Record<string, Record<string, unknown>> }
    const served = Object.entries(documented.paths).flatMap(([path, item]) => Object.keys(item).map((m) => m.toUpperCase()).filter((m) => WRITE_METHODS.has(m))
      .map((m) => `${m} ${path.replace(/\{(\w+)\}/g, ':$1')}`))
    t.same(served.filter((route) => !routes.includes(route)), [], 'the standalone service has no other write route')
    t.comment(`${routes.length} write routes: ${routes.length - ALLOWED.size} walked with ${Object.values(cases).flat().length} requests, ${ALLOWED.size} allowed`)
  })

  t.test('each write answers the mirror\'s 422 and changes nothing; who may not act gets the 404 of a missing id', async (t) => {
    const before = await stateOf(db)
    for (const [route, requests] of Object.entries(cases)) {
      for (const [i, request] of requests.entries()) {
        const label = `${route} (${request.what})`
        const res = await send(app, ownersToken('m'), route, request)
        t.same({ status: res.statusCode, errors: res.json().errors }, { status: 422, errors: REFUSAL }, `${label}: 422, the mirror's`)
        t.same(await stateOf(db), before, `${label}: nothing changed, not an audit event`)
        const notThere = answer(await send(app, ownersToken('m'), route, missing[route]![i]!))
        t.equal(notThere.status, 404, `${label}, of a missing row: 404`)
        t.same(answer(await send(app, OUTSIDER, route, request)), notThere, `${label}: another organization's owner gets the 404 of a missing row`)
        t.same(answer(await send(app, memberToken('m'), route, request)), notThere, `${label}: a plain member of it gets the 404 of a missing row`)
        t.same(await stateOf(db), before, `${label}: still nothing changed`)
      }
    }
  })

  t.test('the same requests change an organization that is not mirrored', async (t) => {
    for (const [route, requests] of Object.entries(cases)) {
      for (const [i] of requests.entries()) {
        await removeOrganization(db, 'p')
        await makeOrganization(db, 'p', 'plain', false)
        const request = writes('p', 'plain')[route]![i]!
        const before = await stateOf(db)
        const res = await send(app, ownersToken('p'), route, request)
        t.ok(res.statusCode >= 200 && res.statusCode < 300, `${route} (${request.what}): ${res.statusCode}${res.statusCode < 300 ? '' : ` ${res.body}`}`)
        t.not((await stateOf(db)).rows, before.rows, `${route} (${request.what}): changed the organization`)
      }
    }
    await removeOrganization(db, 'p')
  })

  t.test('tokens of a mirrored organization are made and revoked as on any', async (t) => await tokens(t, app, db))
  t.test('the host\'s directory, its access sets and a seed are refused', async (t) => await host(t, app, db))
})

/** A token works until it is revoked; the mirrored organization's rows stay as they were meanwhile. */
async function tokens (t: Test, app: FastifyInstance, db: Kysely<Database>): Promise<void> {
  const owners = ownersToken('m')
  const directoryRows = async () => (await stateOf(db, ['tokens', 'revoked_tokens'])).rows
  const rows = await directoryRows()
  const post = async (token: string, url: string, body?: object) => await send(app, token, 'POST x', { what: '', url, ...(body === undefined ? {} : { body }) })
  const del = async (token: string, url: string) => await send(app, token, 'DELETE x', { what: '', url })
  const reads = async (secret: string, url: string) => (await app.inject({ url, headers: bearer(secret) })).statusCode

  const team = await post(owners, '/api/v2/teams/team-mdevs/authentication-token')
  t.equal(team.statusCode, 201, 'the devs team\'s token is made')
  const teamSecret = team.json().data.attributes.token as string
  t.equal(await reads(teamSecret, '/api/v2/teams/team-mdevs'), 200, 'and acts as the team')
  t.equal((await del(owners, '/api/v2/teams/team-mdevs/authentication-token')).statusCode, 204, 'and is revoked')
  t.equal(await reads(teamSecret, '/api/v2/teams/team-mdevs'), 401, 'from the next request')

  const described = await post(owners, '/api/v2/teams/team-mops/authentication-tokens', { data: { type: 'authentication-tokens', attributes: { description: 'ci' } } })
  t.equal(described.statusCode, 201, 'one more team token, described, is made')
  t.equal((await del(owners, `/api/v2/authentication-tokens/${described.json().data.id as string}`)).statusCode, 204, 'and revoked by id')

  const organization = await post(owners, '/api/v2/organizations/mirrored/authentication-token')
  t.equal(organization.statusCode, 201, 'the organization token is made')
  const organizationSecret = organization.json().data.attributes.token as string
  t.equal(await reads(organizationSecret, '/api/v2/organizations/mirrored/teams'), 200, 'and acts as the organization')
  t.equal((await del(owners, '/api/v2/organizations/mirrored/authentication-token')).statusCode, 204, 'and is revoked')
  t.equal(await reads(organizationSecret, '/api/v2/organizations/mirrored/teams'), 401, 'from the next request')

  const own = await post(memberToken('m'), '/api/v2/users/user-mdev/authentication-tokens', { data: { type: 'authentication-tokens', attributes: { description: 'laptop' } } })
  t.equal(own.statusCode, 201, 'a mirrored user makes a token of their own')
  t.equal((await del(memberToken('m'), `/api/v2/authentication-tokens/${own.json().data.id as string}`)).statusCode, 204, 'and revokes it')

  const hosted = await app.teamAccess.directory.createToken({ teamId: 'team-mowners' })
  t.equal(await reads(hosted.secret, '/api/v2/teams/team-mowners'), 200, 'the host makes a token of the mirrored owners team')
  await app.teamAccess.directory.removeToken(hosted.id)
  t.equal(await reads(hosted.secret, '/api/v2/teams/team-mowners'), 401, 'and removes it')
  t.equal(await directoryRows(), rows, 'no other row of the organization changed')
}

/** The host's directory calls and access sets, and seeds, on a mirrored organization and on one that is not. */
async function host (t: Test, app: FastifyInstance, db: Kysely<Database>): Promise<void> {
  const { directory } = app.teamAccess
  const calls: Record<string, (d: Directory, p: string) => Promise<unknown>> = {
    'create a team': async (d, p) => await d.createTeam({ organizationId: `org-${p}`, name: 'hosts' }),
    'rename a team': async (d, p) => await d.changeTeam(`team-${p}devs`, { name: 'developers' }),
    'remove a team': async (d, p) => await d.removeTeam(`team-${p}ops`),
    'add a member': async (d, p) => await d.addMember({ teamId: `team-${p}ops`, userId: `user-${p}owner` }),
    'add a user of no organization': async (d, p) => await d.addMember({ teamId: `team-${p}ops`, userId: 'user-drifter' }),
    'remove a member': async (d, p) => await d.removeMember({ teamId: `team-${p}devs`, userId: `user-${p}dev` }),
    'create a workspace': async (d, p) => await d.createWorkspace({ organizationId: `org-${p}`, name: 'hosted' }),
    'rename a workspace': async (d, p) => await d.changeWorkspace(`ws-${p}one`, { name: 'renamed' }),
    'move a workspace': async (d, p) => await d.changeWorkspace(`ws-${p}one`, { projectId: `prj-${p}two` }),
    'remove a workspace': async (d, p) => await d.removeWorkspace(`ws-${p}one`),
    'create a project': async (d, p) => await d.createProject({ organizationId: `org-${p}`, name: 'hosted' }),
    'change a project': async (d, p) => await d.changeProject(`prj-${p}two`, { description: 'changed' }),
    'remove a project': async (d, p) => await d.removeProject(`prj-${p}empty`),
    'invite someone': async (d, p) => await d.createOrganizationMembership({ organizationId: `org-${p}`, email: `${p}-invited@example.com` }),
    'end a membership': async (d, p) => await d.removeOrganizationMembership(`ou-${p}dev`),
    'rename a user': async (d, p) => await d.changeUser(`user-${p}dev`, { username: `${p}developer` }),
    'remove a user': async (d, p) => await d.removeUser(`user-${p}ops`),
    'rename the organization': async (d, p) => await d.changeOrganization(`org-${p}`, { name: `${p}-renamed` })
  }
  const sets: Record<string, (p: string) => Promise<unknown>> = {
    'a workspace\'s access set': async (p) => await app.teamAccess.setWorkspaceAccess({ caller: { kind: 'team', teamId: `team-${p}owners` }, workspaceId: `ws-${p}one`, entries: [{ teamId: `team-${p}devs`, access: 'plan' }] }),
    'a project\'s access set': async (p) => await app.teamAccess.setProjectAccess({ caller: { kind: 'team', teamId: `team-${p}owners` }, projectId: `prj-${p}two`, entries: [{ teamId: `team-${p}ops`, access: 'read' }] })
  }
  const before = await stateOf(db)
  for (const [what, call] of Object.entries(calls)) {
    await t.rejects(call(directory, 'm'), new DirectoryError('invalid', MANAGED_BY_MIRROR), `the host may not ${what}`)
    t.same(await stateOf(db), before, `${what}: nothing changed`)
  }
  for (const [what, set] of Object.entries(sets)) {
    await t.rejects(set('m'), new AccessSetError('invalid', MANAGED_BY_MIRROR), `the host may not change ${what}`)
    t.same(await stateOf(db), before, `${what}: nothing changed`)
  }
  const seeds = {
    'a team added': { organizations: [{ name: 'mirrored', teams: [{ name: 'seeded' }] }] },
    'a team of the mirror\'s declared': { users: [{ username: 'mdev' }], organizations: [{ name: 'mirrored', teams: [{ name: 'devs', members: ['mdev'] }] }] },
    'a workspace added': { organizations: [{ name: 'mirrored', workspaces: [{ name: 'seeded' }] }] }
  }
  for (const [what, document] of Object.entries(seeds)) {
    await t.rejects(applySeed(db, document), { message: MANAGED_BY_MIRROR }, `a seed naming the mirrored organization, ${what}, fails`)
    t.same(await stateOf(db), before, `${what}: the seed changed nothing`)
  }

  // the same calls on an organization that is not mirrored: each changes it
  const plain = async (what: string, call: () => Promise<unknown>) => {
    await removeOrganization(db, 'p')
    await makeOrganization(db, 'p', 'plain', false)
    const rows = (await stateOf(db)).rows
    await t.resolves(call(), `${what}, on an organization that is not mirrored`)
    t.not((await stateOf(db)).rows, rows, `${what}: changed it`)
  }
  for (const [what, call] of Object.entries(calls)) await plain(`the host may ${what}`, async () => await call(directory, 'p'))
  for (const [what, set] of Object.entries(sets)) await plain(`the host may change ${what}`, async () => await set('p'))
  await plain('a seed may add a team', async () => await applySeed(db, { organizations: [{ name: 'plain', teams: [{ name: 'seeded' }] }] }))
}
