import t from 'tap'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { testConfig } from './helper.js'

/**
 * Logs a person can read: with pretty logs (the default when standard output is a terminal),
 * one line per request — time, level, request id, method, path, status, duration — and not
 * JSON; otherwise JSON lines as before. Secrets in query strings are masked either way.
 */
t.test('pretty logs: one readable line per request', async (t) => {
  const lines: string[] = []
  const app = await buildApp(testConfig({ dataDir: 'memory://' }, { logLevel: 'info' }), { prettyLogs: true, logStream: { write: (line) => { lines.push(line) } } })
  t.teardown(() => app.close())
  lines.length = 0
  await app.inject({ url: '/healthz', headers: { 'x-request-id': 'req-one' } })
  await app.inject({ url: '/api/v2/team-workspaces/tws-x?token=very-secret-value', headers: { 'x-request-id': 'req-two' } })
  t.equal(lines.length, 2, `one line per request: ${JSON.stringify(lines)}`)
  t.match(lines[0], /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: req-one GET \/healthz 200 \d+\.\d ms\n$/)
  t.match(lines[1], /^\[[\d:.]+\] INFO: req-two GET \/api\/v2\/team-workspaces\/tws-x\?token=\[redacted\] 401 \d+\.\d ms\n$/)
  t.notMatch(lines.join(''), /very-secret-value/)
  t.notOk(lines.join('').includes('\u001b['), 'no colours when not writing to a terminal')
})

t.test('JSON lines otherwise, as before', async (t) => {
  const lines: string[] = []
  const app = await buildApp(testConfig({ dataDir: 'memory://' }, { logLevel: 'info' }), { logStream: { write: (line) => { lines.push(line) } } })
  t.teardown(() => app.close())
  lines.length = 0
  await app.inject('/healthz')
  const parsed = lines.map((l) => JSON.parse(l))
  t.same(parsed.map((l) => l.msg), ['incoming request', 'request completed'])
})

t.test('REDIS_URL is checked like the other settings', async (t) => {
  t.equal(loadConfig({}).redisUrl, undefined, 'unset: a budget per process')
  t.equal(loadConfig({ REDIS_URL: 'redis://cache:6379/0' }).redisUrl, 'redis://cache:6379/0')
  t.equal(loadConfig({ REDIS_URL: '' }).redisUrl, undefined, 'empty means unset')
  t.throws(() => loadConfig({ REDIS_URL: 'http://cache:6379' }), { name: 'ConfigError', message: /REDIS_URL must match pattern/ })
  t.throws(() => loadConfig({ REDIS_URL: 'redis://[bad' }), { name: 'ConfigError', message: /REDIS_URL is not a valid URL/ })
})
