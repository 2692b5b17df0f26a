// Fires N concurrent PATCHes at a running server from a process of its own (as real clients
// would), then prints one JSON line: every answer's status and row id, or the error.
import { request } from 'node:http'

const [port, count, path, token] = process.argv.slice(2)
function send (i) {
  return new Promise((resolve) => {
    const body = JSON.stringify({ data: { attributes: { runs: i % 2 === 0 ? 'apply' : 'plan' } } })
    const req = request({ host: '127.0.0.1', port: Number(port), method: 'PATCH', path, agent: false, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.api+json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = ''
      res.on('data', (d) => { text += d })
      res.on('error', (err) => resolve({ error: err.code ?? err.message }))
      res.on('aborted', () => resolve({ error: 'aborted' }))
      res.on('end', () => {
        let id = null
        try { id = JSON.parse(text).data?.id ?? null } catch {}
        resolve({ status: res.statusCode, id })
      })
    })
    req.on('error', (err) => resolve({ error: err.code ?? err.message }))
    req.end(body)
  })
}
const results = await Promise.all(Array.from({ length: Number(count) }, (_, i) => send(i)))
process.stdout.write(JSON.stringify(results) + '\n')
