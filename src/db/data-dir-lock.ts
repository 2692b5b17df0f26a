import { closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, utimesSync, writeSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'

/**
 * One process at a time on an embedded database directory. PGlite does not check: two processes
 * on one DATA_DIR each run their own PostgreSQL over the same files, and neither sees what the
 * other writes (a seed run beside the service "succeeds", and the service never sees it) — or
 * the files are damaged. So the directory holds `.team-access.lock` while a process has it open:
 * who holds it (pid, host, command, since when), touched every few seconds while held.
 *
 * A lock is the holder's until it is released — unless its holder is gone: on the same host, a
 * pid that no longer runs (or our own pid: a container restarted, whose pid 1 is us again); on
 * another host sharing the directory, a lock not touched for `STALE_MS`. A process that crashed
 * thus leaves nothing to clean by hand on the same host, and at most half a minute elsewhere.
 */
export const LOCK_FILE = '.team-access.lock'
const TOUCH_EVERY_MS = 10_000
const STALE_MS = 30_000

export interface Holder { pid: number, host: string, command: string, since: string, nonce: string }

export class DataDirInUse extends Error {
  constructor (readonly directory: string, readonly holder: Holder | null) {
    const who = holder === null
      ? 'another process'
      : `another team-access process (pid ${holder.pid} on ${holder.host === hostname() ? 'this host' : `host ${holder.host}`}, \`${holder.command}\`, since ${holder.since})`
    super(`the embedded database in ${directory} is in use by ${who}. One process at a time: ` +
      'change a running service through its API, or stop it first' +
      ` (if no such process runs, remove ${join(directory, LOCK_FILE)})`)
  }
}

export interface DataDirLock {
  /** Gives the directory back (only if the lock is still ours). Once; later calls do nothing. */
  release: () => void
}

/** Takes the directory (creating it), or throws DataDirInUse naming the holder. */
export function lockDataDir (directory: string): DataDirLock {
  mkdirSync(directory, { recursive: true })
  const file = join(directory, LOCK_FILE)
  const me: Holder = {
    pid: process.pid,
    host: hostname(),
    command: [process.argv0, ...process.argv.slice(1).map((arg) => arg.split('/').slice(-3).join('/'))].join(' '),
    since: new Date().toISOString(),
    nonce: randomUUID()
  }
  if (!create(file, me)) {
    const holder = read(file)
    // no holder readable: one being written this very moment, unless it was left long ago
    if (holder === null ? !stale(file) : !gone(holder, file)) throw new DataDirInUse(directory, holder)
    // the holder is gone: its lock moves aside (one taker wins the rename), and ours is made
    const aside = `${file}.${me.nonce}`
    try {
      renameSync(file, aside)
      unlinkSync(aside)
    } catch {}
    if (!create(file, me)) throw new DataDirInUse(directory, read(file))
  }
  const timer = setInterval(() => {
    try {
      const now = new Date()
      utimesSync(file, now, now)
    } catch {}
  }, TOUCH_EVERY_MS)
  timer.unref()
  let held = true
  return {
    release: () => {
      if (!held) return
      held = false
      clearInterval(timer)
      try {
        if (read(file)?.nonce === me.nonce) unlinkSync(file)
      } catch {}
    }
  }
}

/** Creates the lock file with `holder` in it; false when one is there already. */
function create (file: string, holder: Holder): boolean {
  let fd: number
  try {
    fd = openSync(file, 'wx', 0o644)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
  try {
    writeSync(fd, `${JSON.stringify(holder)}\n`)
  } finally {
    closeSync(fd)
  }
  return true
}

function read (file: string): Holder | null {
  try {
    const holder = JSON.parse(readFileSync(file, 'utf8')) as Holder
    return typeof holder.pid === 'number' && typeof holder.host === 'string' ? holder : null
  } catch {
    return null // half-written by a process that died, or removed meanwhile
  }
}

/** Whether the process that holds the lock is no more. */
function gone (holder: Holder, file: string): boolean {
  if (holder.host === hostname()) return holder.pid === process.pid || !running(holder.pid)
  return stale(file)
}

/** Not touched for STALE_MS: its holder stopped touching it. */
function stale (file: string): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs > STALE_MS
  } catch {
    return true
  }
}

function running (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' // it runs, as another user
  }
}
