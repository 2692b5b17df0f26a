import t from 'tap'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { Kysely, sql } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
import { migrations } from '../../migrations/index.js'
import { migrate } from '../../src/db/migrate.js'
import { inSchema } from '../../src/db/tables.js'
import { migrationDigests, openPGlite, sameLine, SNAPSHOT_FILE, SNAPSHOT_INFO, type SnapshotInfo } from '../../src/db/pglite.js'
import { extractSnapshot, writeTar } from '../../src/db/pglite-tar.js'

/** The embedded database's fast start: the build's pre-migrated data directory (src/db/pglite.ts). */

const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'team-access-pglite-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

t.test('the build made a snapshot of these migrations, on this PGlite line', async (t) => {
  t.ok(existsSync(SNAPSHOT_FILE), `${SNAPSHOT_FILE} exists (npm run build makes it)`)
  const info = JSON.parse(readFileSync(SNAPSHOT_INFO, 'utf8')) as SnapshotInfo
  t.same(info.migrations, await migrationDigests(), 'the SQL of every migration is the one loaded here')
  t.same(info.migrations.map((m) => m.name), Object.keys(migrations).sort())
})

t.test('migration digests depend on the SQL alone', async (t) => {
  const digests = await migrationDigests()
  t.equal(digests.length, Object.keys(migrations).length)
  t.equal(new Set(digests.map((d) => d.sql)).size, digests.length, 'each migration its own')
  t.same(await migrationDigests(), digests, 'the same each time')
})

t.test('PGlite lines', async (t) => {
  t.ok(sameLine('0.4.6', '0.4.9'))
  t.notOk(sameLine('0.4.6', '0.5.0'))
})

const open = async (dataDir: string) => inSchema(new Kysely<any>({ dialect: new PGliteDialect(await openPGlite(dataDir)) }))

t.test('a new data directory starts migrated from the snapshot and keeps its data', async (t) => {
  const dataDir = join(scratch(), 'data') // not there yet
  let db = await open(dataDir)
  t.ok(existsSync(join(dataDir, 'PG_VERSION')), 'a PostgreSQL data directory')
  t.same(await migrate(db), [], 'the migrations are there already')
  const { rows } = await sql<{ shared_buffers: string }>`show shared_buffers`.execute(db)
  t.equal(rows[0]!.shared_buffers, '8MB', 'small shared buffers')
  await db.insertInto('organizations').values({ id: 'org-a', name: 'a' }).execute()
  await db.destroy()

  db = await open(dataDir)
  t.same(await db.selectFrom('organizations').select('id').execute(), [{ id: 'org-a' }], 'the row survived the restart')
  await db.destroy()
})

t.test('an empty directory (a fresh volume) is filled too; memory:// starts from the snapshot', async (t) => {
  const dataDir = scratch()
  let db = await open(dataDir)
  t.same(await migrate(db), [])
  await db.destroy()
  db = await open('memory://')
  t.same(await migrate(db), [])
  t.same(await db.selectFrom('organizations').select('id').execute(), [])
  await db.destroy()
})

t.test('tarballs: what writeTar packs, extractSnapshot unpacks; a cut one is an error', async (t) => {
  const source = scratch()
  mkdirSync(join(source, 'base', '5'), { recursive: true })
  mkdirSync(join(source, 'pg_tblspc'))
  writeFileSync(join(source, 'PG_VERSION'), '17\n')
  writeFileSync(join(source, 'base', '5', '1259'), Buffer.alloc(8192 * 3 + 17, 7))
  writeFileSync(join(source, 'empty'), '')
  const tarball = join(scratch(), 'snapshot.tar.gz')
  const packed = gzipSync(writeTar(source))
  writeFileSync(tarball, packed)

  const target = join(scratch(), 'data')
  await extractSnapshot(tarball, target)
  t.equal(readFileSync(join(target, 'PG_VERSION'), 'utf8'), '17\n')
  t.same(readFileSync(join(target, 'base', '5', '1259')), Buffer.alloc(8192 * 3 + 17, 7))
  t.equal(readFileSync(join(target, 'empty'), 'utf8'), '')
  t.ok(existsSync(join(target, 'pg_tblspc')), 'empty directories too')

  const cut = join(scratch(), 'cut.tar.gz')
  writeFileSync(cut, gzipSync(writeTar(source).subarray(0, 2048)))
  await t.rejects(extractSnapshot(cut, join(scratch(), 'data')), /cut short/)
})
