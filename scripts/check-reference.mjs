// Compares the service's answers with HashiCorp's own OpenAPI description of the team-access
// endpoints, when a copy of it is at hand: REFERENCE_OPENAPI=path, or
// ../shared/reference/hcp-terraform-team-workspaces.openapi.json beside the clone. Without one it
// says so and exits 0: the suite itself validates against the project's own schemas/openapi.json.
// Run after `npm run build` (npm run check:reference does both).
import { existsSync, readFileSync } from 'node:fs'
import { Ajv } from 'ajv'
import { buildApp } from '../dist/src/app.js'
import { applySeed } from '../dist/src/directory/seed.js'

const path = process.env.REFERENCE_OPENAPI ??
  new URL('../../shared/reference/hcp-terraform-team-workspaces.openapi.json', import.meta.url).pathname
if (!existsSync(path)) {
  console.log(`check:reference: no reference description at ${path}; nothing compared (set REFERENCE_OPENAPI to compare)`)
  process.exit(0)
}
const reference = JSON.parse(readFileSync(path, 'utf8'))

/** OpenAPI 3.0's `nullable` is not JSON Schema: turn it into a `null` alternative. */
function toJsonSchema (node) {
  if (Array.isArray(node)) return node.map(toJsonSchema)
  if (node === null || typeof node !== 'object') return node
  const { nullable, example, readOnly, ...rest } = node
  const out = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, toJsonSchema(v)]))
  return nullable === true ? { anyOf: [out, { type: 'null' }] } : out
}
const ajv = new Ajv({ strict: false, allErrors: true })
// the reference says 201 on add; HCP Terraform answers 200 with the same document, and so do we
const validatorOf = (refPath, method, status) => {
  const schema = (reference.paths ?? reference)[refPath][method].responses[status].content?.['application/vnd.api+json']?.schema
  return schema === undefined ? null : ajv.compile(toJsonSchema(schema))
}

const token = 'reference-organization-token'
const app = await buildApp({ port: 0, host: '127.0.0.1', database: { dataDir: 'memory://' }, logLevel: 'silent', rateLimit: 0, demo: false }, { logger: false })
await applySeed(app.db, {
  organizations: [{
    id: 'org-Reference0000001',
    name: 'reference',
    tokens: [token],
    teams: [{ id: 'team-Reference000001', name: 'devs', visibility: 'organization' }, { id: 'team-Reference000002', name: 'ops' }],
    workspaces: [{ id: 'ws-Reference00000001', name: 'prod' }],
    'team-access': [{ id: 'tws-Reference0000001', team: 'devs', workspace: 'prod', access: 'custom', runs: 'apply' }]
  }]
})
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.api+json' }
const list = '/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-Reference00000001'
const calls = [
  ['list', 'GET', list, undefined, ['/team-workspaces', 'get', '200']],
  ['list, paginated', 'GET', `${list}&page%5Bsize%5D=1`, undefined, ['/team-workspaces', 'get', '200']],
  ['show', 'GET', '/api/v2/team-workspaces/tws-Reference0000001', undefined, ['/team-workspaces/{team_workspace_id}', 'get', '200']],
  ['add', 'POST', '/api/v2/team-workspaces', { data: { type: 'team-workspaces', attributes: { access: 'write' }, relationships: { team: { data: { type: 'teams', id: 'team-Reference000002' } }, workspace: { data: { type: 'workspaces', id: 'ws-Reference00000001' } } } } }, ['/team-workspaces', 'post', '201']],
  ['update', 'PATCH', '/api/v2/team-workspaces/tws-Reference0000001', { data: { type: 'team-workspaces', attributes: { access: 'custom', variables: 'write' } } }, ['/team-workspaces/{team_workspace_id}', 'patch', '200']],
  ['remove', 'DELETE', '/api/v2/team-workspaces/tws-Reference0000001', undefined, ['/team-workspaces/{team_workspace_id}', 'delete', '204']]
]
let failed = 0
for (const [name, method, url, body, [refPath, refMethod, status]] of calls) {
  const res = await app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) })
  const validate = validatorOf(refPath, refMethod, status)
  const ok = res.statusCode < 300 && (validate === null ? res.body === '' : validate(res.json()))
  if (!ok) failed++
  console.log(`${ok ? 'ok' : 'NOT ok'}  ${name}: ${res.statusCode}${ok ? '' : ` ${JSON.stringify(validate?.errors ?? res.body)}`}`)
}
await app.close()
console.log(failed === 0 ? `check:reference: every answer matches ${path}` : `check:reference: ${failed} answer(s) do not match`)
process.exit(failed === 0 ? 0 : 1)
