import t, { type Test } from 'tap'
import { inspect } from 'node:util'
import { readOrganization, type ReadOptions } from '../../src/mirror/read.js'
import { fromProblem } from '../../src/mirror/client.js'
import { progressLine } from '../../src/mirror/progress.js'
import { freePort } from '../helper.js'
import { standIn, type Fault, type StandIn } from './hcp-stand-in.js'

/**
 * When the mirror's reader stops (DESIGN §13.1, §13.2): a token that cannot read the organization
 * whole (`can-update` false) or list its memberships, an organization that is not there, a token
 * not valid, a failure tried again 5 times, a 429 that never ends, an answer that is no JSON:API,
 * a redirect, an address that is not https, a discovery document that names one or no API, a token a header
 * cannot carry, a run stopped — each a message that names what was asked, and not one of them,
 * nor any progress line, holds the token: not the message, the stack, the error as a string, its
 * cause, or the error inspected whole.
 */
const TOKEN = 'hcp-secret-token-3fJk2.atlasv1.do-not-leak'
const leaks = (text: string): boolean => text.includes(TOKEN) || text.includes('3fJk2') || text.includes('do-not-leak')

/** A run's failure and its progress lines; `fails` if it did not fail. */
async function failure (options: Partial<ReadOptions> & { from: string }): Promise<{ err: Error, lines: string[] }> {
  const lines: string[] = []
  const err = await readOrganization({ organization: 'acme', token: TOKEN, rate: 1000, retryPause: 2, ...options, onProgress: (p) => lines.push(progressLine(p)) })
    .then(() => new Error('fails: the read succeeded'), (e: Error) => e)
  return { err, lines }
}

async function faulty (t: Test, faults: Record<string, Fault[]>, options: Partial<Parameters<typeof standIn>[0]> = {}): Promise<StandIn> {
  const hcp = await standIn({ token: TOKEN, ...options })
  t.teardown(hcp.close)
  for (const [path, queue] of Object.entries(faults)) hcp.faults.set(path, queue)
  return hcp
}

const failures: Array<{ kind: string, err: Error, lines: string[] }> = []
const met = (kind: string, result: { err: Error, lines: string[] }) => { failures.push({ kind, ...result }); return result.err }

