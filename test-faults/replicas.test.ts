import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { request } from 'node:http'
import { createInterface } from 'node:readline'
import { projectFile } from '../src/project-file.js'
import { connect } from '../src/db/connect.js'
import { migrate } from '../src/db/migrate.js'
import { applySeed } from '../src/directory/seed.js'
import { world, TOKENS } from '../test/fixtures/world.js'
import { recordFigure } from '../test/hardening/figures.js'
import { throwawayPostgres } from './throwaway-postgres.js'
import { throwawayRedis } from './throwaway-redis.js'

/**
 * Two service processes (`node dist/src/server.js`, as replicas behind a load balancer run it)
 * on one PostgreSQL database and one Redis, both of the test's own: what one writes the other
 * reads at once; concurrent identical adds through both give one success; one caller has one
 * rate-limit budget across both; Redis stopped, requests are still served (the limit fails
 * open) with one warning per process; Redis back, the budget is shared again. And, for
 * comparison, two processes without REDIS_URL: each counts on its own.
 */
// below the ephemeral range (32768-60999 here), so no outgoing connection can take them
const PG_PORT = 25532 + (process.pid % 50)
const REDIS_PORT = 26379 + (process.pid % 50)
const HTTP_PORT = 3400 + (process.pid % 50) * 4
const LIMIT = 5

const RACERS = Array.from({ length: 20 }, (_, i) => `racer-${i}`)
const BUDGET_CALLERS = ['shared', 'outage', 'after-outage', 'per-process']
const seed = {
  ...world,
  users: [
    ...world.users,
    ...[...RACERS, ...BUDGET_CALLERS].map((name) => ({ id: `user-${name}`, username: name, tokens: [`${name}-token`] }))
  ],
  organizations: world.organizations.map((o, i) => i !== 0
    ? o
    : { ...o, teams: o.teams.map((team) => team.name === 'owners' ? { ...team, members: [...team.members, ...RACERS, ...BUDGET_CALLERS] } : team) })
}

interface Answer { status: number, json: any, headers: Record<string, unknown> }
interface LogLine { level: number, msg: string, [key: string]: unknown }
interface Replica { port: number, child: ChildProcess, logs: LogLine[] }

function call (port: number, method: string, path: string, token: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const headers: Record<string, string | number> = { authorization: `Bearer ${token}` }
    if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/vnd.api+json', 'content-length': Buffer.byteLength(payload) })
    const req = request({ host: '127.0.0.1', port, method, path, agent: false, headers }, (res) => {
      let text = ''
      res.on('data', (d) => { text += d })
      res.on('error', reject)
      res.on('end', () => {
        let json: unknown = null
        try { json = JSON.parse(text) } catch {}
        resolve({ status: res.statusCode ?? 0, json, headers: res.headers })
      })
    })
    req.on('error', reject)
    req.end(payload)
  })
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function startReplica (t: Test, port: number, env: Record<string, string>): Promise<Replica> {
  const child = spawn(process.execPath, [projectFile('dist/src/server.js')], {
    // a clean environment: the server must not inherit the test runner's loaders
    env: { PATH: process.env.PATH ?? '', PORT: String(port), RATE_LIMIT: String(LIMIT), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const logs: LogLine[] = []
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try { logs.push(JSON.parse(line)) } catch { logs.push({ level: 0, msg: line }) }
  })
  for (let i = 0; ; i++) {
    if (i > 300 || child.exitCode !== null) throw new Error(`the replica on port ${port} did not start`)
    try { if ((await call(port, 'GET', '/readyz', '')).status === 200) break } catch {}
    await sleep(100)
  }
  return { port, child, logs }
}

async function stopReplica (replica: Replica): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => replica.child.once('exit', resolve))
  replica.child.kill('SIGTERM')
  return await exited
}

/** 40 requests of one caller at once, alternately to each replica: how many got through. */
async function burst (replicas: Replica[], token: string): Promise<{ passed: number, limited: number, other: number[] }> {
  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) =>
    call(replicas[i % replicas.length]!.port, 'GET', '/api/v2/team-workspaces/tws-writers-prod', token)))
  return {
    passed: answers.filter((a) => a.status === 200).length,
    limited: answers.filter((a) => a.status === 429 && a.json?.errors?.[0]?.status === '429').length,
    other: answers.filter((a) => a.status !== 200 && a.status !== 429).map((a) => a.status)
  }
}

