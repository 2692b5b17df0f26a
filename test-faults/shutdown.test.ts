import t from 'tap'
import { spawn } from 'node:child_process'
import { request } from 'node:http'
import pg from 'pg'
import { projectFile } from '../src/project-file.js'
import { connect } from '../src/db/connect.js'
import { migrate } from '../src/db/migrate.js'
import { applySeed } from '../src/db/seed.js'
import { world, TOKENS } from '../test/fixtures/world.js'
import { recordFigure } from '../test/hardening/figures.js'
import { throwawayPostgres } from './throwaway-postgres.js'

/**
 * SIGTERM with 100 requests in flight: every one completes, new connections are refused, and
 * the process exits 0 within 10 s. The built server (`node dist/src/server.js`, as a container
 * runs it) on a PostgreSQL of the test's own. "In flight" is made certain: the test holds a lock
 * on the row all 100 PATCHes update, and signals only when the database shows all 100 waiting.
 */
// below the ephemeral range (32768-60999 here), so no outgoing connection can take it
const PG_PORT = 25482 + (process.pid % 50)
const PORT = 3200 + (process.pid % 100)

function send (method: string, path: string, body?: string): Promise<{ status: number, body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${TOKENS.organization}` }
    if (body !== undefined) headers['content-type'] = 'application/vnd.api+json'
    const req = request({ host: '127.0.0.1', port: PORT, method, path, agent: false, headers }, (res) => {
      let text = ''
      res.on('data', (d) => { text += d })
      res.on('error', reject)
      res.on('aborted', () => reject(new Error('aborted')))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

t.test('SIGTERM with 100 requests in flight', async (t) => {
  const postgres = throwawayPostgres(PG_PORT, ['max_connections=250'])
  t.teardown(() => postgres.remove())
  const setup = await connect({ url: postgres.url })
  await migrate(setup.db)
  await applySeed(setup.db, world)
  await setup.close()

  const server = spawn(process.execPath, [projectFile('dist/src/server.js')], {
    // a clean environment: the server must not inherit the test runner's loaders
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: postgres.url, PORT: String(PORT), LOG_LEVEL: process.env.SHUTDOWN_LOG ?? 'warn', RATE_LIMIT: '0', DB_POOL_SIZE: '120', DB_STATEMENT_TIMEOUT_MS: '20000' },
    stdio: ['ignore', 'inherit', 'inherit']
  })
  const exited = new Promise<{ code: number | null, at: number }>((resolve) => server.on('exit', (code) => resolve({ code, at: Date.now() })))
  t.teardown(() => { if (server.exitCode === null) server.kill('SIGKILL') })
  for (let i = 0; ; i++) {
    if (i > 300) throw new Error('the server did not start')
    try { if ((await send('GET', '/readyz')).status === 200) break } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100))
  }

  const locker = new pg.Client({ connectionString: postgres.url })
  await locker.connect()
  await locker.query('begin')
  await locker.query("select id from team_workspaces where id = 'tws-red-prod' for update")
  // the 100 requests come from a process of their own, as real clients' would
  const client = spawn(process.execPath, [projectFile('test-faults/fire-requests.mjs'), String(PORT), '100', '/api/v2/team-workspaces/tws-red-prod', TOKENS.organization], { stdio: ['ignore', 'pipe', 'inherit'] })
  let output = ''
  client.stdout!.on('data', (d) => { output += d })
  const inFlight = new Promise<Array<{ status?: number, id?: string, error?: string }>>((resolve) => client.on('exit', () => resolve(JSON.parse(output.trim() || '[]'))))
  // (inside the locker's transaction the activity view is a snapshot unless it is cleared)
  const waiting = async () => {
    await locker.query('select pg_stat_clear_snapshot()')
    return Number((await locker.query("select count(*) from pg_stat_activity where wait_event_type = 'Lock' and application_name = 'team-access'")).rows[0].count)
  }
  const until = Date.now() + 15_000
  while (await waiting() < 100) {
    if (Date.now() > until) throw new Error(`only ${await waiting()} requests reached the database`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }

  const signalled = Date.now()
  server.kill('SIGTERM')
  // new connections are refused from the moment the signal is handled
  let late = 'never tried'
  while (Date.now() - signalled < 3000) {
    late = await send('GET', '/healthz').then((r) => `answered ${r.status}`, (err: NodeJS.ErrnoException) => err.code ?? err.message)
    if (late === 'ECONNREFUSED') break
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  await locker.query('rollback')
  await locker.end()

  const results = await inFlight
  const complete = results.filter((r) => r.status === 200 && r.id === 'tws-red-prod').length
  const failures = results.filter((r) => r.status !== 200).map((r) => r.error ?? `status ${r.status}`)
  const { code, at } = await exited
  const seconds = (at - signalled) / 1000
  t.equal(complete, 100, `all 100 in-flight requests completed (failures: ${[...new Set(failures)].join(', ') || 'none'})`)
  t.equal(late, 'ECONNREFUSED', 'a new connection after SIGTERM is refused')
  t.equal(code, 0, 'exit code 0')
  t.ok(seconds < 10, `exited ${seconds.toFixed(2)} s after SIGTERM`)
  await recordFigure('graceful shutdown', `SIGTERM with 100 requests in flight (all 100 waiting in the database): ${complete}/100 completed with 200, new connection ${late}, exit ${code} after ${seconds.toFixed(2)} s`, '100/100, refused, exit 0 within 10 s')
})
