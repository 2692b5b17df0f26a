// The clients of the shutdown test, in a process of their own (as real clients would be).
// Driven by lines on stdin; says what it did by lines on stdout:
//   (start)   open KEEP keep-alive connections, each used once (GET /healthz)  → "warm"
//   "db"      HALF PATCHes of PATCH_PATH, half on the warm connections, half on new ones
//   "queued"  HALF GETs of GET_PATH, the same way                            → "sent" once all are written
// When every request has its answer (or its error), one JSON line: the results, as they came.
import { Agent, request } from 'node:http'
import { createInterface } from 'node:readline'

const [port, token, keep, half, patchPath, getPath] = process.argv.slice(2)
const KEEP = Number(keep)
const HALF = Number(half)
const agent = new Agent({ keepAlive: true, maxSockets: KEEP, maxFreeSockets: KEEP, keepAliveMsecs: 60_000 })
const results = []
const pending = []

function send (method, path, keepAlive, body) {
  let written
  const wrote = new Promise((resolve) => { written = resolve })
  const done = new Promise((resolve) => {
    const headers = { authorization: `Bearer ${token}` }
    if (body !== undefined) Object.assign(headers, { 'content-type': 'application/vnd.api+json', 'content-length': Buffer.byteLength(body) })
    const req = request({ host: '127.0.0.1', port: Number(port), method, path, agent: keepAlive ? agent : false, headers }, (res) => {
      let text = ''
      res.on('data', (d) => { text += d })
      res.on('error', (err) => resolve({ error: err.code ?? err.message }))
      res.on('aborted', () => resolve({ error: 'aborted' }))
      res.on('end', () => {
        // what the answer was: a list, a resource (its id), or an error document (its title)
        let answer = text.slice(0, 200)
        try {
          const document = JSON.parse(text)
          answer = Array.isArray(document.data) ? 'list' : document.data?.id ?? document.errors?.[0]?.title ?? answer
        } catch {}
        resolve({ status: res.statusCode, answer, reused: req.reusedSocket })
      })
    })
    req.on('error', (err) => { written(); resolve({ error: err.code ?? err.message, reused: req.reusedSocket }) })
    req.on('finish', () => written())
    req.end(body)
  })
  return { wrote, done }
}

// warm the keep-alive connections: KEEP requests at once, so that the agent opens KEEP sockets
const warm = await Promise.all(Array.from({ length: KEEP }, () => send('GET', '/healthz', true).done))
if (warm.some((r) => r.status !== 200)) throw new Error(`warm-up failed: ${JSON.stringify(warm.find((r) => r.status !== 200))}`)
process.stdout.write('warm\n')

function batch (kind, method, path, body) {
  const wrote = []
  for (let i = 0; i < HALF; i++) {
    const keepAlive = i % 2 === 0
    const { wrote: w, done } = send(method, path, keepAlive, body?.(i))
    wrote.push(w)
    pending.push(done.then((r) => { results.push({ kind, keepAlive, ...r }) }))
  }
  return Promise.all(wrote)
}

createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line === 'db') {
    await batch('db', 'PATCH', patchPath, (i) => JSON.stringify({ data: { attributes: { runs: i % 4 < 2 ? 'apply' : 'plan' } } }))
  } else if (line === 'queued') {
    await batch('queued', 'GET', getPath)
    process.stdout.write('sent\n')
    await Promise.all(pending)
    agent.destroy()
    // a pipe is written asynchronously: exit once the line is out
    process.stdout.write(JSON.stringify(results) + '\n', () => process.exit(0))
  }
})
