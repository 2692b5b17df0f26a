import t from 'tap'
import { connect as netConnect } from 'node:net'
import { buildApp } from '../src/app.js'
import { applySeed } from '../src/directory/seed.js'
import { ENGINE, freshLocation, holdRow, patchOverSocket, testConfig } from './helper.js'
import { TOKENS, world } from './fixtures/world.js'

/** What a client sends raw, and everything the server answers before it closes the connection. */
async function raw (port: number, text: string | Buffer, waitMs = 0): Promise<string> {
  const socket = netConnect(port, '127.0.0.1')
  let answer = ''
  socket.on('data', (d) => { answer += String(d) })
  socket.on('error', () => {})
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write(text)
  const closed = new Promise((resolve) => socket.once('close', resolve))
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 5000 + waitMs))])
  socket.destroy()
  return answer
}
const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1])
const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))

t.test(`what Node's parser refuses is a JSON:API error document, on ${ENGINE}`, async (t) => {
  const app = await buildApp(testConfig(await freshLocation(t), { connections: { max: 100, headersTimeoutMs: 300, requestTimeoutMs: 3000 } }), { logger: false })
  t.teardown(() => app.close())
  await applySeed(app.db, world)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port
  const cases: Array<[string, string | Buffer, number, string]> = [
    ['malformed', 'GET /api/v2/ping HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n', 400, 'bad request'],
    ['headers too large', `GET /api/v2/ping HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'request header fields too large'],
    ['headers not sent in time', 'GET /api/v2/ping HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ', 408, 'request timeout']
  ]
  for (const [name, text, status, title] of cases) {
    const answer = await raw(port, text)
    t.equal(statusOf(answer), status, `${name}: ${status}`)
    t.match(answer, /\r\nContent-Type: application\/vnd\.api\+json\r\n/, `${name}: the JSON:API media type`)
    t.same(bodyOf(answer).errors[0], { status: String(status), title, detail: bodyOf(answer).errors[0].detail }, `${name}: an error document`)
  }
  const big = JSON.stringify({ data: { type: 'team-workspaces', attributes: { access: 'read', padding: 'x'.repeat(100_000) } } })
  const tooLarge = await raw(port, `POST /api/v2/team-workspaces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKENS.organization}\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\nConnection: close\r\n\r\n${big}`)
  t.equal(statusOf(tooLarge), 413, 'a body too large: 413')
  t.match(bodyOf(tooLarge), { errors: [{ status: '413', title: 'payload too large' }] })
})

t.test(`a client that goes away mid-request is one info line, without a stack, on ${ENGINE}`, async (t) => {
  const lines: Array<Record<string, unknown>> = []
  const app = await buildApp(testConfig(await freshLocation(t), { logLevel: 'info' }), { logStream: { write: (line) => { lines.push(JSON.parse(line)) } } })
  t.teardown(() => app.close())
  await applySeed(app.db, world)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port
  // the row's lock (PostgreSQL) or the one connection (PGlite) is held while the client leaves
  const release = await holdRow(app.db, 'tws-writers-prod')
  const sockets = Array.from({ length: 4 }, () => patchOverSocket(port, TOKENS.organization, 'tws-writers-prod', { access: 'read' }))
  await new Promise((resolve) => setTimeout(resolve, 300))
  for (const socket of sockets) socket.destroy()
  await new Promise((resolve) => setTimeout(resolve, 100))
  await release()
  await new Promise((resolve) => setTimeout(resolve, 300))
  const gone = lines.filter((l) => l.msg === 'client closed the connection before the answer')
  t.equal(gone.length, 4, 'one line per request whose client left')
  t.ok(gone.every((l) => l.level === 30 && !('err' in l)), 'at info, without an error or a stack')
  t.same(lines.filter((l) => (l.level as number) >= 40).map((l) => l.msg), [], 'nothing at warn or error')
})
