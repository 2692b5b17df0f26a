import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import type { DatabaseLocation } from '../../src/db/connect.js'
import { bearer, ENGINE, freshLocation, testConfig } from '../helper.js'

/**
 * DESIGN §6, "a seed never undoes the API": SEED_FILE is applied on every start, but each of its
 * team-access entries only once. Every restart here is a real one: the app closed and built
 * again with the same SEED_FILE on the same database.
 */
const OWNER = 'restart-owner-token'
const TEAMS = [{ id: 'team-r-red', name: 'red' }, { id: 'team-r-blue', name: 'blue' }, { id: 'team-r-green', name: 'green' }]
const seedWith = (grants: object[], { token = OWNER, teams = TEAMS } = {}) => ({
  organizations: [{
    id: 'org-restart',
    name: 'restart',
    tokens: [token],
    teams,
    workspaces: [{ id: 'ws-r-prod', name: 'prod' }, { id: 'ws-r-dev', name: 'dev' }],
    'team-access': grants
  }]
})
const removed = { id: 'tws-r-removed', team: 'red', workspace: 'prod', access: 'admin' }
const lowered = { id: 'tws-r-lowered', team: 'blue', workspace: 'prod', access: 'admin' }
const replaced = { id: 'tws-r-replaced', team: 'green', workspace: 'prod', access: 'write' }
const grants = [removed, lowered, replaced]

t.test(`a seed never undoes the API, across restarts (${ENGINE})`, async (t) => {
  const location: DatabaseLocation = ENGINE === 'postgres' ? await freshLocation(t) : { dataDir: await mkdtemp(join(tmpdir(), 'team-access-restart-')) }
  if ('dataDir' in location) t.teardown(() => rm(location.dataDir, { recursive: true, force: true }))
  const seedFile = join(await mkdtemp(join(tmpdir(), 'team-access-seed-')), 'seed.json')
  const writeSeed = (grantList: object[], options: Parameters<typeof seedWith>[1] = {}) => writeFile(seedFile, JSON.stringify(seedWith(grantList, options)))
  let app: FastifyInstance | undefined
  t.teardown(() => app?.close())
  const restart = async () => {
    await app?.close()
    app = await buildApp(testConfig(location, { seedFile }), { logger: false })
    return app
  }
  const rows = async () => (await app!.db.selectFrom('team_workspaces').select(['id', 'team_id', 'workspace_id', 'access', 'runs'])
    .where('organization_id', '=', 'org-restart').orderBy('team_id').orderBy('workspace_id').execute())
  const api = (method: 'POST' | 'PATCH' | 'DELETE', url: string, body?: object) => app!.inject({
    method, url: `/api/v2${url}`, headers: { ...bearer(OWNER), 'content-type': 'application/vnd.api+json' }, ...(body === undefined ? {} : { payload: JSON.stringify(body) })
  })

  await writeSeed(grants)
  await restart()
  t.equal((await rows()).length, 3, 'the first start applies every entry')

  t.equal((await api('DELETE', '/team-workspaces/tws-r-removed')).statusCode, 204, 'the API removes a seeded grant')
  t.equal((await api('PATCH', '/team-workspaces/tws-r-lowered', { data: { attributes: { access: 'read' } } })).statusCode, 200, 'the API lowers one')
  t.equal((await api('DELETE', '/team-workspaces/tws-r-replaced')).statusCode, 204, 'and replaces another (delete…)')
  const readd = await api('POST', '/team-workspaces', { data: { type: 'team-workspaces', attributes: { access: 'plan' }, relationships: { team: { data: { type: 'teams', id: 'team-r-green' } }, workspace: { data: { type: 'workspaces', id: 'ws-r-prod' } } } } })
  t.equal(readd.statusCode, 200, '…and re-add, as a Terraform replace does')
  const readdedId = readd.json().data.id
  const afterApi = await rows()

  await restart()
  t.same(await rows(), afterApi, 'a restart with the same SEED_FILE starts and changes none of them')
  await restart()
  t.same(await rows(), afterApi, 'nor does the one after')

  t.test('an edited entry is a new entry, applied once', async (t) => {
    await writeSeed([removed, { ...lowered, access: 'custom', runs: 'plan' }, replaced])
    await restart()
    const edited = (await rows()).find((r) => r.team_id === 'team-r-blue')
    t.match(edited, { id: 'tws-r-lowered', access: 'custom', runs: 'plan' }, 'the edit is applied to the (team, workspace) row')
    t.equal((await api('PATCH', '/team-workspaces/tws-r-lowered', { data: { attributes: { access: 'write' } } })).statusCode, 200)
    const changed = await rows()
    await restart()
    t.same(await rows(), changed, 'and once only: the API’s later change stays')
  })

  t.test('an entry whose pair exists under another id applies cleanly', async (t) => {
    await writeSeed([removed, lowered, { ...replaced, access: 'admin' }])
    await restart()
    const green = (await rows()).filter((r) => r.team_id === 'team-r-green')
    t.same(green.map((r) => [r.id, r.access]), [[readdedId, 'admin']], 'the row the API made, under its own id, now as the entry says')
    t.notOk(green.some((r) => r.id === 'tws-r-replaced'), 'no second row for the pair')
  })

  t.test('a new entry on a pair that never had a row is added, with its id', async (t) => {
    await writeSeed([...grants, { id: 'tws-r-new', team: 'red', workspace: 'dev', access: 'read' }])
    await restart()
    t.match((await rows()).find((r) => r.id === 'tws-r-new'), { team_id: 'team-r-red', workspace_id: 'ws-r-dev', access: 'read' })
  })

  t.test('DESIGN §9.1 across a restart: a token rotated in SEED_FILE and a team deleted from it are gone', async (t) => {
    t.equal((await api('DELETE', '/team-workspaces/tws-nope')).statusCode, 404, 'the owner token answers (and is remembered)')
    t.ok((await rows()).some((r) => r.team_id === 'team-r-green'), 'green has a row (the one the API re-added)')
    const rotated = 'restart-owner-token-2'
    await writeSeed([removed, lowered], { token: rotated, teams: TEAMS.filter((x) => x.name !== 'green') })
    await restart()
    t.same((await rows()).filter((r) => r.team_id === 'team-r-green'), [], 'the team’s rows went with it')
    t.same(await app!.db.selectFrom('teams').select('id').where('id', '=', 'team-r-green').execute(), [])
    const read = (token: string) => app!.inject({ url: '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-r-prod', headers: bearer(token) })
    t.equal((await read(OWNER)).statusCode, 401, 'the rotated-out token: 401')
    t.equal((await read(rotated)).statusCode, 200, 'the new one: 200')
  })
})
