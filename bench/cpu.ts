import { readdirSync, readFileSync } from 'node:fs'

/**
 * CPU time, from /proc: a process's (all its threads), and the PostgreSQL server's (processes named
 * `postgres`, whoever runs them: /proc/<pid>/stat and cmdline are readable by any user). Milliseconds.
 *
 * The server is shared with other work on this machine: once `countDatabase` names the bench's
 * database, only its backends (and autovacuum workers) count, with the server's own processes
 * (postmaster, checkpointer, background writer, WAL writer: the writes' flushing is part of their
 * cost); backends of other databases do not. Counted process by process from a mark: a backend
 * that exits during a run (a pool's idle connection closed) takes its time since the mark with it
 * (its parent's cutime would carry every database's), never the time it had before.
 * Without a database named, every postgres process counts, with the postmaster's reaped children.
 */

/** Clock ticks per second of /proc's times (sysconf(_SC_CLK_TCK): 100 on Linux everywhere that matters). */
const TICK_MS = 1000 / 100

/** The fields after the command name (which may hold spaces and brackets) of /proc/<pid>/stat; undefined when the process is gone. */
function statFields (pid: number | string): string[] | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  const close = text.lastIndexOf(')')
  return [text.slice(text.indexOf('(') + 1, close), ...text.slice(close + 2).split(' ')]
}

// after the name: [1] state … [12] utime, [13] stime, [14] cutime, [15] cstime (stat(5) fields 14–17)
const UTIME = 12

/** A process's user + system CPU, ms (0 when it is gone). */
export function processCpuMs (pid: number): number {
  const fields = statFields(pid)
  return fields === undefined ? 0 : (Number(fields[UTIME]) + Number(fields[UTIME + 1])) * TICK_MS
}

let database: string | undefined

/** From now on the PostgreSQL figure counts this database's backends, not other databases'. */
export function countDatabase (name: string | undefined): void {
  database = name
}

/** The database a backend serves, from its title (`postgres: [cluster: ]user database host(port) state`); undefined for the server's own processes. */
function backendDatabase (pid: string): string | undefined {
  let title: string
  try {
    title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim()
  } catch {
    return undefined
  }
  if (!title.startsWith('postgres: ')) return undefined // the postmaster (its command line)
  const rest = title.slice('postgres: '.length).replace(/^\d+\/\S+: /, '')
  const worker = /^autovacuum worker (\S+)/.exec(rest)
  if (worker !== null) return worker[1]
  const backend = /^\S+ (\S+) (?:\S+\(\d+\)|\[local\])/.exec(rest)
  return backend?.[1]
}

/** The PostgreSQL server's CPU by process (pid → ms), to count from (see above for which processes count). */
export type PostgresMark = Map<string, number>

export function postgresMark (): PostgresMark {
  const mark: PostgresMark = new Map()
  for (const entry of readdirSync('/proc')) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue
    const fields = statFields(entry)
    if (fields?.[0] !== 'postgres') continue
    const own = Number(fields[UTIME]) + Number(fields[UTIME + 1])
    if (database === undefined) {
      mark.set(entry, (own + Number(fields[UTIME + 2]) + Number(fields[UTIME + 3])) * TICK_MS)
      continue
    }
    const served = backendDatabase(entry)
    if (served === undefined || served === database) mark.set(entry, own * TICK_MS)
  }
  return mark
}

/**
 * The PostgreSQL server's CPU since `mark`, ms: each process's time since the mark, all of it for
 * one started since. A process gone since the mark (a pool's idle connection closed) takes only
 * its time since the mark with it, not the whole of its time before: a difference of totals would
 * subtract that, and read negative.
 */
export function postgresCpuMsSince (mark: PostgresMark): number {
  let ms = 0
  for (const [pid, now] of postgresMark()) ms += Math.max(0, now - (mark.get(pid) ?? 0))
  return ms
}

/** CPU per request, ms: the service's process (node) and the PostgreSQL server's (pg). */
export interface CpuMark { node: number, pg: number }

/** Where a run's CPU is counted from. */
export interface CpuStart { node: number, pg: PostgresMark }

/** A mark before a run; `perRequest` after it gives the CPU per request of each side, ms. */
export function cpuMark (pid: number): CpuStart {
  return { node: processCpuMs(pid), pg: postgresMark() }
}

export function perRequest (pid: number, before: CpuStart, requests: number): CpuMark {
  const n = Math.max(requests, 1)
  return { node: (processCpuMs(pid) - before.node) / n, pg: postgresCpuMsSince(before.pg) / n }
}
