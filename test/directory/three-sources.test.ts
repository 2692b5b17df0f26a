import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { tokenDigest } from '../../src/auth/token-digest.js'
import { directory } from '../../src/directory/host-directory.js'
import { applySeedDocument } from '../../src/directory/seed.js'
import { bearer, build, ENGINE } from '../helper.js'

/**
 * One writer for the directory (src/directory/): the same change asked by each of the three
 * sources — the seed (a document that no longer declares it), the host (its directory) and the API
 * (an owner's request) — leaves the same rows, the same audit events and the same revoked
 * digests. What differs is only who asked: a row's `managed_by`, an event's accessor and request
 * id, the ids the database generated.
 */
type Source = 'seed' | 'host' | 'api'
const SOURCES: Source[] = ['seed', 'host', 'api']
const OWNER_TOKEN = 'three-owner-token'
/** Three teams, one for each change: red is removed, cat leaves blue, green's second token is revoked. */
const TEAMS = ['red', 'blue', 'green'] as const
const tokensOf = (team: string) => [`three-${team}-token-one`, `three-${team}-token-two`]

/**
 * The seed's document after `step` changes (0: none; 1: red removed; 2: cat out of blue; 3: green's
 * second token dropped); `teams`: whether it declares the three teams (the seed's world) or leaves
 * them to the host (and names them in its team-access entries only).
 */
const documentAt = (step: number, teams: boolean) => {
  const present = TEAMS.filter((team) => team !== 'red' || step < 1)
  return {
    users: [
      { id: 'user-3-ann', username: 'ann', tokens: [OWNER_TOKEN] },
      { id: 'user-3-ben', username: 'ben' },
      { id: 'user-3-cat', username: 'cat' }
    ],
    organizations: [{
      id: 'org-3',
      name: 'three',
      teams: [{ id: 'team-3-owners', name: 'owners', owners: true, members: ['ann'] }, ...(teams
        ? present.map((team) => ({
          id: `team-3-${team}`,
          name: team,
          visibility: 'organization',
          members: team === 'blue' && step >= 2 ? ['ben'] : ['ben', 'cat'],
          tokens: team === 'green' && step >= 3 ? tokensOf(team).slice(0, 1) : tokensOf(team)
        }))
        : [])],
      workspaces: [{ id: 'ws-3-prod', name: 'prod' }, { id: 'ws-3-dev', name: 'dev' }],
      'team-access': present.map((team) => ({ team, workspace: 'prod', access: 'write' }))
    }]
  }
}

/** The three teams, each with two members, two tokens and a row on prod: the seed's, or (host, API) the host's. */
async function world (t: Test, source: Source): Promise<FastifyInstance> {
  const app = await build(t)
  if (source !== 'seed') {
    const { organizations: [org], ...rest } = documentAt(0, false)
    await applySeedDocument(app.db, { ...rest, organizations: [{ ...org, 'team-access': [] }] })
    const dir = directory(app.db)
    for (const team of TEAMS) {
      await dir.createTeam({ organizationId: 'org-3', id: `team-3-${team}`, name: team, visibility: 'organization' })
      for (const userId of ['user-3-ben', 'user-3-cat']) await dir.addMember({ teamId: `team-3-${team}`, userId })
      for (const secret of tokensOf(team)) await dir.createToken({ teamId: `team-3-${team}` }, { secret })
    }
  }
  await applySeedDocument(app.db, documentAt(0, source === 'seed'))
  return app
}

/**
 * The directory as data, without what says who asked: teams, memberships, tokens (by digest),
 * team access, revoked digests and the seed's remembered grants, by names.
 */
async function state (app: FastifyInstance): Promise<Record<string, unknown[]>> {
  const db = app.db
  return {
    teams: (await db.selectFrom('teams').select(['id', 'name', 'visibility', 'is_owners']).orderBy('id').execute()),
    memberships: (await db.selectFrom('team_memberships').select(['team_id', 'user_id']).orderBy('team_id').orderBy('user_id').execute()),
    tokens: (await db.selectFrom('tokens').select(['kind', 'team_id', 'user_id', 'organization_id', 'digest', 'expires_at']).orderBy('digest').execute()),
    teamAccess: (await db.selectFrom('team_workspaces').select(['team_id', 'workspace_id', 'access']).orderBy('team_id').orderBy('workspace_id').execute()),
    revoked: (await db.selectFrom('revoked_tokens').select('digest').orderBy('digest').execute()),
    seedGrants: (await db.selectFrom('seed_grants').select(['team_id', 'workspace_id']).orderBy('team_id').orderBy('workspace_id').execute()),
    counts: (await db.selectFrom('workspace_access_counts').selectAll().orderBy('workspace_id').execute())
  }
}

