// N GETs of PATH at once, each on a new connection, from a process of its own (as real clients
// would send them). Prints "sent" once every request is written to its socket, then one JSON
// line: how the requests ended (status, "fastify 503" for Fastify's own document, or the error).
import { request } from 'node:http'

const [port, count, path, token] = process.argv.slice(2)
const written = []
const answers = Array.from({ length: Number(count) }, () => new Promise((resolve) => {
  const req = request({ host: '127.0.0.1', port: Number(port), path, agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
    let text = ''
    res.on('data', (d) => { text += d })
    res.on('error', (err) => resolve(err.code ?? err.message))
    res.on('aborted', () => resolve('aborted'))
    res.on('end', () => resolve(text.includes('"error":"Service Unavailable"') ? 'fastify 503' : String(res.statusCode)))
  })
  written.push(new Promise((resolve) => { req.on('finish', resolve); req.on('error', resolve) }))
  req.on('error', (err) => resolve(err.code ?? err.message))
  req.end()
}))
await Promise.all(written)
process.stdout.write('sent\n')
const tally = {}
for (const answer of await Promise.all(answers)) tally[answer] = (tally[answer] ?? 0) + 1
process.stdout.write(JSON.stringify(tally) + '\n', () => process.exit(0))
