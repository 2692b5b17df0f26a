import t from 'tap'
import { readFile, writeFile, mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql, type Kysely } from 'kysely'
import { schemaOf } from '../../src/db/tables.js'
import type { Test } from 'tap'
import type { Database } from '../../src/db/database.js'
import { applySeed, SeedError } from '../../src/directory/seed.js'
import { noChanges } from '../../src/directory/seed-entries.js'
import { applySeedFile } from '../../src/directory/seed-file.js'
import { DEMO_SEED } from '../../src/app.js'
import { freshDatabase, snapshot, ENGINE } from '../helper.js'

const designSeed = JSON.parse(await readFile(new URL('../fixtures/design-seed.json', import.meta.url), 'utf8'))
const clone = <T>(x: T): T => structuredClone(x)

t.test(`seed files on ${ENGINE}`, async (t) => {
  const { db } = await freshDatabase(t)

  t.test('the DESIGN §6 example applies, with every entity and its fields', async (t) => {
    const summary = await applySeed(db, designSeed)
    t.match(summary, { users: 2, organizations: 1, teams: 3, workspaces: 1, teamAccess: 1, teamAccessAlreadyApplied: 0, tokens: 4, dryRun: false })
    t.same(summary.created, {
      organizations: ['acme'],
      users: ['alice', 'bob'],
      teams: ['acme/owners', 'acme/ops', 'acme/red'],
      memberships: ['acme/owners: alice', 'acme/red: bob'],
      workspaces: ['acme/prod'],
      tokens: ['user alice', 'user bob', 'organization acme', 'team acme/owners'],
      teamAccess: ['red on acme/prod'],
      projects: [],
      projectAccess: []
    }, 'every row created is named, tokens by kind and owner')
    t.same([summary.changed, summary.removed], [noChanges(), noChanges()])
    const teams = await db.selectFrom('teams').selectAll().orderBy('name').execute()
    t.same(teams.map((x) => [x.id, x.name, x.visibility, x.is_owners, x.manage_workspaces, x.read_workspaces]), [
      ['team-ops', 'ops', 'organization', false, true, false],
      ['team-owners', 'owners', 'secret', true, false, false],
      ['team-red', 'red', 'secret', false, false, false]
    ])
    const members = await db.selectFrom('team_memberships').selectAll().orderBy('team_id').execute()
    t.same(members, [{ team_id: 'team-owners', user_id: 'user-alice', managed_by: 'seed' }, { team_id: 'team-red', user_id: 'user-bob', managed_by: 'seed' }])
    const access = await db.selectFrom('team_workspaces').selectAll().executeTakeFirstOrThrow()
    t.match(access, {
      id: 'tws-1',
      organization_id: 'org-acme',
      team_id: 'team-red',
      workspace_id: 'ws-prod',
      access: 'custom',
      runs: 'plan',
      variables: 'none',
      state_versions: 'none',
      sentinel_mocks: 'none',
      workspace_locking: false,
      run_tasks: false
    }, 'custom: the given permission, the defaults for the rest')
  })

  t.test('applying the same seed twice leaves the same rows', async (t) => {
    const before = await snapshot(db)
    await applySeed(db, designSeed)
    t.same(await snapshot(db), before)
  })

  t.test('entries without ids are upserted by name', async (t) => {
    // the document is the whole truth for the seed's rows (§9.1): bob is declared, by name, to stay
    const seed = { users: [{ username: 'bob' }, { username: 'dave' }], organizations: [{ name: 'acme', workspaces: [{ name: 'dev' }], teams: [{ name: 'red', members: ['bob', 'dave'] }] }] }
    await applySeed(db, seed)
    const once = await snapshot(db)
    await applySeed(db, seed)
    t.same(await snapshot(db), once, 'generated ids are found again by name')
    const dave = await db.selectFrom('users').selectAll().where('username', '=', 'dave').executeTakeFirstOrThrow()
    t.match(dave.id, /^user-[1-9A-HJ-NP-Za-km-z]{16}$/, 'a generated id has the HCP shape (base58)')
    const org = await db.selectFrom('organizations').selectAll().execute()
    t.equal(org.length, 1, 'acme matched by name, not duplicated')
    const red = await db.selectFrom('team_memberships').select('user_id').where('team_id', '=', 'team-red').orderBy('user_id').execute()
    t.same(red.map((r) => r.user_id), [dave.id, 'user-bob'].sort(), 'members lists are the complete member list')
    await applySeed(db, designSeed) // back to the example
  })

  const broken: Array<[string, (seed: any) => void, RegExp]> = [
    ['unknown member', (s) => { s.organizations[0].teams[2].members.push('carol') }, /organizations\[0\] "acme" › teams\[2\] "red" › members\[1\] "carol": no user named "carol"/],
    ['duplicate team access', (s) => { s.organizations[0]['team-access'].push({ team: 'red', workspace: 'prod', access: 'read' }) }, /organizations\[0\] "acme" › team-access\[1\] "red on prod": duplicate team access/],
    ['bad access value', (s) => { s.organizations[0]['team-access'][0].access = 'owner' }, /organizations\[0\] "acme" › team-access\[0\] "red on prod" › access: must be one of "read", "plan", "write", "admin", "custom"/],
    ['bad visibility', (s) => { s.organizations[0].teams[1].visibility = 'public' }, /teams\[1\] "ops" › visibility: must be one of/],
    ['unknown key', (s) => { s.organizations[0].teams[0].colour = 'blue' }, /teams\[0\] "owners" › colour: unknown member "colour"/],
    ['team of another organization', (s) => {
      s.organizations.push({ name: 'globex', teams: [{ name: 'blue' }], workspaces: [{ name: 'w' }] })
      s.organizations[0]['team-access'].push({ team: 'blue', workspace: 'prod', access: 'read' })
    }, /organizations\[0\] "acme" › team-access\[1\] "blue on prod": no team named "blue" in organization "acme"/],
    ['unknown workspace', (s) => { s.organizations[0]['team-access'][0].workspace = 'nope' }, /team-access\[0\] "red on nope": no workspace named "nope"/],
    ['custom-only attribute under a fixed level', (s) => { s.organizations[0]['team-access'][0].access = 'read' }, /team-access\[0\] "red on prod": Runs is read-only when access level is 'read'/],
    ['two owners teams', (s) => { s.organizations[0].teams[1].owners = true }, /teams\[1\] "ops": duplicate owners team/],
    ['one token for two subjects', (s) => { s.users[1].tokens.push('alice-secret-token-1') }, /users\[2\] "bob" › tokens\[1\]: token already given to users\[1\] "alice"/],
    ['a token object with a date that is not one', (s) => { s.users[1].tokens.push({ token: 'bob-secret-token-2', 'expires-at': 'next tuesday' }) }, /^users\[2\] "bob" › tokens\[1\] › expires-at: must be an RFC 3339 date-time/],
    ['a token object with an unknown key', (s) => { s.users[1].tokens.push({ token: 'bob-secret-token-2', expires: '2030-01-01T00:00:00Z' }) }, /^users\[2\] "bob" › tokens\[1\] › expires: unknown member "expires" \(it may have "token", "expires-at"\)$/],
    ['a token object without its token', (s) => { s.users[1].tokens.push({ 'expires-at': '2030-01-01T00:00:00Z' }) }, /^users\[2\] "bob" › tokens\[1\] › token: is required$/],
    ['a token neither string nor object', (s) => { s.users[1].tokens.push(12345678) }, /^users\[2\] "bob" › tokens\[1\]: must be string or object$/],
    ['a token too short (never echoed)', (s) => { s.users[1].tokens.push('short') }, /^users\[2\] "bob" › tokens\[1\]: must NOT have fewer than 8 characters$/],
    ['a token object with a token too short (never echoed)', (s) => { s.organizations[0].tokens = [{ token: 'short' }] }, /^organizations\[0\] "acme" › tokens\[0\] › token: must NOT have fewer than 8 characters$/],
    ['a missing name', (s) => { delete s.organizations[0].teams[1].name }, /^organizations\[0\] "acme" › teams\[1\] › name: is required$/],
    ['bad explicit id', (s) => { s.organizations[0].workspaces[0].id = 'workspace-prod' }, /workspaces\[0\] "prod" › id: must match pattern/],
    ['id of another organization\'s workspace', (s) => {
      s.organizations.push({ name: 'globex', workspaces: [{ id: 'ws-prod', name: 'stolen' }] })
    }, /organizations\[1\] "globex" › workspaces\[0\] "stolen": id "ws-prod" belongs to a workspace of another organization/]
  ]
  for (const [name, breakIt, message] of broken) {
    t.test(`a broken seed (${name}) changes nothing and names the entry`, async (t) => {
      const before = await snapshot(db)
      const seed = clone(designSeed)
      breakIt(seed)
      // a valid change first, so that "nothing" is really nothing
      seed.users.unshift({ username: 'eve', tokens: ['eve-token-123'] })
      const err = await applySeed(db, seed).then(() => null, (e: unknown) => e)
      t.type(err, SeedError)
      t.match((err as Error).message, message)
      t.same(await snapshot(db), before, 'no row changed')
    })
  }

  t.test('a seed file that cannot be read or parsed is named', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'seed-'))
    await t.rejects(applySeedFile(db, join(dir, 'missing.json')), /missing\.json: cannot read the seed file \(ENOENT\)/)
    await writeFile(join(dir, 'bad.json'), '{ nope')
    await t.rejects(applySeedFile(db, join(dir, 'bad.json')), /bad\.json: not valid JSON/)
    await writeFile(join(dir, 'wrong.json'), JSON.stringify({ users: [{ username: 'x', tokens: ['short'] }] }))
    await t.rejects(applySeedFile(db, join(dir, 'wrong.json')), /wrong\.json › users\[0\] "x" › tokens\[0\]/)
  })

  t.test('no token secret is stored in any table (DESIGN example and demo seed)', async (t) => {
    const demo = await freshDatabase(t)
    const summary = await applySeedFile(demo.db, DEMO_SEED)
    t.ok(summary.teamAccess > 0 && summary.tokens > 0, 'the demo seed applies')
    for (const [name, database] of [['design', db], ['demo', demo.db]] as const) {
      t.test(name, (t) => noSecrets(t, database))
    }
  })

  async function noSecrets (t: Test, db: Kysely<Database>): Promise<void> {
    const secrets = ['alice-secret-token-1', 'bob-secret-token-1', 'acme-organization-token', 'acme-owners-team-token',
      ...JSON.stringify(JSON.parse(await readFile(DEMO_SEED, 'utf8'))).match(/[a-z-]+-demo-token/g)!]
    const { rows: tables } = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = ${schemaOf(db)}`.execute(db)
    t.ok(tables.length >= 7)
    for (const { table_name: table } of tables) {
      const { rows } = await sql<{ row: string }>`select t::text as row from ${sql.table(`${schemaOf(db)}.${table}`)} t`.execute(db)
      const text = rows.map((r) => r.row).join('\n')
      for (const secret of secrets) t.notOk(text.includes(secret), `${table} does not hold ${secret}`)
    }
    // the tokens held, and those an earlier apply removed (revoked for good: their digests kept)
    const digests = [...await db.selectFrom('tokens').select('digest').execute(), ...await db.selectFrom('revoked_tokens').select('digest').execute()]
    t.ok(digests.length >= 4)
    t.ok(digests.every((x) => /^[0-9a-f]{64}$/.test(x.digest)), 'only SHA-256 digests')
  }
})

t.test(`a workspace id the Terraform provider refuses is served, and the apply warns once, naming them (${ENGINE})`, async (t) => {
  const { db } = await freshDatabase(t)
  const summary = await applySeed(db, {
    organizations: [{
      name: 'shop',
      workspaces: [{ id: 'ws-web-prod', name: 'web-prod' }, { id: 'ws-1', name: 'one' }, { id: 'ws-ProviderShaped01', name: 'ok' }, { name: 'generated' }]
    }]
  })
  t.same(summary.warnings, ["workspace ids the Terraform provider refuses (it takes only ws- and 16 letters or digits): shop/web-prod (ws-web-prod), shop/one (ws-1) — the HTTP API serves them, Terraform's workspace_id does not; give new ids of that shape (or none) to workspaces you manage with Terraform"])
  t.same((await db.selectFrom('workspaces').select('id').orderBy('id').execute()).map((w) => w.id).filter((id) => !/^ws-[1-9A-HJ-NP-Za-km-z]{16}$/.test(id) || id === 'ws-ProviderShaped01'),
    ['ws-1', 'ws-ProviderShaped01', 'ws-web-prod'], 'written as given')
  const demo = await applySeed(db, JSON.parse(await readFile(DEMO_SEED, 'utf8')))
  t.same(demo.warnings, [], 'the demo data uses ids of the provider’s shape')
})
