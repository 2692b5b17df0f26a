import { closeSync, writeSync } from 'node:fs'
import { isatty } from 'node:tty'

/**
 * Standard output as the service's log destination: a line that cannot be written is dropped,
 * never retried forever, and an output found gone is said once, so that the service can stop.
 *
 * pino's own destination (sonic-boom) retries a failed write until it succeeds: its flush at
 * exit loops on EPIPE (a reader that left: a log shipper, a shell pipeline, a test harness) with
 * a 100 ms wait between tries, forever, deaf to every signal — the process never exits and its
 * port stays taken. Here:
 * - a full pipe (EAGAIN: the reader is slow, not gone) keeps the lines, up to `QUEUE_MAX_BYTES`
 *   (more are dropped and counted), and tries again on a timer that never holds the process open;
 * - any other error (EPIPE: the reader is gone; EIO: the terminal closed) loses the output: what
 *   is queued and every later line are dropped, and `onLost`'s listeners hear it, once;
 * - at exit, what is still queued gets one bounded try (`EXIT_FLUSH_MS` of a full pipe at most).
 */
export interface LogOutput {
  write: (line: string) => void
  /** Calls `listener` (on a later tick) when the output is found gone; at once if it already is. */
  onLost: (listener: (err: NodeJS.ErrnoException) => void) => void
  /** Whether the output is gone. */
  readonly lost: boolean
  /** Lines dropped: past the queue's bound, or after the output was lost. */
  readonly dropped: number
}

const QUEUE_MAX_BYTES = 4 * 1024 * 1024
const RETRY_MS = 20
const EXIT_FLUSH_MS = 200

let standard: LogOutput | undefined

/** The process's standard output (file descriptor 1), one writer for the whole process. */
export function standardOutput (): LogOutput {
  standard ??= fdOutput(1)
  return standard
}

/** A log destination on an open file descriptor (a pipe, a terminal, a file). */
export function fdOutput (fd: number): LogOutput {
  const queue: Buffer[] = []
  let queued = 0
  let lost: NodeJS.ErrnoException | undefined
  let dropped = 0
  let timer: NodeJS.Timeout | undefined
  const listeners: Array<(err: NodeJS.ErrnoException) => void> = []

  const lose = (err: NodeJS.ErrnoException) => {
    if (lost !== undefined) return
    lost = err
    dropped += queue.length
    queue.length = 0
    queued = 0
    if (timer !== undefined) clearTimeout(timer)
    // never from inside the log call that found it: the listener may log, or close the service
    for (const listener of listeners.splice(0)) process.nextTick(listener, err)
  }

  /** Writes what is queued, in order; false when the pipe is full (EAGAIN) and some remains. */
  const flush = (): boolean => {
    while (queue.length > 0) {
      const head = queue[0]!
      let written: number
      try {
        written = writeSync(fd, head)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return false
        lose(err as NodeJS.ErrnoException) // and the queue with it
        return true
      }
      queued -= written
      if (written >= head.length) queue.shift()
      else queue[0] = head.subarray(written)
    }
    return true
  }

  const retry = () => {
    timer = undefined
    if (!flush()) schedule()
  }
  const schedule = () => {
    if (timer !== undefined || lost !== undefined) return
    timer = setTimeout(retry, RETRY_MS)
    // a log line waiting for a slow reader never keeps the process alive
    timer.unref()
  }

  process.on('exit', () => {
    if (timer !== undefined) clearTimeout(timer)
    const until = Date.now() + EXIT_FLUSH_MS
    // no event loop now: a full pipe is waited on synchronously, briefly
    const wait = new Int32Array(new SharedArrayBuffer(4))
    while (!flush() && Date.now() < until) Atomics.wait(wait, 0, 0, 5)
  })

  return {
    write: (line) => {
      if (lost !== undefined) {
        dropped++
        return
      }
      const bytes = Buffer.from(line)
      if (queued + bytes.length > QUEUE_MAX_BYTES) {
        dropped++
        return
      }
      queue.push(bytes)
      queued += bytes.length
      // lines queued before this one go first: only the write that found the queue empty flushes
      if (queue.length === 1 && !flush()) schedule()
    },
    onLost: (listener) => {
      if (lost !== undefined) process.nextTick(listener, lost)
      else listeners.push(listener)
    },
    get lost () { return lost !== undefined },
    get dropped () { return dropped }
  }
}

/**
 * A process whose terminal closed exits without aborting. At exit Node sets each of standard
 * input, output and error that was a terminal at start back to its start state (ResetStdio), and
 * on Node 20 here aborts when that fails — as it does with EIO on a terminal that hung up (its
 * `script`, its terminal window gone): an assertion, a crash dump, the DATA_DIR lock left behind.
 * Node skips a descriptor the program closed: one that was a terminal at start and no longer
 * answers as one (a hung-up terminal refuses every ioctl) is closed on the way out.
 */
export function closeHungUpTerminalsAtExit (): void {
  const terminals = [0, 1, 2].filter((fd) => isatty(fd))
  if (terminals.length === 0) return
  process.on('exit', () => {
    for (const fd of terminals) {
      if (isatty(fd)) continue
      try { closeSync(fd) } catch {}
    }
  })
}
