import { spawn, type ChildProcess } from 'node:child_process'
import { createConnection } from 'node:net'

/**
 * A Redis server of a test's own: the machine's redis-server on its own port, keeping nothing on
 * disk, so that a test may stop it and start it again. The shared server on 6379 is never touched.
 */
const BIN = process.env.REDIS_SERVER ?? 'redis-server'

export interface ThrowawayRedis {
  url: string
  start: () => Promise<void>
  /** Stops it at once (SIGKILL, as a crash or a lost host would) and waits until it is gone. */
  stop: () => Promise<void>
  remove: () => Promise<void>
}

/** Does something answer PING on this port? */
function pong (port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port })
    socket.setTimeout(500)
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (d) => { socket.destroy(); resolve(d.toString().startsWith('+PONG')) })
    socket.on('error', () => resolve(false))
    socket.on('timeout', () => { socket.destroy(); resolve(false) })
  })
}

export async function throwawayRedis (port: number): Promise<ThrowawayRedis> {
  let child: ChildProcess | undefined
  const server: ThrowawayRedis = {
    url: `redis://127.0.0.1:${port}`,
    start: async () => {
      child = spawn(BIN, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning'], { stdio: ['ignore', 'ignore', 'inherit'] })
      const until = Date.now() + 10_000
      while (!(await pong(port))) {
        if (child.exitCode !== null || Date.now() > until) throw new Error(`redis-server did not start on port ${port}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    stop: async () => {
      const running = child
      if (running === undefined || running.exitCode !== null || running.signalCode !== null) return
      const gone = new Promise((resolve) => running.once('exit', resolve))
      running.kill('SIGKILL')
      await gone
    },
    remove: async () => await server.stop()
  }
  await server.start()
  return server
}
