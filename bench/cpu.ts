import { readdirSync, readFileSync } from 'node:fs'

/**
 * CPU time, from /proc: a process's (all its threads), and the PostgreSQL server's (every process
 * named `postgres`, whoever runs it: /proc/<pid>/stat is readable by any user). Milliseconds.
 *
 * A backend that exits during a measured run takes its time with it; the postmaster, its parent,
 * then counts it in its cutime/cstime: so every postgres process counts utime + stime + cutime +
 * cstime (a backend has no children of its own). The server is the machine's: other work on it
 * during a run counts too — a figure to compare within a run, with a floor measured the same way.
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

/** The PostgreSQL server's CPU, ms: every `postgres` process's own and its reaped children's. */
export function postgresCpuMs (): number {
  let ticks = 0
  for (const entry of readdirSync('/proc')) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue
    const fields = statFields(entry)
    if (fields?.[0] !== 'postgres') continue
    ticks += Number(fields[UTIME]) + Number(fields[UTIME + 1]) + Number(fields[UTIME + 2]) + Number(fields[UTIME + 3])
  }
  return ticks * TICK_MS
}

/** Whether this machine shows a PostgreSQL server's processes (a server elsewhere, or in a container, does not). */
export function postgresVisible (): boolean {
  return postgresCpuMs() > 0
}

export interface CpuMark { node: number, pg: number }

/** A mark before a run; `perRequest` after it gives the CPU per request of each side, ms. */
export function cpuMark (pid: number): CpuMark {
  return { node: processCpuMs(pid), pg: postgresCpuMs() }
}

export function perRequest (pid: number, before: CpuMark, requests: number): CpuMark {
  const after = cpuMark(pid)
  const n = Math.max(requests, 1)
  return { node: (after.node - before.node) / n, pg: (after.pg - before.pg) / n }
}
