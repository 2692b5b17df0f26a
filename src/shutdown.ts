import { Server } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

export interface DrainOptions {
  /** The listener closes once no new connection has arrived for this long, ms. */
  quietMs?: number
  /** ... or this long after the drain began, whatever keeps arriving, ms. */
  maxMs?: number
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
 */
export async function drainListener (server: Server, options: DrainOptions = {}): Promise<{ ms: number, connections: number }> {
  const quietMs = options.quietMs ?? 500
  const maxMs = options.maxMs ?? 3000
  const began = Date.now()
  let last = began
  let connections = 0
  const arrived = () => { last = Date.now(); connections++ }
  server.on('connection', arrived)
  try {
    for (;;) {
      const now = Date.now()
      const wait = Math.min(last + quietMs, began + maxMs) - now
      if (wait > 0) {
        await sleep(wait)
        continue
      }
      if (now - began >= maxMs) break
      const before = connections
      await pollPhase()
      if (connections === before) break
    }
  } finally {
    server.off('connection', arrived)
  }
  // net.Server's close: stop listening, leave open connections alone (http.Server's would drop idle ones)
  if (server.listening) Server.prototype.close.call(server)
  await pollPhase()
  await sleep(50)
  await pollPhase()
  return { ms: Date.now() - began, connections }
}
