import t from 'tap'
import fc from 'fast-check'
import { sql } from 'kysely'
import { build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { recordFigure } from './figures.js'
import { table } from '../../src/db/tables.js'

/**
 * Property-based input fuzzing: generated bodies, query strings and path ids against every
 * operation. Never a 5xx; always a JSON:API error document whose status is the HTTP status;
 * and a rejected request leaves the team_workspaces table exactly as it was.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000)
const owner = { authorization: `Bearer ${TOKENS.organization}` }

const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom("'; drop table team_workspaces; --", "tws-1' or '1'='1", '%00', '\u0000', '../../etc/passwd', '$where', '{"$ne":null}',
    'read', 'custom', 'team-workspaces', 'tws-writers-prod', 'ws-prod', 'team-green', '__proto__', 'constructor', 'x'.repeat(70_000)),
  fc.string({ minLength: 200, maxLength: 2000 })
)
const key = fc.oneof(fc.constantFrom('data', 'type', 'id', 'attributes', 'relationships', 'team', 'workspace', 'access', 'runs',
  'variables', 'state-versions', 'sentinel-mocks', 'workspace-locking', 'run-tasks', '__proto__', 'constructor', 'prototype', 'meta', 'links'), fc.string({ maxLength: 12 }))
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true },
    hostileString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null),
    fc.array(tie('node'), { maxLength: 4 }),
    fc.dictionary(key, tie('node'), { maxKeys: 5 }))
})).node

/** Bodies close to valid ones, with one part replaced by something generated. */
const nearlyValid = fc.record({
  type: fc.oneof(fc.constant('team-workspaces'), value),
  access: fc.oneof(fc.constantFrom('read', 'plan', 'write', 'admin', 'custom'), value),
  extra: fc.option(fc.tuple(key, value), { nil: undefined }),
  team: fc.oneof(fc.constant({ type: 'teams', id: 'team-green' }), value),
  workspace: fc.oneof(fc.constant({ type: 'workspaces', id: 'ws-prod' }), value)
}).map(({ type, access, extra, team, workspace }) => {
  const attributes: Record<string, unknown> = { access }
  if (extra) attributes[extra[0]] = extra[1]
  return { data: { type, attributes, relationships: { team: { data: team }, workspace: { data: workspace } } } }
})

const body = fc.oneof(
  value.map((v) => JSON.stringify(v) ?? 'null'),
  nearlyValid.map((v) => JSON.stringify(v)),
  fc.constantFrom('{"__proto__":{"polluted":true}}', '{"data":{"constructor":{"prototype":{"polluted":true}}}}', '{', '[', 'nul', '"', '{"data":' + '['.repeat(5000)),
  fc.string({ maxLength: 200 })
)

const request = fc.oneof(
  fc.record({ method: fc.constant('POST' as const), url: fc.constant('/api/v2/team-workspaces'), payload: body, type: fc.constantFrom('application/vnd.api+json', 'application/json', 'text/plain', 'application/json; charset=utf-8') }),
  fc.record({ method: fc.constant('PATCH' as const), url: fc.constantFrom('/api/v2/team-workspaces/tws-writers-prod', '/api/v2/team-workspaces/tws-red-prod'), payload: body, type: fc.constant('application/vnd.api+json') }),
  fc.record({ method: fc.constantFrom('GET' as const, 'DELETE' as const, 'PATCH' as const), url: hostileString.map((id) => `/api/v2/team-workspaces/${encodeURIComponent(id)}`), payload: fc.constant(undefined), type: fc.constant(undefined) }),
  fc.record({
    method: fc.constant('GET' as const),
    url: fc.array(fc.tuple(fc.oneof(fc.constantFrom('filter[workspace][id]', 'page[number]', 'page[size]', 'filter[team][id]', 'include'), fc.string({ maxLength: 10 })), hostileString), { maxLength: 4 })
      .map((pairs) => `/api/v2/team-workspaces?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`),
    payload: fc.constant(undefined),
    type: fc.constant(undefined)
  })
)

t.test(`fuzzing every operation on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world })
  const fingerprint = async () => (await sql<{ f: string | null }>`select md5(string_agg(t::text, ',' order by t.id)) as f from ${table.team_workspaces} t`.execute(app.db)).rows[0]!.f
  let tried = 0
  const failures: string[] = []
  const outcome = await fc.check(fc.asyncProperty(request, async (r) => {
    tried++
    const before = await fingerprint()
    const headers: Record<string, string> = { ...owner }
    if (r.type) headers['content-type'] = r.type
    const res = await app.inject({ method: r.method, url: r.url, headers, ...(r.payload === undefined ? {} : { payload: r.payload }) })
    const problem = (why: string) => { failures.push(`${r.method} ${r.url.slice(0, 80)} ${String(r.payload).slice(0, 80)} → ${res.statusCode}: ${why}`); return false }
    if (res.statusCode >= 500) return problem('5xx')
    if (res.statusCode >= 300) {
      let doc: any
      try { doc = res.json() } catch { return problem('not JSON') }
      if (!Array.isArray(doc.errors) || doc.errors.length === 0 || doc.errors[0].status !== String(res.statusCode) || typeof doc.errors[0].title !== 'string') return problem(`not a JSON:API error document: ${res.body.slice(0, 200)}`)
      if (/select |insert |update |delete from|\bat .*\.(js|ts):\d+/i.test(res.body)) return problem('SQL or a stack trace in the body')
      if (await fingerprint() !== before) return problem('a rejected request changed the table')
    } else {
      // something valid was generated: undo it, so later inputs meet the same world
      await app.db.deleteFrom('team_workspaces').where('team_id', '=', 'team-green').execute()
      if (r.method === 'PATCH' || r.method === 'DELETE') await resetSeedRows(app)
    }
    if (({} as any).polluted !== undefined) return problem('prototype polluted')
    return true
  }), { numRuns: RUNS, endOnFailure: true })
  t.notOk(outcome.failed, `${tried} inputs; failures: ${failures.slice(0, 5).join(' | ')}; counterexample: ${JSON.stringify(outcome.counterexample)?.slice(0, 500)}`)
  await recordFigure(`fuzzing (${ENGINE})`, `${tried} generated requests, ${failures.length} failures`, '0 failures')
})

async function resetSeedRows (app: Awaited<ReturnType<typeof build>>): Promise<void> {
  const { applySeed } = await import('../../src/directory/seed.js')
  await applySeed(app.db, world)
}
