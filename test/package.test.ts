import t from 'tap'
import { execFile, execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { promisify } from 'node:util'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, posix } from 'node:path'
import { projectFile } from '../src/project-file.js'

/**
 * The package as a host gets it: what `npm pack` ships, and a project of its own that imports it
 * by name, type-checks against its declarations and registers it. Uses the dist/ that `npm test`
 * built (--ignore-scripts: no rebuild while other test files import dist/).
 */
const root = projectFile('')
const npm = (...args: string[]) => execFileSync('npm', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

t.test('npm pack ships dist/, migrations/, schemas/, the docs, the example and the changelog, and no tests', async (t) => {
  const [pack] = JSON.parse(npm('pack', '--dry-run', '--json', '--ignore-scripts')) as Array<{ files: Array<{ path: string }> }>
  const files = pack!.files.map((f) => f.path)
  for (const file of ['dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/plugin.js', 'dist/migrations/0001_initial.js',
    'dist/schemas/team-workspaces.js', 'migrations/0001_initial.ts', 'schemas/openapi.json', 'seeds/demo.json', 'package.json', 'README.md',
    'docs/CONTRACT.md', 'docs/ARCHITECTURE.md', 'examples/embed.ts', 'CHANGELOG.md']) {
    t.ok(files.includes(file), `ships ${file}`)
  }
  t.same(files.filter((f) => /(^|\/)(test|test-browser|test-faults)\//.test(f) || /\.test\.[jt]s$/.test(f)), [], 'no tests')
  // the README's and the docs' links to files of the repository lead somewhere in the package too
  const links = ['README.md', 'docs/CONTRACT.md', 'docs/ARCHITECTURE.md'].flatMap((doc) =>
    [...readFileSync(join(root, doc), 'utf8').matchAll(/\]\(([^)#:]+)(#[^)]*)?\)/g)].map((m) => posix.normalize(posix.join(posix.dirname(doc), m[1]!))))
  t.ok(links.length > 0, `${links.length} links`)
  t.same([...new Set(links.filter((link) => !files.includes(link)))], [], 'every linked file is shipped')
})

/**
 * A host that has Fastify and Kysely of its own installs the tarball beside them (--prefer-offline:
 * from the cache this repository's `npm ci` filled): the package's `peerDependencies` make it use
 * the host's, so there is one Kysely, and the host's own `Kysely<TheirTables>` is the plugin's
 * `database` with no cast (two copies fail to compile: `Property '#private' … refers to a different member`).
 */
t.test('a project of its own installs the tarball beside its own Fastify and Kysely: one of each, no cast', async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'team-access-host-'))
  t.teardown(() => rmSync(work, { recursive: true, force: true }))
  const tarball = JSON.parse(npm('pack', '--json', '--ignore-scripts', '--pack-destination', work))[0].filename as string
  const version = (name: string) => (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'host', type: 'module', private: true }))
  execFileSync('npm', ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', `kysely@${version('kysely')}`, `fastify@${version('fastify')}`, join(work, tarball)], { cwd: work, stdio: 'ignore' })
  const copies = (name: string): string[] => {
    const found: string[] = []
    const walk = (dir: string): void => {
      for (const entry of existsSync(dir) ? readdirSync(dir) : []) {
        const path = join(dir, entry)
        if (entry === name) found.push(path)
        if (entry.startsWith('@')) walk(path)
        walk(join(path, 'node_modules'))
      }
    }
    walk(join(work, 'node_modules'))
    return found
  }
  t.same(copies('kysely'), [join(work, 'node_modules', 'kysely')], 'one Kysely: the host\'s')
  t.same(copies('fastify'), [join(work, 'node_modules', 'fastify')], 'one Fastify: the host\'s')
  writeFileSync(join(work, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: true }, include: ['host.ts'] }))
  const host = `
import Fastify from 'fastify'
import { Kysely } from 'kysely'
import teamAccess, { applySeed, connect, migrate, type Caller, type Database, type TeamAccessOptions } from 'team-access'

const { db: opened, close } = await connect({ dataDir: 'memory://' })
// typed with the host's own Kysely (of the plugin's tables and its own), no cast: one Kysely class
type HostTables = { invoices: { id: string } }
const db: Kysely<Database & HostTables> = opened.withTables<HostTables>()
await migrate(db)
await applySeed(db, { users: [{ id: 'user-a', username: 'a' }], organizations: [{ id: 'org-a', name: 'a', teams: [{ name: 'owners', owners: true, members: ['a'] }], workspaces: [{ id: 'ws-a', name: 'a' }] }] })
const options: TeamAccessOptions = { prefix: '/v2', database: db, migrate: false, authenticate: (): Caller => ({ kind: 'user', userId: 'user-a' }) }
const app = Fastify()
await app.register(teamAccess, options)
const list = await app.inject('/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-a')
const access = await app.teamAccess.effectiveAccess({ caller: { kind: 'user', userId: 'user-a' }, workspaceId: 'ws-a' })
console.log(JSON.stringify({ list: list.statusCode, data: list.json().data, access: access.access }))
await app.close()
await close()
`
  writeFileSync(join(work, 'host.ts'), host)
  writeFileSync(join(work, 'host.mjs'), host.replace(/, type Caller, type Database, type TeamAccessOptions/, '').replace(/type HostTables .*\n/, '').replace(/const db: .*\n/, 'const db = opened\n').replace(/const options: TeamAccessOptions =/, 'const options =').replace(/\(\): Caller =>/, '() =>'))
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  execFileSync(process.execPath, [tsc, '-p', work], { cwd: work, encoding: 'utf8' }) // throws with the compiler's output on an error
  t.pass('the host type-checks against the shipped declarations')
  const output = execFileSync(process.execPath, ['host.mjs'], { cwd: work, encoding: 'utf8' })
  t.same(JSON.parse(output.trim().split('\n').pop()!), { list: 200, data: [], access: 'admin' })
})

/**
 * The package as an operator gets it, in a container-like install: the tarball installed with
 * --omit=dev in an empty directory (no TypeScript, no tests), run through its `team-access` bin on
 * an embedded database in a DATA_DIR of its own. --prefer-offline: the dependencies come from the
 * npm cache that this repository's `npm ci` filled.
 */
t.test('installed with --omit=dev: migrate, seed --dry-run, serve, and one process per DATA_DIR', async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'team-access-ops-'))
  t.teardown(() => rmSync(work, { recursive: true, force: true }))
  const tarball = JSON.parse(npm('pack', '--json', '--ignore-scripts', '--pack-destination', work))[0].filename as string
  const app = join(work, 'app')
  mkdirSync(app)
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'ops', private: true }))
  execFileSync('npm', ['install', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', join(work, tarball)], { cwd: app, stdio: 'ignore' })
  t.notOk(existsSync(join(app, 'node_modules', 'typescript')), 'no TypeScript toolchain installed')

  const dataDir = join(work, 'data')
  // the embedded database, whatever the suite runs on
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'info',
    NPM_CONFIG_UPDATE_NOTIFIER: 'false',
    // what this test asks of /readyz is that the process serves: a start beside other processes on a busy
    // machine must not read as overload (load shedding has its own tests)
    LOAD_SHED_EVENT_LOOP_DELAY_MS: '0'
  }
  const teamAccess = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await promisify(execFile)('npx', ['--no-install', 'team-access', ...args], { cwd: app, env, encoding: 'utf8' })
      return { code: 0, stdout, stderr }
    } catch (err) {
      const e = err as { code: number, stdout: string, stderr: string }
      return { code: e.code, stdout: e.stdout, stderr: e.stderr }
    }
  }

  const migrated = await teamAccess('migrate')
  t.equal(migrated.code, 0, migrated.stderr)
  t.match(migrated.stdout, /^migrations: a new database in DATA_DIR \(.+\), made from the build's snapshot with every migration applied: up to date$/m, 'a new DATA_DIR starts from the snapshot')
  const dryRun = await teamAccess('seed', '--dry-run', 'node_modules/team-access/seeds/demo.json')
  t.equal(dryRun.code, 0, dryRun.stderr)
  t.match(dryRun.stdout, /dry run, nothing changed — \d+ to create/)
  t.match(dryRun.stdout, /\+ organization acme/)

  // the bin itself, as an image's CMD runs node: npx would stand between the signal and the service
  const first = spawn(join(app, 'node_modules', '.bin', 'team-access'), ['serve'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(async () => { if (first.exitCode === null) { first.kill('SIGTERM'); await once(first, 'exit') } })
  let log = ''
  first.stdout.on('data', (d) => { log += d })
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(log)
      if (m !== null) { clearInterval(timer); resolve(Number(m[1])) }
    }, 50)
    first.once('exit', (code) => { clearInterval(timer); reject(new Error(`the first service exited (${code}): ${log}`)) })
  })
  const ready = async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status
  t.equal(await ready(), 200, 'the first service serves')

  const second = await teamAccess('serve')
  t.not(second.code, 0, 'a second service on the same DATA_DIR exits non-zero')
  t.match(second.stderr, /in use by another team-access process \(pid \d+ on this host, .*team-access serve/, 'naming the holder')
  const seeding = await teamAccess('seed', 'node_modules/team-access/seeds/demo.json')
  t.not(seeding.code, 0, 'so does a seed')
  t.match(seeding.stderr, /change a running service through its API, or stop it first/)
  t.equal(await ready(), 200, 'the first keeps serving')
  t.equal(first.exitCode, null)

  first.kill('SIGTERM')
  const [code] = await once(first, 'exit') as [number | null]
  t.equal(code, 0, 'SIGTERM closes it gracefully')
  t.notOk(existsSync(join(dataDir, '.team-access.lock')), 'and it gives the directory back')
  const after = await teamAccess('seed', 'node_modules/team-access/seeds/demo.json')
  t.equal(after.code, 0, after.stderr)
  t.match(after.stdout, /^seed node_modules\/team-access\/seeds\/demo.json: applied/, 'and the next process may have it')
})

/**
 * `npm start` and the image run the service with the same Node flags (README, "Node's own flags"):
 * one list, read from both files, so the bench (which starts the service with `npm start`'s flags)
 * measures what the image runs too.
 */
t.test('npm start and the image start the service with the same Node flags', async (t) => {
  const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/)
  const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(root, 'Dockerfile'), 'utf8'))
  t.ok(cmd, 'the Dockerfile has a CMD in exec form')
  t.same(JSON.parse(cmd![1]!), start, 'the same command, word for word')
  t.ok(start.includes('--max-semi-space-size=4') && start.includes('--v8-pool-size=1'), start.join(' '))
})