const redisWarnings = (replica: Replica) => replica.logs.filter((l) => l.level === 40 && /Redis unreachable/.test(l.msg)).length
const redisBack = (replica: Replica) => replica.logs.some((l) => /Redis reachable again/.test(l.msg))
/** What the replica's /metrics says of Redis: `team_access_rate_limit_redis_up`'s value. */
async function redisUp (replica: Replica): Promise<string | undefined> {
  const text = await new Promise<string>((resolve, reject) => {
    request({ host: '127.0.0.1', port: replica.port, path: '/metrics', agent: false }, (res) => {
      let body = ''
      res.on('data', (d) => { body += d })
      res.on('end', () => resolve(body))
    }).on('error', reject).end()
  })
  return /^team_access_rate_limit_redis_up (\d+)$/m.exec(text)?.[1]
}

t.test('two replicas on one PostgreSQL and one Redis', async (t) => {
  const postgres = throwawayPostgres(PG_PORT)
  t.teardown(() => postgres.remove())
  const redis = await throwawayRedis(REDIS_PORT)
  t.teardown(() => redis.remove())
  const setup = await connect({ url: postgres.url })
  await migrate(setup.db)
  await applySeed(setup.db, seed)

  const env = { DATABASE_URL: postgres.url, REDIS_URL: redis.url }
  const [a, b] = await Promise.all([startReplica(t, HTTP_PORT, env), startReplica(t, HTTP_PORT + 1, env)]) as [Replica, Replica]
  const figures: string[] = []
  t.same([await redisUp(a), await redisUp(b)], ['1', '1'], '/metrics: Redis up on both')

  t.test('a write through one replica is read through the other at once', async (t) => {
    const add = await call(a.port, 'POST', '/api/v2/team-workspaces', TOKENS.owner, {
      data: { type: 'team-workspaces', attributes: { access: 'write' }, relationships: { team: { data: { type: 'teams', id: 'team-green' } }, workspace: { data: { type: 'workspaces', id: 'ws-dev' } } } }
    })
    t.equal(add.status, 200, 'added through A')
    const id = add.json.data.id as string
    const shown = await call(b.port, 'GET', `/api/v2/team-workspaces/${id}`, TOKENS.organization)
    t.equal(shown.status, 200, 'read through B')
    t.equal(shown.json.data.attributes.access, 'write')
    t.equal((await call(b.port, 'PATCH', `/api/v2/team-workspaces/${id}`, TOKENS.ownersTeam, { data: { attributes: { access: 'read' } } })).status, 200, 'updated through B')
    t.equal((await call(a.port, 'GET', `/api/v2/team-workspaces/${id}`, TOKENS.manager)).json.data.attributes.access, 'read', 'A reads the update')
    t.equal((await call(a.port, 'DELETE', `/api/v2/team-workspaces/${id}`, TOKENS.owner)).status, 204, 'removed through A')
    t.equal((await call(b.port, 'GET', `/api/v2/team-workspaces/${id}`, TOKENS.organization)).status, 404, 'B no longer finds it')
  })

  t.test('20 concurrent identical adds across both replicas: exactly one succeeds', async (t) => {
    const body = { data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { team: { data: { type: 'teams', id: 'team-green' } }, workspace: { data: { type: 'workspaces', id: 'ws-prod' } } } } }
    const answers = await Promise.all(RACERS.map((racer, i) => call((i % 2 === 0 ? a : b).port, 'POST', '/api/v2/team-workspaces', `${racer}-token`, body)))
    const statuses = answers.map((x) => x.status)
    t.equal(statuses.filter((s) => s === 200).length, 1, `one 200 (${JSON.stringify(statuses)})`)
    t.equal(answers.filter((x) => x.status === 422 && x.json.errors[0].detail === 'Team has already been taken').length, 19, 'the others: Team has already been taken')
    const rows = await setup.db.selectFrom('team_workspaces').select('id').where('team_id', '=', 'team-green').where('workspace_id', '=', 'ws-prod').execute()
    t.equal(rows.length, 1, 'one row')
    figures.push(`20 concurrent identical adds across both: ${statuses.filter((s) => s === 200).length} × 200, ${statuses.filter((s) => s === 422).length} × 422`)
  })

  t.test(`one caller has one budget across both (RATE_LIMIT=${LIMIT})`, async (t) => {
    const { passed, limited, other } = await burst([a, b], 'shared-token')
    t.same(other, [], 'only 200s and 429 documents')
    t.ok(passed >= LIMIT && passed <= LIMIT + 1, `${passed} of 40 passed, ${limited} × 429 (a budget per process would pass ${2 * LIMIT})`)
    figures.push(`RATE_LIMIT=${LIMIT}, one caller, 40 requests at once across both: ${passed} passed`)
  })

  t.test('Redis stopped: requests are still served, one warning per replica', async (t) => {
    await redis.stop()
    const statuses: number[] = []
    for (let round = 0; round < 20; round++) {
      const answers = await Promise.all([a, b].map((r) => call(r.port, 'GET', '/api/v2/team-workspaces/tws-writers-prod', 'outage-token')))
      statuses.push(...answers.map((x) => x.status))
      await sleep(100)
    }
    await sleep(1500) // several reconnection attempts later
    t.equal(statuses.filter((s) => s === 200).length, 40, `40 of 40 answered 200 — the limit failed open (${JSON.stringify([...new Set(statuses)])})`)
    t.equal(redisWarnings(a), 1, 'one warning from A')
    t.equal(redisWarnings(b), 1, 'one warning from B')
    t.same([await redisUp(a), await redisUp(b)], ['0', '0'], '/metrics: Redis down on both, while /readyz stays 200')
    t.same([(await call(a.port, 'GET', '/readyz', '')).status, (await call(b.port, 'GET', '/readyz', '')).status], [200, 200])
    figures.push(`Redis stopped: ${statuses.filter((s) => s === 200).length}/40 answered 200 over 2 s, ${redisWarnings(a)} + ${redisWarnings(b)} warnings`)
  })

  t.test('Redis back: the shared budget again', async (t) => {
    await redis.start()
    const back = Date.now()
    while (!(redisBack(a) && redisBack(b))) {
      if (Date.now() - back > 15_000) throw new Error('the replicas did not reconnect to Redis')
      await sleep(50)
    }
    const reconnectedMs = Date.now() - back
    const { passed, other } = await burst([a, b], 'after-outage-token')
    t.same(other, [], 'only 200s and 429 documents')
    t.ok(passed >= LIMIT && passed <= LIMIT + 1, `${passed} of 40 passed`)
    t.equal(redisWarnings(a) + redisWarnings(b), 2, 'no further warning')
    t.same([await redisUp(a), await redisUp(b)], ['1', '1'], '/metrics: Redis up again')
    figures.push(`Redis back: both reconnected within ${(reconnectedMs / 1000).toFixed(1)} s, then ${passed} of 40 passed`)
  })

  t.test('for comparison, two replicas without REDIS_URL: a budget per process', async (t) => {
    const [c, d] = await Promise.all([startReplica(t, HTTP_PORT + 2, { DATABASE_URL: postgres.url }), startReplica(t, HTTP_PORT + 3, { DATABASE_URL: postgres.url })]) as [Replica, Replica]
    const { passed } = await burst([c, d], 'per-process-token')
    t.ok(passed > LIMIT + 1, `${passed} of 40 passed`)
    figures.push(`without REDIS_URL: ${passed} of 40 passed`)
    t.same(await Promise.all([stopReplica(c), stopReplica(d)]), [0, 0])
  })

  t.test('both stop cleanly', async (t) => {
    t.same(await Promise.all([stopReplica(a), stopReplica(b)]), [0, 0], 'exit 0 on SIGTERM')
    await setup.close()
    await recordFigure('two replicas, one Redis', figures.join('; '), `one 200 of 20 adds; ${LIMIT}–${LIMIT + 1} of 40 pass across both; Redis down: all served, one warning each; back: shared again`)
  })
})
