import t from 'tap'
import { readOrganization } from '../../src/mirror/read.js'
import { standIn } from './hcp-stand-in.js'

/**
 * The mirror's pace (DESIGN §13.2), from the stand-in's own log (./hcp-stand-in.ts): at most
 * `rate` requests start in any second, at most 4 (or `inFlight`) are open at once, and a 429 holds
 * every request back — the others' too — for as long as its `X-RateLimit-Reset` says. Properties
 * of the log, not durations: a slow machine only spreads the requests further apart.
 */
const TOKEN = 'hcp-pace-token.atlasv1.secret'

t.test('at most `rate` requests start in any second', async (t) => {
  const hcp = await standIn({ token: TOKEN, world: { extraWorkspaces: 12 } })
  t.teardown(hcp.close)
  // when the reader sends each request: what its pace governs (the stand-in's arrivals can bunch on
  // a loaded machine, a request sent late arriving beside the next)
  const starts: number[] = []
  const timed: typeof fetch = async (input, init) => { starts.push(performance.now()); return await fetch(input, init) }
  const snapshot = await readOrganization({ from: hcp.from, organization: 'acme', token: TOKEN, rate: 10, fetch: timed })
  t.equal(hcp.log.length, snapshot.requests)
  t.equal(starts.length, snapshot.requests, 'every request sent through it')
  const most = Math.max(...starts.map((start) => starts.filter((at) => at >= start && at < start + 1000).length))
  t.ok(most <= 11, `at most 10 (+1 at a window's edge) started in any second: ${most} of ${starts.length}`)
})

t.test('at most 4 requests open at once, or as many as inFlight says', async (t) => {
  const hcp = await standIn({ token: TOKEN, world: { extraWorkspaces: 16 }, delayMs: 40 })
  t.teardown(hcp.close)
  await readOrganization({ from: hcp.from, organization: 'acme', token: TOKEN, rate: 1000 })
  t.ok(hcp.maxInFlight <= 4, `at most 4 open: ${hcp.maxInFlight}`)
  t.ok(hcp.maxInFlight >= 2, `and more than one: ${hcp.maxInFlight}`)

  const two = await standIn({ token: TOKEN, world: { extraWorkspaces: 16 }, delayMs: 40 })
  t.teardown(two.close)
  await readOrganization({ from: two.from, organization: 'acme', token: TOKEN, rate: 1000, inFlight: 2 })
  t.ok(two.maxInFlight <= 2, `inFlight 2: at most 2 open: ${two.maxInFlight}`)
})

t.test('a 429 holds every request back as long as X-RateLimit-Reset says (a delay in seconds), then the request is sent again', async (t) => {
  // the team access lists 4 at a time, each answered after 150 ms; the fourth answered 429 at once, while the other three are open
  const hcp = await standIn({ token: TOKEN, world: { extraWorkspaces: 12 }, delayMs: 150, resetSeconds: '0.3' })
  t.teardown(hcp.close)
  hcp.faults.set('/team-workspaces', ['ok', 'ok', 'ok', '429'])
  const snapshot = await readOrganization({ from: hcp.from, organization: 'acme', token: TOKEN, rate: 1000 })
  const [refused] = hcp.faulted.filter((f) => f.fault === '429')
  t.ok(refused, 'the 429 was answered')
  const after = hcp.log.filter((r) => r.at > refused!.at)
  t.ok(after.length >= 4, `the requests after it: its own again, and the others' next (${after.length})`)
  const early = after.filter((r) => r.at < refused!.at + 300)
  t.same(early, [], 'none started within the 0.3 s it asked for, the other lists\' included')
  t.equal(snapshot.requests, hcp.log.length, 'the 429 counted as a request')
  t.equal(hcp.log.filter((r) => r.path === '/team-workspaces').length, 3 + 12 + 1, 'the refused one sent again')
})
