import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { projectFile } from '../src/project-file.js'
import { freePort } from './helper.js'

/**
 * The README's shell blocks run as a newcomer pastes them: every `sh` block, in the order written,
 * in one bash (so a variable set in one block is there in the next), from the clone's root, failing
 * on the first command that exits non-zero (`set -euo pipefail`; the blocks' curls use
 * `--fail-with-body`). What differs from a person's terminal, and only that:
 * - `npm start` starts the service in the background (`node dist/src/server.js`, the build `npm test`
 *   just made) and waits until it is ready; a second `npm start` stops the first. `npm run seed` and
 *   `npm run migrate` run the same build's bin. `npm ci` and `npm test` are this run's own: skipped.
 * - The service listens on a free port: `127.0.0.1:3000` in the blocks is that port, and the
 *   PostgreSQL block's database `team_access_try` is this run's own name. Its embedded
 *   database is in a scratch directory (DATA_DIR), and no setting of this process's leaks in.
 * - HCP Terraform (`https://app.terraform.io`) is this service standing in for it: a second one,
 *   seeded with the organization `my-org` (test/mirror/fixtures/hcp-stand-in.json), and TFE_TOKEN
 *   is its owner's token. The review's own files (`./review-data`, `reviewer-token`) are removed.
 * - A block preceded by `<!-- readme-test: skip — why -->` is not run; the test lists them.
 * The PostgreSQL block makes its database with `createdb` (dropped before and after).
 */
interface Block { line: number, text: string, skip?: string }

function shellBlocks (): Block[] {
  const lines = readFileSync(projectFile('README.md'), 'utf8').split('\n')
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```sh') continue
    const end = lines.indexOf('```', i + 1)
    const marker = /^<!-- readme-test: skip — (.+) -->$/.exec(lines[i - 1] ?? '')
    blocks.push({ line: i + 1, text: lines.slice(i + 1, end).join('\n'), ...(marker === null ? {} : { skip: marker[1]! }) })
    i = end
  }
  return blocks
}

// the README's database name, made this run's own (runs side by side never share it)
const TRY_DATABASE = `team_access_try_${process.pid}`

async function dropTryDatabase (): Promise<void> {
  const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' })
  await admin.connect()
  try {
    await admin.query(`drop database if exists ${TRY_DATABASE} with (force)`)
  } finally {
    await admin.end()
  }
}

t.test('every sh block of the README runs, in order, as pasted', async (t) => {
  const root = projectFile('')
  const scratch = projectFile(`scratch/readme-sh-${process.pid}`)
  mkdirSync(scratch, { recursive: true })
  const port = await freePort()
  const standInPort = await freePort()
  await dropTryDatabase()
  t.teardown(async () => {
    await dropTryDatabase()
    rmSync(scratch, { recursive: true, force: true })
    for (const file of ['set.json', 'plan.json', 'reviewer-token', 'review-data']) rmSync(join(root, file), { recursive: true, force: true })
  })

  const blocks = shellBlocks()
  t.ok(blocks.length >= 10, `${blocks.length} sh blocks`)
  const run = blocks.filter((block) => block.skip === undefined)
  t.comment(`not run: ${blocks.filter((b) => b.skip !== undefined).map((b) => `line ${b.line} (${b.skip!})`).join('; ')}`)

  const prelude = `set -euo pipefail
unset DATABASE_URL REDIS_URL SEED_FILE HOST LOG_LEVEL DATABASE_SCHEMA
export DATA_DIR=${JSON.stringify(join(scratch, 'data'))} PORT=${port}
# HCP Terraform's stand-in: this service with the organization my-org, its owner's token in TFE_TOKEN
DATA_DIR=memory:// PORT=${standInPort} SEED_FILE=test/mirror/fixtures/hcp-stand-in.json node dist/src/server.js > ${JSON.stringify(join(scratch, 'stand-in.log'))} 2>&1 &
__standin=$!
export TFE_TOKEN=stand-in-owner-token
__service=
__stop () { if [ -n "$__service" ]; then kill "$__service" 2>/dev/null || true; wait "$__service" 2>/dev/null || true; __service=; fi; }
trap '__stop; kill "$__standin" 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do curl -sf -o /dev/null http://127.0.0.1:${standInPort}/readyz && break; sleep 0.1; done
__start () {
  __stop
  node dist/src/server.js >> ${JSON.stringify(join(scratch, 'service.log'))} 2>&1 &
  __service=$!
  for _ in $(seq 1 300); do
    if curl -sf -o /dev/null http://127.0.0.1:${port}/readyz; then echo "readme-test: the service is ready"; return 0; fi
    kill -0 "$__service" 2>/dev/null || { echo "readme-test: the service exited"; tail -n 20 ${JSON.stringify(join(scratch, 'service.log'))}; return 1; }
    sleep 0.1
  done
  echo "readme-test: the service is not ready after 30 s"; return 1
}
npm () {
  case "$1" in
    ci|test) echo "readme-test: npm $1 is this run's own: skipped" ;;
    start) __start ;;
    run) shift; local script=$1; shift; [ "\${1:-}" = "--silent" ] && shift; [ "\${1:-}" = "--" ] && shift; node dist/src/bin.js "$script" "$@" ;;
    *) command npm "$@" ;;
  esac
}
`
  const script = prelude + run.map((block) => `echo "== README block at line ${block.line}"\n${block.text.replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`).replaceAll('team_access_try', TRY_DATABASE).replaceAll('https://app.terraform.io', `http://127.0.0.1:${standInPort}`)}\n`).join('\n') + 'echo "== every block ran"\n'
  const shell = spawn('bash', ['-c', script], { cwd: root, env: { ...process.env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  shell.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  shell.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const [code] = await once(shell, 'exit') as [number | null]
  const last = output.split('\n').filter((line) => line.startsWith('== README block')).pop()
  t.equal(code, 0, code === 0 ? `${run.length} blocks ran` : `${last ?? 'before the first block'} failed (exit ${String(code)}):\n${output.slice(-4000)}`)
  t.match(output, /== every block ran/)
  t.match(output, /"id":"tws-DemoDevsProd0001"/, 'the quick start’s curl answered the demo data')
  t.match(output, /seed examples\/seed-v2.json: dry run, nothing changed — 5 to create, 0 to change, 11 to remove/, 'the dry run prints what the README shows')
  t.match(output, /mirror my-org from 127\.0\.0\.1:\d+: created \d+/, 'the mirror ran')
  t.match(output, /"mirror":\{"host":"127\.0\.0\.1:\d+","succeeded-at":/, 'the mirrored organization, read with the reviewer\'s token')
})
