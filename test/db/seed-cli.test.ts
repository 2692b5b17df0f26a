import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../../src/app.js'
import { main } from '../../src/cli.js'
import { applySeed, formatSeedSummary } from '../../src/directory/seed.js'
import { connect } from '../../src/db/connect.js'
import { migrate, withSearchPath } from '../../src/db/migrate.js'
import { migrations } from '../../migrations/index.js'
import type { DatabaseLocation } from '../../src/db/connect.js'
import { ENGINE, freshLocation, testConfig } from '../helper.js'

/**
 * `team-access seed --dry-run FILE` prints what the seed would create, change and remove — every
 * removal by name, never a secret — and changes nothing; `team-access seed FILE` and a start with
 * SEED_FILE print or log the same summary of what they did.
 */
// the server's URL as given: the tests below point DATABASE_URL at databases of their own
const serverUrl = process.env.DATABASE_URL

const first = {
  users: [{ id: 'user-cli-ann', username: 'ann', tokens: ['cli-ann-token-1'] }],
  organizations: [{
    id: 'org-cli',
    name: 'acme',
    teams: [{ id: 'team-cli-red', name: 'red', members: ['ann'], tokens: ['cli-red-team-token'] }, { id: 'team-cli-blue', name: 'blue' }],
    workspaces: [{ id: 'ws-CliProduction001', name: 'prod' }],
    'team-access': [{ team: 'red', workspace: 'prod', access: 'write' }]
  }]
}
const second = {
  users: [{ id: 'user-cli-ann', username: 'ann', tokens: ['cli-ann-token-2'] }],
  organizations: [{ id: 'org-cli', name: 'acme', teams: [{ id: 'team-cli-blue', name: 'blue', members: ['ann'] }], workspaces: [{ id: 'ws-CliProduction001', name: 'prod' }] }]
}

async function run (argv: string[]): Promise<{ code: number, out: string, err: string }> {
  const out: string[] = []
  const err: string[] = []
  const log = console.log
  const error = console.error
  console.log = (...args: unknown[]) => { out.push(args.join(' ')) }
  console.error = (...args: unknown[]) => { err.push(args.join(' ')) }
  try {
    const code = await main(argv)
    return { code, out: out.join('\n'), err: err.join('\n') }
  } finally {
    console.log = log
    console.error = error
  }
}

