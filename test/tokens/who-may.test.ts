import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { bearer, build, ENGINE, snapshot } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'

/**
 * DESIGN §9.5, who may, row by row — owners (a member's user token, the owners team's token, the
 * organization token where it may), manage-teams (only teams whose granting flags it holds
 * itself, never the owners team), manage-membership (no tokens), a plain member, another
 * organization's owner, a user acting on another user's tokens. Whoever may not gets the 404 of a
 * subject that does not exist, byte for byte (status, headers but date and request id, body), and
 * changes nothing.
 */
const seed = structuredClone(world) as typeof world & { organizations: Array<{ teams: Array<Record<string, unknown>> }> }
// globex gets an owners team: its user is another organization's owner
seed.organizations[1]!.teams[0]!.owners = true

const JSONAPI = { 'content-type': 'application/vnd.api+json' }
const comparable = (res: LightMyRequestResponse) => {
  const { date: _date, 'x-request-id': _id, ...headers } = res.headers
  return { status: res.statusCode, headers, body: res.body }
}

t.test(`who may manage which tokens (DESIGN §9.5) on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed })
  // manage-teams: the admins team (member wsadmin) holds manage-teams alone; the managers team
  // (member manager) manage-teams and manage-workspaces. manage-membership: the red team.
  await app.db.updateTable('teams').set({ manage_teams: true }).where('id', 'in', ['team-admins', 'team-managers']).execute()
  await app.db.updateTable('teams').set({ manage_membership: true }).where('id', '=', 'team-red').execute()
  const request = (method: 'GET' | 'POST' | 'DELETE', url: string, token: string) => app.inject({
    method, url: `/api/v2${url}`, headers: { ...bearer(token), ...(method === 'POST' ? JSONAPI : {}) }, ...(method === 'POST' ? { payload: '{}' } : {})
  })
  const secretOf = async (res: Promise<LightMyRequestResponse>) => {
    const answer = await res
    if (answer.statusCode !== 201) throw new Error(`expected 201, got ${answer.statusCode} ${answer.body}`)
    return answer.json().data as { id: string, attributes: { token: string } }
  }
  // a team token of the admins team (manage-teams alone), made by an owner
  const adminsTeamToken = (await secretOf(request('POST', '/teams/team-admins/authentication-token', TOKENS.owner))).attributes.token
  // one API token on each team and of the organization, and one of the reader, to read and revoke by id
  for (const team of ['team-owners', 'team-managers', 'team-readers', 'team-blue', 'team-green']) await secretOf(request('POST', `/teams/${team}/authentication-token`, TOKENS.owner))
  const organizationToken = await secretOf(request('POST', '/organizations/acme/authentication-token', TOKENS.owner))
  const readerToken = await secretOf(request('POST', '/users/user-reader/authentication-tokens', TOKENS.reader))
  const tokenIdOf = async (team: string) => (await app.db.selectFrom('tokens').select('id').where('team_id', '=', team).where('managed_by', '=', 'api').executeTakeFirstOrThrow()).id

  const callers = {
    'owner (user)': TOKENS.owner,
    'owners team token': TOKENS.ownersTeam,
    'organization token': TOKENS.organization,
    'manage-teams (user)': TOKENS.workspaceAdmin,
    'manage-teams (team token)': adminsTeamToken,
    'manage-teams + manage-workspaces (user)': TOKENS.manager,
    'manage-membership (user)': TOKENS.secretMember,
    'plain member (user)': TOKENS.writer,
    'plain member (team token)': TOKENS.nonOwnerTeam,
    "another organization's owner": TOKENS.otherOrganization,
    'the reader': TOKENS.reader
  } as const
  type Who = keyof typeof callers
  const owners: Who[] = ['owner (user)', 'owners team token', 'organization token']
  const allBut = (allowed: Who[]) => (Object.keys(callers) as Who[]).filter((who) => !allowed.includes(who))

  // each row: a request, its twin about a subject that does not exist, and who may
  const rows: Array<{ name: string, url: string, missing: string, allowed: Who[] }> = [
    { name: 'a plain team', url: '/teams/team-green/authentication-token', missing: '/teams/team-missing/authentication-token', allowed: [...owners, 'manage-teams (user)', 'manage-teams (team token)', 'manage-teams + manage-workspaces (user)'] },
    // blue reads dev: only who holds read on dev (manage-workspaces) may make its tokens (rule a counts rows)
    { name: 'a team with a row', url: '/teams/team-blue/authentication-token', missing: '/teams/team-missing/authentication-token', allowed: [...owners, 'manage-teams + manage-workspaces (user)'] },
    { name: 'a plain team, its list', url: '/teams/team-green/authentication-tokens', missing: '/teams/team-missing/authentication-tokens', allowed: [...owners, 'manage-teams (user)', 'manage-teams (team token)', 'manage-teams + manage-workspaces (user)'] },
    { name: 'a team with manage-workspaces', url: '/teams/team-managers/authentication-token', missing: '/teams/team-missing/authentication-token', allowed: [...owners, 'manage-teams + manage-workspaces (user)'] },
    { name: 'a team with read-workspaces', url: '/teams/team-readers/authentication-token', missing: '/teams/team-missing/authentication-token', allowed: [...owners, 'manage-teams + manage-workspaces (user)'] }, // manage-workspaces holds read
    // the organization token may not manage the organization's tokens: nor the tokens of the owners team, which may
    { name: 'the owners team', url: '/teams/team-owners/authentication-token', missing: '/teams/team-missing/authentication-token', allowed: ['owner (user)', 'owners team token'] },
    { name: 'the organization token', url: '/organizations/acme/authentication-token', missing: '/organizations/no-such-org/authentication-token', allowed: ['owner (user)', 'owners team token'] },
    { name: "a user's tokens", url: '/users/user-reader/authentication-tokens', missing: '/users/user-missing/authentication-tokens', allowed: ['the reader'] },
    { name: "a team's token by id", url: `/authentication-tokens/${await tokenIdOf('team-green')}`, missing: '/authentication-tokens/at-missing', allowed: [...owners, 'manage-teams (user)', 'manage-teams (team token)', 'manage-teams + manage-workspaces (user)'] },
    { name: "the owners team's token by id", url: `/authentication-tokens/${await tokenIdOf('team-owners')}`, missing: '/authentication-tokens/at-missing', allowed: ['owner (user)', 'owners team token'] },
    { name: "the organization's token by id", url: `/authentication-tokens/${organizationToken.id}`, missing: '/authentication-tokens/at-missing', allowed: ['owner (user)', 'owners team token'] },
    { name: "a user's token by id", url: `/authentication-tokens/${readerToken.id}`, missing: '/authentication-tokens/at-missing', allowed: ['the reader'] }
  ]

  t.test('reads: the allowed read, the others get the 404 of a missing subject', async (t) => {
    for (const row of rows) {
      for (const who of Object.keys(callers) as Who[]) {
        const res = await request('GET', row.url, callers[who])
        if (row.allowed.includes(who)) {
          t.equal(res.statusCode, 200, `${row.name}: ${who} may read`)
        } else {
          const missing = await request('GET', row.missing, callers[who])
          t.same(comparable(res), comparable(missing), `${row.name}: ${who} → the 404 of a missing one`)
          t.equal(res.statusCode, 404)
        }
      }
    }
  })

  t.test('writes: whoever may not changes nothing and gets the same 404', async (t) => {
    const before = await snapshot(app.db)
    const revoked = await app.db.selectFrom('revoked_tokens').selectAll().execute()
    const events = await app.db.selectFrom('audit_events').select('id').execute()
    for (const row of rows) {
      const writes: Array<['POST' | 'DELETE', string, string]> = row.url.startsWith('/authentication-tokens/')
        ? [['DELETE', row.url, row.missing]]
        : row.url.endsWith('/authentication-tokens')
          ? [['POST', row.url, row.missing]]
          : [['POST', row.url, row.missing], ['DELETE', row.url, row.missing]]
      for (const who of allBut(row.allowed)) {
        for (const [method, url, missing] of writes) {
          const res = await request(method, url, callers[who])
          t.same(comparable(res), comparable(await request(method, missing, callers[who])), `${method} ${row.name}: ${who} → the 404 of a missing one`)
        }
      }
    }
    t.same(await snapshot(app.db), before, 'no row changed')
    t.same(await app.db.selectFrom('revoked_tokens').selectAll().execute(), revoked, 'nothing revoked')
    t.equal((await app.db.selectFrom('audit_events').select('id').execute()).length, events.length, 'no event')
  })

  t.test('writes: the allowed create and revoke', async (t) => {
    for (const row of rows) {
      for (const who of row.allowed) {
        if (row.url.startsWith('/authentication-tokens/')) continue // revoked below, once
        if (row.url.endsWith('/authentication-tokens')) {
          const body = row.url.startsWith('/teams/') ? JSON.stringify({ data: { attributes: { description: `by ${who}` } } }) : '{}'
          const res = await app.inject({ method: 'POST', url: `/api/v2${row.url}`, headers: { ...bearer(callers[who]), ...JSONAPI }, payload: body })
          t.equal(res.statusCode, 201, `POST ${row.name}: ${who}`)
          continue
        }
        t.equal((await request('POST', row.url, callers[who])).statusCode, 201, `POST ${row.name}: ${who}`)
        t.equal((await request('DELETE', row.url, callers[who])).statusCode, 204, `DELETE ${row.name}: ${who}`)
      }
    }
    // one token by id, revoked by the first who may
    for (const row of rows.filter((r) => r.url.startsWith('/authentication-tokens/'))) {
      const exists = await request('GET', row.url, callers[row.allowed.at(-1)!])
      if (exists.statusCode === 404) continue // revoked above by a DELETE of its subject's token
      t.equal((await request('DELETE', row.url, callers[row.allowed.at(-1)!])).statusCode, 204, `DELETE ${row.name}: ${row.allowed.at(-1)}`)
    }
  })

  t.test('/account/details: a user token only', async (t) => {
    t.equal((await request('GET', '/account/details', TOKENS.reader)).statusCode, 200)
    const missing = await request('GET', '/account/details', TOKENS.organization)
    t.equal(missing.statusCode, 404)
    t.same(comparable(await request('GET', '/account/details', TOKENS.nonOwnerTeam)), comparable(missing), 'a team token: the same 404')
  })
})
