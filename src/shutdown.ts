import { readFileSync } from 'node:fs'
import { Server, type AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

export interface DrainOptions {
  /** The listener closes once no new connection has arrived for this long, ms. */
  quietMs?: number
  /** ... or this long after the drain began, whatever keeps arriving, ms. */
  maxMs?: number
  /**
   * ... but not before the connections the kernel had queued when the drain began are taken —
   * unless this long has passed, ms.
   */
  backlogMaxMs?: number
}

/** A turn of the event loop that includes its poll phase: sockets with data ready get read. */
const pollPhase = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * Before a closing server stops listening, it takes what is already queued for it.
 *
 * A connection the kernel has completed but the process has not yet accepted (its event loop
 * busy with other requests) is reset when the listener closes; and Node's `server.close()` drops
 * every connection it sees as idle — which includes one whose request is still unread in its
 * socket. So: keep accepting (and answering: every answer now says `Connection: close`) until no
 * new connection has arrived for `quietMs` — the load balancer, told by /readyz, has stopped
 * sending — or `maxMs` has passed; then close the listener, and give the connections accepted
 * last a moment to be read, so that what remains idle really is idle.
 *
 * A busy event loop runs its timers before it reads its sockets: a quiet period counts only once
 * a poll phase has passed without a new connection.
 *
 * Node takes one queued connection per turn of its event loop, and a turn of a loaded server can
 * last most of a second: a burst of connections can still be queued seconds after the signal.
 * They were opened before it, so `maxMs` does not cut them off: the drain counts what the
 * kernel has queued when it begins (Linux: the listening socket's line in /proc/net/tcp) and
 * keeps the listener open until that many are taken, or `backlogMaxMs` has passed.
 */
export async function drainListener (server: Server, options: DrainOptions = {}): Promise<{ ms: number, connections: number, queued: number }> {
  const quietMs = options.quietMs ?? 500
  const maxMs = options.maxMs ?? 3000
  const backlogMaxMs = Math.max(maxMs, options.backlogMaxMs ?? 6000)
  const began = Date.now()
  let last = began
  let connections = 0
  const arrived = () => { last = Date.now(); connections++ }
  // read at once, before the loop takes another: the queue is first in, first out, so the first
  // `queued` connections taken from here on are the ones it held
  const queued = acceptQueueLength(server)
  // a connection past the server's maxConnections is taken off the queue too, and closed: 'drop'
  server.on('connection', arrived)
  server.on('drop', arrived)
  try {
    for (;;) {
      const now = Date.now()
      const until = began + (connections < queued ? backlogMaxMs : maxMs)
      const wait = Math.min(last + quietMs, until) - now
      if (wait > 0) {
        await sleep(wait)
        continue
      }
      if (now >= until) break
      const before = connections
      await pollPhase()
      if (connections === before) break
    }
  } finally {
    server.off('connection', arrived)
    server.off('drop', arrived)
  }
  // net.Server's close: stop listening, leave open connections alone (http.Server's would drop idle ones)
  if (server.listening) Server.prototype.close.call(server)
  await pollPhase()
  await sleep(50)
  await pollPhase()
  return { ms: Date.now() - began, connections, queued }
}

/**
 * How many connections the kernel has completed for this listener that the process has not yet
 * accepted: the `rx_queue` of its LISTEN line in /proc/net/tcp (or tcp6), found by its local
 * address and port. 0 where there is no such file (not Linux) or no such line. Read once, at the
 * signal: the file lists every socket of the network namespace.
 */
export function acceptQueueLength (server: Server): number {
  const address = server.address()
  if (address === null || typeof address === 'string') return 0
  const { port, family, address: ip } = address as AddressInfo
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0')
  // /proc writes an IPv4 address as its 32 bits in host order (little-endian here): 127.0.0.1 is 0100007F
  const local = family === 'IPv4'
    ? `${ip.split('.').reverse().map((byte) => Number(byte).toString(16).toUpperCase().padStart(2, '0')).join('')}:${hexPort}`
    : undefined
  let text = ''
  try { text = readFileSync(family === 'IPv4' ? '/proc/net/tcp' : '/proc/net/tcp6', 'latin1') } catch {}
  let queued = 0
  for (const line of text.split('\n').slice(1)) {
    // sl local_address rem_address st tx_queue:rx_queue ... — st 0A is LISTEN
    const [, at, , state, queues] = line.trim().split(/\s+/)
    if (state === '0A' && (local === undefined ? at?.endsWith(`:${hexPort}`) === true : at === local)) queued += parseInt(queues?.split(':')[1] ?? '0', 16) || 0
  }
  return queued
}
