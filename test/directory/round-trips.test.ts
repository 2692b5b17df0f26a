import t from 'tap'
import Fastify from 'fastify'
import teamAccess from '../../src/plugin.js'
import { connect } from '../../src/db/connect.js'
import { migrate } from '../../src/db/migrate.js'
import { applySeed } from '../../src/directory/seed.js'
import { bearer, freshLocation, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'

/**
 * The SQL round trips of the directory's API writes (src/directory/), counted by a Kysely log hook
 * on the database the plugin uses, with the caller's token already known (as the second request of
 * a client is): a team created or changed, a member added or removed, a token made or revoked is
 * one statement — permission, change and audit events together; a team's delete is three (the team
 * locked as the caller may manage it, its team-access rows, then the rest of it), a regenerate three
 * (the subject locked, the old token revoked, the new one made).
 */
// a transaction's begin and commit are counted too: a delete and a regenerate are 3 + 2
const BUDGET = { create: 1, update: 1, addMember: 1, removeMember: 1, createToken: 1, revokeToken: 1, regenerate: 5, destroy: 5 }

t.test(`round trips of the directory's API writes on ${ENGINE}`, async (t) => {
  let queries = 0
  const connection = await connect(await freshLocation(t), { log: () => { queries++ } })
  t.teardown(() => connection.close())
  await migrate(connection.db)
  await applySeed(connection.db, world)
  const app = Fastify()
  await app.register(teamAccess, { prefix: '/api/v2', database: connection.db, migrate: false })
  t.teardown(() => app.close())
  const send = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) => await app.inject({
    method,
    url: `/api/v2${url}`,
    headers: { ...bearer(TOKENS.organization), ...(body === undefined ? {} : { 'content-type': 'application/vnd.api+json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) })
  })
  const count = async (status: number, ...request: Parameters<typeof send>): Promise<{ statements: number, body: any }> => {
    queries = 0
    const res = await send(...request)
    t.equal(res.statusCode, status, `${request[0]} ${request[1]}: ${status}`)
    return { statements: queries, body: res.body === '' ? undefined : res.json() }
  }
  await count(200, 'GET', '/teams/team-green') // the token seen: no lookup from here on

  const created = await count(201, 'POST', '/organizations/acme/teams', { data: { type: 'teams', attributes: { name: 'counted' } } })
  t.equal(created.statements, BUDGET.create, 'team create')
  const id = created.body.data.id as string
  t.equal((await count(200, 'PATCH', `/teams/${id}`, { data: { type: 'teams', attributes: { visibility: 'organization' } } })).statements, BUDGET.update, 'team update')
  t.equal((await count(204, 'POST', `/teams/${id}/relationships/users`, { data: [{ type: 'users', id: 'writer' }] })).statements, BUDGET.addMember, 'member add')
  t.equal((await count(204, 'DELETE', `/teams/${id}/relationships/users`, { data: [{ type: 'users', id: 'writer' }] })).statements, BUDGET.removeMember, 'member remove')
  const token = await count(201, 'POST', `/teams/${id}/authentication-tokens`, { data: { type: 'authentication-tokens', attributes: { description: 'counted' } } })
  t.equal(token.statements, BUDGET.createToken, 'token create')
  t.equal((await count(204, 'DELETE', `/authentication-tokens/${token.body.data.id as string}`)).statements, BUDGET.revokeToken, 'token revoke')
  t.equal((await count(201, 'POST', `/teams/${id}/authentication-token`, { data: { type: 'authentication-tokens' } })).statements, BUDGET.regenerate, 'team token regenerate')
  t.equal((await count(204, 'DELETE', `/teams/${id}`)).statements, BUDGET.destroy, 'team delete, with its token')
})
