import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { once } from 'node:events'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { projectFile } from '../src/project-file.js'
import { freePort, freshLocation } from './helper.js'
import { connect } from '../src/db/connect.js'
import { directory } from '../src/directory/host-directory.js'

/**
 * The README's embedding example is a whole program that a host can paste: its block (the first
 * `ts` block under "Embedding it in your Fastify app") compiles as a host's strictest project would
 * compile it — `strict`, `exactOptionalPropertyTypes`, against the package's declarations, the
 * package imported by its name — and, on PostgreSQL (DATABASE_URL), runs: the plugin under its
 * prefix with the host's authentication (401 without the header), the host's own routes asking
 * effectiveAccess and explain, the OpenAPI document under the prefix.
 */
const run = promisify(execFile)

function readmeBlock (heading: string, language: string): string {
  const readme = readFileSync(projectFile('README.md'), 'utf8')
  const section = readme.slice(readme.indexOf(heading))
  const start = section.indexOf(`\`\`\`${language}\n`)
  if (start < 0) throw new Error(`no ${language} block under ${heading}`)
  const body = section.slice(start + language.length + 4)
  return body.slice(0, body.indexOf('\n```') + 1)
}

t.test('the README’s embedding block compiles under strict and exactOptionalPropertyTypes, and runs on PostgreSQL', async (t) => {
  // inside the package (scratch/ is ignored by git): `team-access` resolves to this package by its name
  const dir = projectFile(`scratch/readme-host-${process.pid}`)
  mkdirSync(dir, { recursive: true })
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'host.ts'), readmeBlock('## Embedding it in your Fastify app', 'ts'))
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, exactOptionalPropertyTypes: true, skipLibCheck: true, rootDir: '.', outDir: 'out' },
    files: ['host.ts']
  }))
  const tsc = projectFile('node_modules/typescript/bin/tsc')
  try {
    await run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: dir })
    t.pass('tsc: no error')
  } catch (err) {
    const e = err as { stdout?: string, stderr?: string }
    t.fail(`tsc: ${e.stdout ?? ''}${e.stderr ?? ''}`)
    return
  }

  if (process.env.DATABASE_URL === undefined) {
    t.comment('no DATABASE_URL: compiled only (the PostgreSQL run of the suite runs it)')
    return
  }
  const location = await freshLocation(t)
  const port = await freePort()
  const env: Record<string, string | undefined> = { ...process.env, DATABASE_URL: (location as { url: string }).url, PORT: String(port) }
  delete env.REDIS_URL
  const host = spawn(process.execPath, [join(dir, 'out', 'host.js')], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  host.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  host.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  t.teardown(async () => { if (host.exitCode === null) { host.kill('SIGTERM'); await once(host, 'exit') } })

  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 150 && !output.includes('Server listening'); i++) {
    if (host.exitCode !== null) break
    await sleep(100)
  }
  if (!output.includes('Server listening')) {
    t.fail(`the host did not start: ${output}`)
    return
  }
  const ann = { 'x-user-id': 'user-DemoAlice0000001' }
  const list = await fetch(`${base}/tfe/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-DemoProduction01`, { headers: ann })
  t.equal(list.status, 200, 'the plugin under the prefix, with the host’s authentication')
  t.equal((await list.json() as { data: unknown[] }).data.length, 1, 'the seed’s grant')
  const anonymous = await fetch(`${base}/tfe/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-DemoProduction01`)
  t.equal(anonymous.status, 401, 'no header: 401, not an anonymous user')
  t.equal((await fetch(`${base}/workspaces/ws-DemoProduction01/apply`, { method: 'POST', headers: ann })).status, 200, 'the host’s route: the owner may apply')
  t.equal((await fetch(`${base}/workspaces/ws-DemoProduction01/apply`, { method: 'POST', headers: { 'x-user-id': 'user-DemoBob000000001' } })).status, 403, 'a planner may not')
  const why = await fetch(`${base}/workspaces/ws-DemoProduction01/why`, { headers: ann })
  t.equal(why.status, 200)
  t.ok((await why.json() as unknown[]).length >= 2, 'every team that holds access, and why')
  // the page's request (ui: true): a token of the plugin's as Authorization: Bearer, through the host's authenticate
  const connection = await connect(location)
  const { secret } = await directory(connection.db).createToken({ userId: 'user-DemoAlice0000001' }, { description: 'the page' })
  await connection.close()
  const page = await fetch(`${base}/tfe/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-DemoProduction01`, { headers: { authorization: `Bearer ${secret}` } })
  t.equal(page.status, 200, 'a bearer token of the plugin’s: the page works beside the host’s header')
  t.equal((await fetch(`${base}/tfe/api/v2/ui/`)).status, 200, 'the page itself')
  t.equal((await fetch(`${base}/tfe/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-DemoProduction01`, { headers: { authorization: 'Bearer not-a-token' } })).status, 401, 'an unknown token: 401')
  const openapi = await fetch(`${base}/tfe/api/v2/openapi.json`)
  t.equal(openapi.status, 200, 'the OpenAPI document under the prefix, no token needed')
  const paths = Object.keys((await openapi.json() as { paths: Record<string, unknown> }).paths)
  t.ok(paths.length > 10 && paths.every((path) => path.startsWith('/tfe/api/v2/')), 'its paths under the prefix')
})
