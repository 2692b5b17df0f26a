import t from 'tap'
import { spawn } from 'node:child_process'
import { connect as netConnect, type Socket } from 'node:net'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { projectFile } from '../src/project-file.js'
import { world, TOKENS } from '../test/fixtures/world.js'

/**
 * Issue: a client holding idle or half-sent connections until the process ran out of file
 * descriptors crashed it — a timer's memory sample threw EMFILE and nothing caught it. The built
 * server (`node dist/src/server.js`, as a container runs it) under `ulimit -n 1024` on its
 * embedded database: 1,100 connections opened and held (half idle, half with half a request),
 * then released; the process never exits, and a valid request is answered 200.
 */
const PORT = 3400 + (process.pid % 100)

for (const [name, maxConnections] of [['the default connection cap', undefined], ['no connection cap, descriptors run out', '100000']] as const) {
  t.test(`1,100 held connections under ulimit -n 1024 end nothing: ${name}`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'team-access-fds-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const seed = join(dir, 'seed.json')
    writeFileSync(seed, JSON.stringify(world))
    const server = spawn('bash', ['-c', `ulimit -n 1024 && exec "${process.execPath}" "${projectFile('dist/src/server.js')}"`], {
      env: { PATH: process.env.PATH ?? '', ...(maxConnections === undefined ? {} : { MAX_CONNECTIONS: maxConnections }), DATA_DIR: join(dir, 'data'), SEED_FILE: seed, PORT: String(PORT), LOG_LEVEL: 'warn', LOAD_SHED_RSS_MB: '4096' },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stderr = ''
    server.stderr!.on('data', (d) => { stderr += d })
    server.stdout!.on('data', (d) => { stderr += d })
    let exit: number | null | undefined
    server.on('exit', (code) => { exit = code })
    t.teardown(() => { server.kill('SIGKILL') })

    const get = async () => await fetch(`http://127.0.0.1:${PORT}/api/v2/team-workspaces/tws-writers-prod`, { headers: { authorization: `Bearer ${TOKENS.organization}` } })
    for (let i = 0; ; i++) {
      try { if ((await get()).status === 200) break } catch {}
      if (i > 300 || exit !== undefined) throw new Error(`the server did not start: ${stderr}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }

    const sockets: Socket[] = []
    let refused = 0
    await Promise.all(Array.from({ length: 1100 }, async (_, i) => {
      const socket = netConnect(PORT, '127.0.0.1')
      sockets.push(socket)
      socket.on('error', () => { refused++ })
      await new Promise((resolve) => { socket.once('connect', resolve); socket.once('error', resolve); socket.once('close', resolve) })
      // half the connections send half a request and stop; half send nothing
      if (i % 2 === 0 && !socket.destroyed) socket.write('GET /api/v2/team-workspaces/tws-writers-prod HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthori')
    }))
    // held for three of the load shedder's samples
    await new Promise((resolve) => setTimeout(resolve, 3500))
    t.equal(exit, undefined, 'the process is still running while the connections are held')
    const closedByServer = sockets.filter((s) => s.destroyed).length
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => setTimeout(resolve, 1500))
    t.equal(exit, undefined, `the process never exited (${stderr.trim().split('\n').slice(-3).join(' | ')})`)
    const res = await get()
    t.equal(res.status, 200, 'a valid request is answered')
    t.comment(`${closedByServer} of 1,100 connections closed by the server while held (${refused} with an error)`)
    if (maxConnections === undefined) t.ok(closedByServer >= 1100 - 768, 'past the cap (768 of 1,024 descriptors), connections are closed at once')
  })
}