t.test('a token that does not read the organization whole stops the run before it reads on', async (t) => {
  const hcp = await faulty(t, {}, { world: { canUpdate: false } })
  const err = met('can-update false', await failure({ from: hcp.from }))
  t.match(err.message, /^organization "acme": this token does not read the whole organization .*can-update.* nothing was read further: use an owners team token, an owner's user token or the organization token$/)
  t.same(hcp.log.map((r) => r.path), ['/.well-known/terraform.json', '/organizations/acme'], 'nothing read after the organization')
})

t.test('memberships the token may not list stop the run, naming them (404 and 403)', async (t) => {
  for (const status of ['404', '403'] as const) {
    const hcp = await faulty(t, { '/organizations/acme/organization-memberships': [status] })
    const err = met(`memberships ${status}`, await failure({ from: hcp.from }))
    t.equal(err.message, `the organization memberships of "acme": ${status} — the token may not list its members and their emails (an owners team token, an owner's user token or the organization token reads the whole organization)`)
  }
})

t.test('no such organization, or a token not valid', async (t) => {
  const hcp = await faulty(t, {})
  const missing = met('organization 404', await failure({ from: hcp.from, organization: 'nope' }))
  t.match(missing.message, /^organization "nope": 404 — no such organization, or the token may not read it \(/)
  const invalid = met('401', await failure({ from: hcp.from, token: `${TOKEN}-revoked` }))
  t.match(invalid.message, /^organization "acme": 401 — the token is not valid at 127\.0\.0\.1:\d+ \(expired, revoked, or a token of another host\)$/)
})

t.test('a failure in passing, tried 5 times more, then the run stops naming what was asked', async (t) => {
  for (const [fault, why] of [['503', /503/], ['drop', /the connection failed \([A-Z_a-z]+\)/], ['cut', /the connection failed \([A-Z_a-z]+\)|a body cut off/], ['garbage', /a body cut off or not JSON/]] as const) {
    const hcp = await faulty(t, { '/organizations/acme/projects': Array<Fault>(6).fill(fault) })
    const err = met(`${fault} 6 times`, await failure({ from: hcp.from }))
    t.match(err.message, new RegExp(`^the projects of "acme": (${why.source}), and again on each of 5 retries$`), fault)
    t.equal(hcp.log.filter((r) => r.path === '/organizations/acme/projects').length, 6, `${fault}: the first try and 5 retries`)
  }
  const unreachable = met('refused connection', await failure({ from: `http://127.0.0.1:${await freePort()}` }))
  t.match(unreachable.message, /^the discovery document of 127\.0\.0\.1:\d+ \(\/\.well-known\/terraform\.json\): the connection failed \(ECONNREFUSED\), and again on each of 5 retries$/)
})

t.test('a 429 that never ends, an answer that is no JSON:API, a redirect', async (t) => {
  const busy = await faulty(t, { '/organizations/acme': Array<Fault>(61).fill('429') }, { resetSeconds: '0.001' })
  t.match(met('429 forever', await failure({ from: busy.from })).message, /^organization "acme": 429 — still too many requests after 60 waits$/)
  const odd = await faulty(t, { '/organizations/acme/teams': ['empty'] })
  t.match(met('no JSON:API', await failure({ from: odd.from })).message, /^the teams of "acme": not a JSON:API list \(no data array\)/)
  const moved = await faulty(t, { '/organizations/acme': ['redirect'] })
  t.match(met('redirect', await failure({ from: moved.from })).message, /^organization "acme": 302 — a redirect to https:\/\/elsewhere\.example: give --from as the address the API answers at$/)
})

t.test('https only (plain http to a loopback address), wherever the address comes from; a token a header cannot carry', async (t) => {
  t.match(met('http --from', await failure({ from: 'http://tfe.example.com' })).message, /^--from must be https:\/\/ \(plain http:\/\/ only to a loopback address\): http:\/\/tfe\.example\.com$/)
  const pointing = await faulty(t, {}, { apiBase: 'http://tfe.example.com/api/v2/' })
  t.match(met('discovery names http', await failure({ from: pointing.from })).message, /^the discovery document of .*: the API's address it names must be https:\/\//)
  t.same(pointing.log.map((r) => r.path), ['/.well-known/terraform.json'], 'the token went nowhere')
  const registryOnly = await faulty(t, {}, { discovery: { 'modules.v1': '/api/registry/v1/modules/' } })
  t.match(met('discovery names no API', await failure({ from: registryOnly.from })).message, /^the discovery document of .*: it names no HCP Terraform API \(tfe\.v2\.2 or tfe\.v2\)/)
  const hcp = await faulty(t, {})
  const broken = met('token with a line break', await failure({ from: hcp.from, token: `${TOKEN}\n` }))
  t.match(broken.message, /^the token is empty or holds characters an Authorization header cannot carry/)
  t.same(hcp.log, [], 'nothing asked')

  t.equal(fromProblem('https://app.terraform.io'), undefined)
  t.equal(fromProblem('http://127.0.0.1:3000'), undefined)
  t.equal(fromProblem('http://127.8.9.10:3000'), undefined)
  t.equal(fromProblem('http://[::1]:3000'), undefined)
  t.equal(fromProblem('http://localhost:3000'), undefined)
  t.match(fromProblem('http://tfe.example.com'), /must be https:\/\//)
  t.match(fromProblem('http://128.0.0.1'), /must be https:\/\//)
  t.match(fromProblem('ftp://127.0.0.1'), /must be https:\/\//)
  t.match(fromProblem('https://user:pass@app.terraform.io'), /must not hold a user name or password/)
  t.match(fromProblem('app.terraform.io'), /is not a URL/)
})

t.test('a run stopped', async (t) => {
  const hcp = await faulty(t, {}, { delayMs: 50 })
  const controller = new AbortController()
  const lines: string[] = []
  const err = await readOrganization({ from: hcp.from, organization: 'acme', token: TOKEN, signal: controller.signal, onProgress: (p) => { lines.push(progressLine(p)); if (p.reading === 'projects') controller.abort() } })
    .then(() => new Error('fails: the read succeeded'), (e: Error) => e)
  met('stopped', { err, lines })
  t.equal(err.message, 'the mirror run was stopped')
})

t.test('the token is in no error and no progress line, whatever stopped the run', async (t) => {
  t.equal(failures.length, 18, 'every kind met above')
  for (const { kind, err, lines } of failures) {
    t.equal(err.name, 'MirrorError', `${kind}: the run's error`)
    const told = [err.message, String(err), err.stack ?? '', inspect(err, { depth: 10 }), JSON.stringify(err), String((err as { cause?: unknown }).cause ?? '')]
    t.notOk(told.some(leaks), `${kind}: "${err.message}"`)
    t.notOk(lines.some(leaks), `${kind}: no progress line`)
  }
})