/** The events a change recorded (those not there before it), without who asked: action, what, and names. */
async function eventsSince (app: FastifyInstance, before: Set<string>): Promise<string[]> {
  const events = await app.db.selectFrom('audit_events')
    .select(['id', 'organization_id', 'action', 'resource_type', 'resource_id', 'meta', 'workspace_id', 'team_id', 'team_name', 'permissions'])
    .execute()
  return events.filter((e) => !before.has(e.id))
    .map(({ id: _, ...e }) => JSON.stringify(e, (key, value: unknown) => (key === 'resource_id' && typeof value === 'string' && value.startsWith('at-') ? 'a token' : value)))
    .sort()
}

const eventIds = async (app: FastifyInstance): Promise<Set<string>> =>
  new Set((await app.db.selectFrom('audit_events').select('id').execute()).map((e) => e.id))

/** Each source's way of asking for the change, in order, on its own world. */
type Change = Record<Source, (app: FastifyInstance) => Promise<void>>

async function api (app: FastifyInstance, url: string, body?: unknown): Promise<void> {
  const response = await app.inject({
    method: 'DELETE',
    url: `/api/v2${url}`,
    headers: { ...bearer(OWNER_TOKEN), ...(body === undefined ? {} : { 'content-type': 'application/vnd.api+json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) })
  })
  if (response.statusCode !== 204) throw new Error(`DELETE ${url}: ${response.statusCode} ${response.body}`)
}

/** The id of green's second token: the one the third change revokes. */
const revokedToken = async (app: FastifyInstance): Promise<string> =>
  (await app.db.selectFrom('tokens').select('id').where('digest', '=', tokenDigest(tokensOf('green')[1]!)).executeTakeFirstOrThrow()).id

const CHANGES: Array<[string, Change]> = [
  ['a team removed with its members, tokens and team access', {
    seed: async (app) => { await applySeedDocument(app.db, documentAt(1, true)) },
    host: async (app) => { await directory(app.db).removeTeam('team-3-red') },
    api: async (app) => { await api(app, '/teams/team-3-red') }
  }],
  ['a membership removed', {
    seed: async (app) => { await applySeedDocument(app.db, documentAt(2, true)) },
    host: async (app) => { await directory(app.db).removeMember({ teamId: 'team-3-blue', userId: 'user-3-cat' }) },
    api: async (app) => { await api(app, '/teams/team-3-blue/relationships/users', { data: [{ type: 'users', id: 'cat' }] }) }
  }],
  ['a token revoked', {
    seed: async (app) => { await applySeedDocument(app.db, documentAt(3, true)) },
    host: async (app) => { await directory(app.db).removeToken(await revokedToken(app)) },
    api: async (app) => { await api(app, `/authentication-tokens/${await revokedToken(app)}`) }
  }]
]

t.test(`the seed, the host and the API, asked for the same change, leave the same rows, events and revocations (${ENGINE})`, async (t) => {
  const worlds = Object.fromEntries(await Promise.all(SOURCES.map(async (source) => [source, await world(t, source)] as const))) as Record<Source, FastifyInstance>
  for (const [name, change] of CHANGES) {
    const after: Record<string, { state: Record<string, unknown[]>, events: string[] }> = {}
    for (const source of SOURCES) {
      const app = worlds[source]
      const [before, initial] = [await eventIds(app), await state(app)]
      await change[source](app)
      after[source] = { state: await state(app), events: await eventsSince(app, before) }
      t.notSame(after[source]!.state, initial, `${name}, asked by the ${source}: the directory changed`)
      t.ok(after[source]!.events.length > 0, `${name}, asked by the ${source}: its events recorded`)
    }
    t.same(after.host, after.seed, `${name}: the host as the seed`)
    t.same(after.api, after.seed, `${name}: the API as the seed`)
  }
})
