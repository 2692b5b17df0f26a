import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { projectFile } from '../src/project-file.js'
import { LOCK_FILE } from '../src/db/data-dir-lock.js'
import { recordFigure } from '../test/hardening/figures.js'
import { throwawayPostgres } from './throwaway-postgres.js'

/**
 * Issue 43, item 10: a process that never exits once its output is gone. The built server
 * (`node dist/src/server.js`, as a container runs it), on each engine — its embedded database in
 * a DATA_DIR of the test's own (so that its lock is real), and a PostgreSQL of the test's own:
 * - its logs piped to a reader that is killed 20 ms after the server's SIGTERM (a log shipper, a
 *   shell pipeline, a test harness): pino's destination retried `write(1) = EPIPE` forever at
 *   exit, deaf to every further signal;
 * - run under a pseudo-terminal (`script`) whose terminal closes (its `script` killed: the master
 *   side closes, the server gets SIGHUP and EIO on its writes): the process span at full CPU in a
 *   SIGSEGV handler of close-with-grace's, returning into the faulting instruction, forever.
 * Either way the server must exit within 10 s of the signal, its port free, its DATA_DIR lock gone.
 */
const PORT = 3600 + (process.pid % 100)
// below the ephemeral range, and apart from the other fault tests' servers
const PG_PORT = 25582 + (process.pid % 50)
const SERVER = projectFile('dist/src/server.js')
const LIMIT_MS = 10_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const postgres = throwawayPostgres(PG_PORT)
t.teardown(() => postgres.remove())

interface Engine { name: 'pglite' | 'postgres', env: Record<string, string>, lockFile?: string }

function engine (t: Test, name: Engine['name']): Engine {
  if (name === 'postgres') return { name, env: { DATABASE_URL: postgres.url } }
  const dir = mkdtempSync(join(tmpdir(), 'team-access-lost-output-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return { name, env: { DATA_DIR: join(dir, 'data') }, lockFile: join(dir, 'data', LOCK_FILE) }
}

const environment = (engine: Engine) => ({ PATH: process.env.PATH ?? '', PORT: String(PORT), LOG_LEVEL: 'info', RATE_LIMIT: '0', ...engine.env })

/** Whether `pid` still runs: a process exists and is not a zombie. */
function running (pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0] !== 'Z'
  } catch {
    return false
  }
}

/** The processes whose parent is `pid`. */
function childrenOf (pid: number): number[] {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).map(Number).filter((child) => {
    try { return readFileSync(`/proc/${child}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1] === String(pid) } catch { return false }
  })
}

/** Kills `pid` (-9) in teardown if it still runs: a failure never leaves a spinning process. */
function killInTeardown (t: Test, pid: number | undefined): void {
  t.teardown(() => { if (pid !== undefined && running(pid)) { try { process.kill(pid, 'SIGKILL') } catch {} } })
}

async function waitReady (pid: number): Promise<void> {
  for (let i = 0; ; i++) {
    try { if ((await fetch(`http://127.0.0.1:${PORT}/readyz`)).status === 200) return } catch {}
    if (i > 300 || !running(pid)) throw new Error('the server did not start')
    await sleep(100)
  }
}

/** ms until `pid` no longer runs, or undefined past LIMIT_MS. */
async function exitWithin (pid: number, from: number): Promise<number | undefined> {
  while (Date.now() - from <= LIMIT_MS) {
    if (!running(pid)) return Date.now() - from
    await sleep(20)
  }
  return undefined
}

/** A new listener on the server's port can be opened. */
async function portFree (): Promise<boolean> {
  const listener = createServer()
  return await new Promise((resolve) => {
    listener.once('error', () => resolve(false))
    listener.listen(PORT, '127.0.0.1', () => listener.close(() => resolve(true)))
  })
}

/** The server gone within 10 s of the signal, its port free and its lock gone. */
async function assertStopped (t: Test, engine: Engine, pid: number, signalled: number, what: string, bar: string): Promise<void> {
  const ms = await exitWithin(pid, signalled)
  t.ok(ms !== undefined, `the process exited within 10 s of the signal (${ms ?? 'still running after 10 s'}${ms === undefined ? '' : ' ms'})`)
  if (ms === undefined) return
  t.ok(await portFree(), 'its port is free: a new listener opens on it')
  if (engine.lockFile !== undefined) t.notOk(existsSync(engine.lockFile), 'its DATA_DIR lock is gone')
  await recordFigure(`${what} (${engine.name})`, `exit ${(ms / 1000).toFixed(2)} s after the signal; port free${engine.lockFile === undefined ? '' : ', DATA_DIR lock released'}`, bar)
}

for (const name of ['pglite', 'postgres'] as const) {
  t.test(`${name}: the log reader gone during shutdown`, async (t) => {
    const db = engine(t, name)
    // the reader holds the pipe's read end, the server its write end; the test neither
    const reader = spawn('cat', [], { stdio: ['pipe', 'ignore', 'ignore'] })
    killInTeardown(t, reader.pid)
    const server: ChildProcess = spawn(process.execPath, [SERVER], { env: environment(db), stdio: ['ignore', reader.stdin!, reader.stdin!] })
    reader.stdin!.destroy()
    killInTeardown(t, server.pid)
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)))
    await waitReady(server.pid!)

    server.kill('SIGTERM')
    const signalled = Date.now()
    await sleep(20)
    reader.kill('SIGKILL')
    await assertStopped(t, db, server.pid!, signalled, 'lost output: the log reader gone during shutdown',
      'SIGTERM, the reader of stdout killed 20 ms later: exit within 10 s, port and lock freed')
    if (!running(server.pid!)) t.equal(await exited, 0, 'it exited 0: drained, not killed by its own EPIPE')
  })

  t.test(`${name}: the service under a pseudo-terminal whose terminal closes`, async (t) => {
    const db = engine(t, name)
    // script(1) runs the server on a pty of its own: its stdout is a terminal, as under `npm start`
    const terminal = spawn('script', ['-qfc', `exec '${process.execPath}' '${SERVER}'`, '/dev/null'], { env: environment(db), stdio: ['pipe', 'pipe', 'ignore'] })
    killInTeardown(t, terminal.pid)
    terminal.stdout!.resume()
    let pid: number | undefined
    for (let i = 0; pid === undefined; i++) {
      if (i > 100) throw new Error('script did not start the server')
      pid = childrenOf(terminal.pid!).find((child) => {
        try { return readFileSync(`/proc/${child}/cmdline`, 'utf8').includes(SERVER) } catch { return false }
      })
      if (pid === undefined) await sleep(50)
    }
    killInTeardown(t, pid)
    await waitReady(pid)

    // the terminal closes: its master side goes with the script process
    terminal.kill('SIGKILL')
    const signalled = Date.now()
    await assertStopped(t, db, pid, signalled, 'lost output: the terminal closes',
      'the pty of `script` closed under the server: exit within 10 s, port and lock freed')
  })
}