t.test(`team-access seed [--dry-run] FILE (${ENGINE})`, async (t) => {
  const location: DatabaseLocation = ENGINE === 'postgres' ? await freshLocation(t) : { dataDir: await mkdtemp(join(tmpdir(), 'team-access-cli-')) }
  if ('dataDir' in location) {
    t.teardown(() => rm(location.dataDir, { recursive: true, force: true }))
    process.env.DATA_DIR = location.dataDir
  } else {
    process.env.DATABASE_URL = location.url
  }
  const dir = await mkdtemp(join(tmpdir(), 'team-access-cli-seed-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const firstFile = join(dir, 'first.json')
  const secondFile = join(dir, 'second.json')
  await writeFile(firstFile, JSON.stringify(first))
  await writeFile(secondFile, JSON.stringify(second))

  t.test('a dry run on a database with migrations to apply refuses, and migrates nothing', async (t) => {
    // a database one migration behind (a new embedded one starts migrated)
    const connection = await connect(location)
    await migrate(connection.db)
    const latest = Object.keys(migrations).sort().at(-1)!
    await withSearchPath(connection.db, connection.schema, async (db) => {
      await migrations[latest]!.down!(db)
      await db.deleteFrom('team_access_migrations').where('name', '=', latest).execute()
    })
    await connection.close()
    const { code, err } = await run(['seed', '--dry-run', firstFile])
    t.equal(code, 1)
    t.match(err, /run `team-access migrate` first/)
    const migrated = await run(['migrate'])
    t.same([migrated.code, migrated.out], [0, `migrations applied: ${latest}`], 'the dry run left the migration to apply')
  })

  t.test('an apply prints what it did', async (t) => {
    const { code, out } = await run(['seed', firstFile])
    t.equal(code, 0)
    t.match(out, /^seed .*first\.json: applied — 9 created, 0 changed, 0 removed\n/)
    t.match(out, /\+ team acme\/red\n/)
    t.match(out, /\+ token of team acme\/red\n/)
    t.match(out, /\+ team access red on acme\/prod/)
  })

  t.test('a dry run names every removal, and changes nothing', async (t) => {
    const { code, out } = await run(['seed', '--dry-run', secondFile])
    t.equal(code, 0)
    t.equal(out, [
      `seed ${secondFile}: dry run, nothing changed — 2 to create, 0 to change, 5 to remove`,
      '  + membership acme/blue: ann',
      '  + token of user ann',
      '  - team acme/red',
      '  - membership acme/red: ann',
      '  - token of user ann',
      '  - token of team acme/red',
      '  - team access red on acme/prod'
    ].join('\n'), 'the plan, line by line')
    t.notMatch(out, /cli-.*-token/, 'no secret')
    const again = await run(['seed', '--dry-run', secondFile])
    t.equal(again.out, out, 'nothing changed: the same plan again')
  })

  t.test('a start with SEED_FILE logs the same summary', async (t) => {
    const lines: string[] = []
    const app = await buildApp(testConfig(location, { seedFile: secondFile, logLevel: 'info' }), { logStream: { write: (line) => { lines.push(line) } } })
    t.teardown(() => app.close())
    const applied = lines.map((l) => JSON.parse(l)).find((l) => /^seed file: applied/.test(l.msg))
    t.ok(applied, 'a line for the seed')
    t.match(applied.msg, /applied — 2 created, 0 changed, 5 removed/)
    t.match(applied.msg, /- team acme\/red\n/)
    t.same(applied.removed.teams, ['acme/red'])
    t.match(applied.created, { memberships: 1, tokens: 1, users: 0 }, 'creations and changes counted, removals named')
    t.notMatch(lines.join(''), /cli-.*-token/, 'no secret in the log')
  })

  t.test('a large seed: creations past 20 of a kind are counted, removals always named', async (t) => {
    const connection = await connect(location)
    t.teardown(() => connection.close())
    const db = connection.db
    const many = (n: number) => ({ users: Array.from({ length: n }, (_, i) => ({ username: `many-${String(i).padStart(2, '0')}` })) })
    const created = formatSeedSummary(await applySeed(db, many(25), { dryRun: true }))
    t.equal(created.filter((l) => l.startsWith('  + user ')).length, 20)
    t.ok(created.includes('  + … and 5 more (users)'))
    await applySeed(db, many(25))
    const removed = formatSeedSummary(await applySeed(db, { users: [] }, { dryRun: true }))
    t.equal(removed.filter((l) => l.startsWith('  - user ')).length, 25, 'every removal by name')
  })

  t.test('usage errors', async (t) => {
    t.equal((await run(['seed'])).code, 2)
    t.equal((await run(['seed', '--dry-run'])).code, 2)
    t.equal((await run(['seed', '--dry-run', secondFile, 'extra'])).code, 2)
  })
})

t.test(`team-access migrate says what it did to a new database (${ENGINE})`, async (t) => {
  const saved = { DATA_DIR: process.env.DATA_DIR, DATABASE_URL: process.env.DATABASE_URL }
  if (serverUrl !== undefined) process.env.DATABASE_URL = serverUrl // freshLocation makes its database there
  t.teardown(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  })
  if (ENGINE === 'pglite') {
    const parent = await mkdtemp(join(tmpdir(), 'team-access-cli-new-'))
    t.teardown(() => rm(parent, { recursive: true, force: true }))
    process.env.DATA_DIR = join(parent, 'data')
    const first = await run(['migrate'])
    t.same([first.code, first.out], [0, `migrations: a new database in DATA_DIR (${process.env.DATA_DIR}), made from the build's snapshot with every migration applied: up to date`], 'not just "up to date"')
  } else {
    const location = await freshLocation(t)
    process.env.DATABASE_URL = (location as { url: string }).url
    const first = await run(['migrate'])
    t.equal(first.code, 0)
    t.match(first.out, /^migrations applied: \d{3}/, 'a new PostgreSQL database is migrated')
  }
  const again = await run(['migrate'])
  t.same([again.code, again.out], [0, 'migrations: up to date'], 'a database already there and migrated is up to date')

  if (ENGINE === 'postgres') {
    t.test('a role the server refuses is one line, without a stack', async (t) => {
      const url = new URL(process.env.DATABASE_URL!)
      url.username = 'no-such-role'
      url.password = 'hunter2-secret'
      process.env.DATABASE_URL = url.href
      const refused = await run(['migrate'])
      t.equal(refused.code, 1)
      t.match(refused.err, /^team-access: the PostgreSQL server at [^ ]+:\d+ refused user "no-such-role" \(.*no-such-role.*\): check the user and password in DATABASE_URL$/)
      t.notMatch(refused.err, /hunter2-secret/, 'the password is never printed')
    })
  }
})
