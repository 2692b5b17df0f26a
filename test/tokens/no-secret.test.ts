import t from 'tap'
import { sql } from 'kysely'
import type { LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../src/app.js'
import { applySeed } from '../../src/directory/seed.js'
import { tokenDigest } from '../../src/auth/token-digest.js'
import { bearer, ENGINE, freshLocation, testConfig } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { schemaOf } from '../../src/db/tables.js'

/**
 * DESIGN §9.5: a secret appears once — in the answer that creates it — and nowhere else: not in a
 * log line (at the most verbose level), not in any other answer (errors included), not in an
 * audit event, not in any row of any table. Every kind of token is created and regenerated, and
 * each secret is then used, refused and revoked, before everything is searched for it.
 */
t.test(`no secret outside its create answer on ${ENGINE}`, async (t) => {
  const lines: string[] = []
  const app = await buildApp(testConfig(await freshLocation(t), { logLevel: 'trace' }), { logStream: { write: (line) => { lines.push(line) } } })
  t.teardown(() => app.close())
  await applySeed(app.db, world)

  const answers: LightMyRequestResponse[] = []
  const send = async (method: 'GET' | 'POST' | 'DELETE', url: string, token: string, body?: unknown) => {
    const res = await app.inject({
      method, url: `/api/v2${url}`, headers: { ...bearer(token), ...(body === undefined ? {} : { 'content-type': 'application/vnd.api+json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) })
    })
    answers.push(res)
    return res
  }
  const secrets: string[] = []
  const create = async (url: string, token: string, body?: unknown) => {
    const res = await app.inject({ method: 'POST', url: `/api/v2${url}`, headers: { ...bearer(token), 'content-type': 'application/vnd.api+json' }, payload: JSON.stringify(body ?? {}) })
    t.equal(res.statusCode, 201, `POST ${url}`)
    const secret = res.json().data.attributes.token as string
    secrets.push(secret)
    return { id: res.json().data.id as string, secret }
  }

  // every kind, created and regenerated
  const team1 = await create('/teams/team-green/authentication-token', TOKENS.owner)
  const team2 = await create('/teams/team-green/authentication-token', TOKENS.owner, { data: { type: '', attributes: { 'expired-at': '2099-01-01T00:00:00Z' } } })
  const described = await create('/teams/team-green/authentication-tokens', TOKENS.ownersTeam, { data: { type: 'authentication-tokens', attributes: { description: 'ci' } } })
  const org1 = await create('/organizations/acme/authentication-token', TOKENS.owner)
  const org2 = await create('/organizations/acme/authentication-token', TOKENS.ownersTeam)
  const user = await create('/users/user-writer/authentication-tokens', TOKENS.writer, { data: { attributes: { description: 'laptop' } } })
  t.equal(new Set(secrets).size, secrets.length, 'every secret is new')

  // use them, be refused with them, read them, revoke them
  for (const secret of secrets) {
    await send('GET', '/teams/team-green', secret)
    await send('GET', '/teams/team-missing', secret)
    await send('GET', '/account/details', secret)
    await send('GET', '/organization/audit-trail', secret)
    await send('POST', '/team-workspaces', secret, { data: { type: 'team-workspaces', attributes: { access: 'bogus' } } })
    await send('GET', `/team-workspaces?filter[workspace][id]=ws-prod&token=${secret}`, secret)
  }
  await send('POST', '/teams/team-green/authentication-tokens', TOKENS.owner, { data: { attributes: { description: 'ci' } } }) // 422 duplicate
  await send('GET', '/teams/team-green/authentication-token', TOKENS.owner)
  await send('GET', '/teams/team-green/authentication-tokens', TOKENS.owner)
  await send('GET', '/organizations/acme/authentication-token', TOKENS.owner)
  await send('GET', '/users/user-writer/authentication-tokens', TOKENS.writer)
  for (const { id } of [team2, described, org2, user]) await send('GET', `/authentication-tokens/${id}`, TOKENS.owner)
  await send('GET', `/authentication-tokens/${user.id}`, TOKENS.writer)
  await send('DELETE', `/authentication-tokens/${described.id}`, TOKENS.owner)
  await send('DELETE', '/teams/team-green/authentication-token', TOKENS.owner)
  await send('DELETE', '/organizations/acme/authentication-token', TOKENS.owner)
  await send('DELETE', `/authentication-tokens/${user.id}`, TOKENS.writer)
  for (const secret of secrets) await send('GET', '/teams/team-green', secret) // revoked: 401
  t.same([team1, org1].length, 2)

  t.ok(lines.length > 0, 'the requests were logged')
  const events = JSON.stringify(await app.db.selectFrom('audit_events').selectAll().execute())
  const tables = (await sql<{ table_name: string }>`select table_name from information_schema.tables
    where table_schema = ${schemaOf(app.db)} and table_type = 'BASE TABLE'`.execute(app.db)).rows.map((r) => r.table_name)
  t.ok(tables.includes('tokens') && tables.includes('revoked_tokens') && tables.includes('audit_events'))
  const rows = await Promise.all(tables.map(async (table) => JSON.stringify((await sql`select * from ${sql.table(`${schemaOf(app.db)}.${table}`)}`.execute(app.db)).rows)))
  const everything = rows.join('\n')
  for (const [i, secret] of secrets.entries()) {
    t.notOk(lines.some((line) => line.includes(secret)), `secret ${i}: in no log line`)
    t.notOk(answers.some((res) => res.body.includes(secret)), `secret ${i}: in no other answer`)
    t.notOk(events.includes(secret), `secret ${i}: in no audit event`)
    t.notOk(everything.includes(secret), `secret ${i}: in no row of any table`)
    // nor any long part of it (a secret cut in two, or stripped of its infix)
    for (const part of secret.split('.atlasv1.')) t.notOk(everything.includes(part) || lines.some((line) => line.includes(part)), `secret ${i}: no part of it either`)
    t.ok(everything.includes(tokenDigest(secret)), `secret ${i}: its digest is what is kept`)
  }
  t.ok(answers.some((res) => res.statusCode === 401) && answers.some((res) => res.statusCode === 422) && answers.some((res) => res.statusCode === 404), 'error answers were searched too')
})
