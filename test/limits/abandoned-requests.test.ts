import t from 'tap'
import { build, ENGINE, holdRow, patchOverSocket } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'

/**
 * Issue: hung-up requests took the service down for good. On PostgreSQL, PATCHes of one row
 * queued on its lock whose clients hung up never gave their turn back; from then on every request
 * waited out the queue and got 503. Here: six bursts of 16 concurrent PATCHes of one row, each
 * ended by closing every connection mid-request (on PostgreSQL while the statements wait on a lock
 * the test holds; on PGlite while they wait for the one connection the test holds in a
 * transaction), then, idle, five single reads each answer 200 within 500 ms.
 */
t.test(`requests abandoned mid-request give their turns back, on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port

  for (let burst = 0; burst < 6; burst++) {
    // the row's lock (PostgreSQL), or the one connection (PGlite), is held until the clients are gone
    const release = await holdRow(app.db, 'tws-writers-prod')
    const sockets = Array.from({ length: 16 }, (_, i) => patchOverSocket(port, TOKENS.organization, 'tws-writers-prod', { access: i % 2 === 0 ? 'read' : 'write' }))
    await new Promise((resolve) => setTimeout(resolve, 300))
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => setTimeout(resolve, 50))
    await release()
  }
  // the abandoned statements finish (or time out) and nothing is left holding a turn
  await new Promise((resolve) => setTimeout(resolve, 500))

  for (let i = 0; i < 5; i++) {
    const started = performance.now()
    const res = await fetch(`http://127.0.0.1:${port}/api/v2/team-workspaces/tws-writers-prod`, { headers: { authorization: `Bearer ${TOKENS.organization}` } })
    const ms = performance.now() - started
    t.equal(res.status, 200, `read ${i + 1} answered`)
    t.ok(ms < 500, `read ${i + 1} within 500 ms (${ms.toFixed(1)} ms)`)
    await res.arrayBuffer()
  }
})
