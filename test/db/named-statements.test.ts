import t, { type Test } from 'tap'
import Fastify from 'fastify'
import pg from 'pg'
import { Kysely, PostgresDialect, sql } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
import teamAccess, { applySeed, preparedStatements } from '../../src/index.js'
import { openPGlite } from '../../src/db/pglite.js'
import { world, TOKENS } from '../fixtures/world.js'
import { bearer, ENGINE, freshLocation } from '../helper.js'

/**
 * Issue 47: a host that hands the plugin the Kysely it already has — a plain `pg.Pool` under
 * Kysely's PostgreSQL dialect, nothing wrapped — gets the plugin's hot statements as named
 * prepared statements (src/db/named-statements.ts): parsed and planned once per connection. A
 * driver that takes only strings (PGlite's Kysely dialect, as a host may use it) gets them as text,
 * and a pool the host wrapped in `preparedStatements` keeps them named, values and all.
 */

type Host = 'plain' | 'wrapped' | 'unnamed'

/** The host's own Kysely on a database of its own: one connection, so that its prepared statements can be read back. */
async function hostDatabase (t: Test, host: Host): Promise<Kysely<any>> {
  const location = await freshLocation(t)
  const pool = 'url' in location ? new pg.Pool({ connectionString: location.url, max: 1 }) : undefined
  const db = 'dataDir' in location
    ? new Kysely<any>({ dialect: new PGliteDialect(await openPGlite(location.dataDir)) })
    : new Kysely<any>({ dialect: new PostgresDialect({ pool: host === 'wrapped' ? preparedStatements(pool!) : pool! }) })
  t.teardown(() => db.destroy())
  return db
}

async function hostApp (t: Test, db: Kysely<any>, host: Host) {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(teamAccess, { prefix: '/api/v2', database: db, ...(host === 'unnamed' ? { namedStatements: false } : {}) })
  await app.ready()
  await applySeed(db, world)
  return app
}

/** What the plugin answers: the same whatever runs its statements. */
async function answers (app: Awaited<ReturnType<typeof hostApp>>) {
  const check = async (userId: string, workspaceId: string) => (await app.teamAccess.effectiveAccess({ caller: { kind: 'user', userId }, workspaceId })).access
  const list = await app.inject({ url: '/api/v2/team-workspaces?filter[workspace][id]=ws-prod', headers: bearer(TOKENS.owner) })
  const show = await app.inject({ url: '/api/v2/team-workspaces/tws-admins-prod', headers: bearer(TOKENS.reader) })
  return {
    owner: await check('user-owner', 'ws-prod'),
    reader: await check('user-reader', 'ws-prod'),
    outsider: await check('user-globex', 'ws-prod'),
    list: [list.statusCode, (list.json().data as Array<{ id: string }>).map((row) => row.id).sort()],
    show: show.statusCode
  }
}

/** The plugin's statements prepared on the host's one connection, by name. */
async function preparedByPlugin (db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from pg_prepared_statements where name like 'ta\\_%' order by name`.execute(db)
  return rows.map((row) => row.name)
}

t.test(`the host's own Kysely on ${ENGINE}: the plugin's hot statements are named where the driver takes names`, async (t) => {
  const expected = await answers(await hostApp(t, await hostDatabase(t, 'unnamed'), 'unnamed'))
  t.equal(expected.owner, 'admin')
  t.equal(expected.outsider, null)
  t.equal(expected.list[0], 200)

  for (const host of ['plain', 'wrapped'] as const) {
    t.test(host === 'plain' ? 'a plain pg.Pool, nothing wrapped' : 'a pool wrapped in preparedStatements', async (t) => {
      const db = await hostDatabase(t, host)
      const app = await hostApp(t, db, host)
      t.same(await answers(app), expected, 'the same answers as with unnamed statements')
      if (ENGINE === 'pglite') return
      const names = await preparedByPlugin(db)
      t.ok(names.length >= 4, `the check, the list, the show and the token lookup prepared (${names.length} statements named)`)
      const before = names.length
      await answers(app)
      t.equal((await preparedByPlugin(db)).length, before, 'asked again: the same statements, none prepared anew')
    })
  }

  t.test('namedStatements: false — the statements go as text', async (t) => {
    const db = await hostDatabase(t, 'unnamed')
    const app = await hostApp(t, db, 'unnamed')
    await answers(app)
    if (ENGINE === 'postgres') t.same(await preparedByPlugin(db), [], 'no statement of the plugin prepared')
  })
})
