import t, { type Test } from 'tap'
import type { PGlite } from '@electric-sql/pglite'
import { Kysely, sql } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
import { preparedPGlite } from '../../src/db/pglite-statements.js'
import { openPGlite } from '../../src/db/pglite.js'

/**
 * The embedded database's named prepared statements (src/db/pglite-statements.ts): each query
 * shape parsed once and reused, answers the same as PGlite's own `query` for every parameter type
 * the service sends, a failed statement leaving the connection and the statement usable, DDL
 * forgetting what it would invalidate, and the cap on names.
 */
async function open (t: Test, maxNamed?: number) {
  const pglite = await openPGlite('memory://') // the build's snapshot: no initdb
  const prepared = preparedPGlite(pglite, maxNamed)
  t.teardown(() => prepared.close())
  const named = async () => (await pglite.query<{ name: string, statement: string }>('select name, statement from pg_prepared_statements order by name')).rows
  return { pglite, prepared, named }
}

t.test('a query shape is parsed once under a name, and its answers are those of PGlite itself', async (t) => {
  const { pglite, prepared, named } = await open(t)
  await prepared.query('create table things (id text primary key, n int, at timestamptz, tags text[], doc jsonb, ok boolean)')
  const insert = 'insert into things (id, n, at, tags, doc, ok) values ($1, $2, $3, $4, $5, $6) returning *'
  const at = new Date('2026-11-27T10:00:00.000Z')
  const rows: unknown[] = []
  for (const [id, n] of [['a', 1], ['b', 2], ['c\'; drop table things; --', 3]] as const) {
    rows.push((await prepared.query(insert, [id, n, at, ['x', 'y "z"', null], { k: [1, 'two'] }, n % 2 === 1])).rows[0])
  }
  t.same(rows[2], { id: 'c\'; drop table things; --', n: 3, at, tags: ['x', 'y "z"', null], doc: { k: [1, 'two'] }, ok: true }, 'every type round-trips')
  const select = 'select * from things where id = any($1) and ($2::int is null or n > $2) order by id'
  const ours = await prepared.query(select, [['a', 'b', 'c\'; drop table things; --'], null])
  const theirs = await pglite.query(select, [['a', 'b', 'c\'; drop table things; --'], null])
  t.same(ours.rows, theirs.rows, 'the same rows as PGlite\'s query')
  t.same(ours.fields, theirs.fields, 'the same fields')
  const updated = await prepared.query('update things set n = n + 1 where n >= $1', [2])
  t.equal(updated.affectedRows, 2, 'affected rows counted')
  for (let i = 0; i < 10; i++) await prepared.query(select, [['a'], 0])
  t.same((await named()).map((s) => s.statement).sort(), [insert, select, 'update things set n = n + 1 where n >= $1'].sort(),
    'three shapes, three names: the DDL unnamed, every repeat reusing its name')
})

t.test('a failed statement leaves the connection, the transaction rules and the statement as they were', async (t) => {
  const { prepared, named } = await open(t)
  await prepared.query('create table things (id text primary key)')
  const insert = 'insert into things (id) values ($1)'
  await prepared.query(insert, ['a'])
  await t.rejects(prepared.query(insert, ['a']), { code: '23505' }, 'the unique violation, as PGlite raises it')
  await prepared.query(insert, ['b'])
  await t.rejects(prepared.query('selec nonsense'), { code: '42601' }, 'a syntax error')
  t.notOk((await named()).some((s) => s.statement.startsWith('selec ')), 'a statement that does not parse is not kept')
  await prepared.query('begin')
  await prepared.query(insert, ['c'])
  await t.rejects(prepared.query(insert, ['c']), { code: '23505' })
  await t.rejects(prepared.query(insert, ['d']), { code: '25P02' }, 'an aborted transaction refuses what follows')
  await prepared.query('rollback')
  t.same((await prepared.query('select id from things order by id')).rows, [{ id: 'a' }, { id: 'b' }], 'the rolled-back rows are gone')
})

t.test('DDL forgets the prepared statements, so a select * answers the new columns', async (t) => {
  const { prepared, named } = await open(t)
  await prepared.query('create table things (id text primary key)')
  await prepared.query('insert into things (id) values ($1)', ['a'])
  t.same((await prepared.query('select * from things')).rows, [{ id: 'a' }])
  await prepared.query('alter table things add column n int not null default 7')
  t.same((await named()).length, 0, 'nothing prepared is left after the DDL')
  t.same((await prepared.query('select * from things')).rows, [{ id: 'a', n: 7 }], 'the new column, no "cached plan must not change result type"')
})

t.test('past the cap, statements run unnamed', async (t) => {
  const { prepared, named } = await open(t, 3)
  for (let i = 1; i <= 6; i++) t.same((await prepared.query(`select ${i} as n where $1::int > 0`, [1])).rows, [{ n: i }])
  t.equal((await named()).length, 3, 'three named, the other three unnamed')
})

t.test('Kysely over it: a transaction commits and rolls back, queries interleave in turn', async (t) => {
  const { prepared } = await open(t)
  const db = new Kysely<any>({ dialect: new PGliteDialect(prepared as unknown as PGlite) })
  await sql`create table things (id text primary key)`.execute(db)
  await db.transaction().execute(async (trx) => { await trx.insertInto('things').values({ id: 'kept' }).execute() })
  await t.rejects(db.transaction().execute(async (trx) => {
    await trx.insertInto('things').values({ id: 'dropped' }).execute()
    throw new Error('undo')
  }), /undo/)
  const all = await Promise.all(Array.from({ length: 20 }, async (_, i) => await db.selectFrom('things').select('id').where('id', '!=', `x${i}`).execute()))
  t.same(all.map((rows) => rows.map((r) => r.id)), Array.from({ length: 20 }, () => ['kept']))
})
