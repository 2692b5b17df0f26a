import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { reviewWorld } from '../../bench/review-world.js'
import { projectFile } from '../../src/project-file.js'
import { build, freePort } from '../helper.js'

/**
 * The mirror as an operator runs it on the embedded database (DESIGN §13.1): the built bin with the
 * service stopped — `mirror --dry-run`, `mirror`, `token --organization` — and the service's own
 * schedule (MIRROR_*), with its /metrics and its one log line; a token that cannot read the whole
 * organization applies nothing; the token the mirror reads with is in no output, log or file.
 */
const BIN = projectFile('dist/src/bin.js')
const SERVER = projectFile('dist/src/server.js')

interface Ran { code: number | null, out: string }
async function bin (args: string[], env: Record<string, string>): Promise<Ran> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH!, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const [code] = await once(child, 'exit') as [number | null]
  return { code, out }
}

/** Every file under `dir`, as text: where a secret must not be. */
const filesText = (dir: string): string => readdirSync(dir, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile()).map((entry) => readFileSync(join(entry.parentPath, entry.name)).toString('latin1')).join('\n')

t.test('the bin with the service stopped, then the service\'s schedule, on the embedded database', async (t) => {
  const world = reviewWorld({ teams: 8, workspaces: 12, projects: 2, users: 10, rowsPerTeam: 3, seed: 7 })
  const source = await build(t, { seed: world.document })
  await source.listen({ port: 0, host: '127.0.0.1' })
  const from = `http://127.0.0.1:${(source.server.address() as { port: number }).port}`
  const scratch = mkdtempSync(join(tmpdir(), 'team-access-mirror-bin-'))
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }))
  const env = { DATA_DIR: join(scratch, 'data'), TFE_TOKEN: world.tokens.owner, LOG_LEVEL: 'silent' }
  const outputs: string[] = []
  const ran = async (args: string[], extra: Record<string, string> = {}) => {
    const result = await bin(args, { ...env, ...extra })
    outputs.push(result.out)
    return result
  }

  const flag = await ran(['mirror', '--from', from, '--organization', 'review', '--token', world.tokens.owner])
  t.equal(flag.code, 2, 'a token as a flag\'s value is refused')
  t.match(flag.out, /never a flag's value/)

  await ran(['migrate'])
  const dry = await ran(['mirror', '--from', from, '--organization', 'review', '--dry-run'])
  t.equal(dry.code, 0, dry.code === 0 ? 'exit 0' : dry.out)
  t.match(dry.out, /mirror review from 127\.0\.0\.1:\d+: would create \d+/)

  const refused = await ran(['mirror', '--from', from, '--organization', 'review'], { TFE_TOKEN: world.tokens.member })
  t.equal(refused.code, 1, 'a member\'s token reads part of the organization: refused')
  t.match(refused.out, /failed, nothing applied/)

  const real = await ran(['mirror', '--from', from, '--organization', 'review'])
  t.equal(real.code, 0, real.code === 0 ? 'exit 0' : real.out)
  t.match(real.out, /mirror review from 127\.0\.0\.1:\d+: created \d+/)
  const again = await ran(['mirror', '--from', from, '--organization', 'review'])
  t.match(again.out, /nothing changed/, 'a second run finds nothing changed')

  const token = await ran(['token', '--organization', 'review'])
  t.equal(token.code, 0, token.code === 0 ? 'exit 0' : token.out)
  t.match(token.out, /^[\w-]+\.atlasv1\.[\w-]+$/m, 'the organization token, printed once, on a line of its own')

  // the service mirrors on its own schedule: the first run at start
  const tokenFile = join(scratch, 'tfe-token')
  writeFileSync(tokenFile, `${world.tokens.owner}\n`, { mode: 0o600 })
  const port = await freePort()
  const service = spawn(process.execPath, [SERVER], {
    env: { PATH: process.env.PATH!, DATA_DIR: join(scratch, 'scheduled'), PORT: String(port), LOG_LEVEL: 'info', MIRROR_FROM: from, MIRROR_ORGANIZATION: 'review', MIRROR_TOKEN_FILE: tokenFile, MIRROR_INTERVAL: '1h' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let log = ''
  service.stdout.on('data', (chunk: Buffer) => { log += chunk.toString() })
  service.stderr.on('data', (chunk: Buffer) => { log += chunk.toString() })
  t.teardown(() => { service.kill('SIGKILL') })
  for (let i = 0; i < 300 && !/"msg":"mirror review from/.test(log); i++) await new Promise((resolve) => setTimeout(resolve, 100))
  t.match(log, /"msg":"mirror review from 127\.0\.0\.1:\d+: created \d+/, 'the run\'s one log line')
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  t.match(metrics, /team_access_mirror_last_success_timestamp_seconds\{organization="review"\} \d/, '/metrics: the last success')
  t.match(metrics, /team_access_mirror_last_success_requests\{organization="review"\} [1-9]/, '/metrics: its requests')
  service.kill('SIGTERM')
  await once(service, 'exit')

  t.notOk([...outputs, log].some((text) => text.includes(world.tokens.owner)), 'the token in no output or log line')
  t.notOk(filesText(join(scratch, 'data')).includes(world.tokens.owner), 'nor in the embedded database\'s files')
})
