import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { ENGINE } from '../helper.js'
import { buildDirectory, CALLERS, FLAGS } from './directory.js'

/**
 * The exact requests HashiCorp's go-tfe sends for Teams (Create, Read, Update, Delete, List) and
 * TeamMembers (Add, List, Remove), byte for byte — `jsonapi.MarshalPayloadWithoutIncluded`
 * writes attributes in key order and ends the body with a newline; POST, PATCH and DELETE carry
 * `Content-Type: application/vnd.api+json` even without a body — and each answer decoded as
 * go-tfe decodes it (`jsonapi.UnmarshalPayload` into `Team`: `data.type` must be the struct's
 * primary type, each attribute of the type its struct tag names, relations resolved from
 * `included` by type and id).
 * @see https://github.com/hashicorp/go-tfe/blob/main/team.go
 * @see https://github.com/hashicorp/go-tfe/blob/main/team_member.go
 */

type GoField = 'string' | 'bool' | 'int' | { object: Record<string, GoField> }

/** go-tfe's `Team` attributes (team.go), and `TeamPermissions`, `OrganizationAccess`. */
const TEAM: Record<string, GoField> = {
  'is-unified': 'bool',
  name: 'string',
  'organization-access': { object: Object.fromEntries(FLAGS.map((flag) => [flag, 'bool' as const])) },
  visibility: 'string',
  permissions: { object: { 'can-destroy': 'bool', 'can-update-membership': 'bool' } },
  'users-count': 'int',
  'sso-team-id': 'string',
  'allow-member-token-management': 'bool'
}

function fieldErrors (value: unknown, type: GoField, path: string): string[] {
  if (value === null || value === undefined) return [] // the zero value
  if (type === 'string') return typeof value === 'string' ? [] : [`${path}: not a string`]
  if (type === 'bool') return typeof value === 'boolean' ? [] : [`${path}: not a bool`]
  if (type === 'int') return typeof value === 'number' && Number.isSafeInteger(value) ? [] : [`${path}: not an int`]
  if (typeof value !== 'object' || Array.isArray(value)) return [`${path}: not an object`]
  return Object.entries(type.object).flatMap(([name, field]) => fieldErrors((value as Record<string, unknown>)[name], field, `${path}.${name}`))
}

/** What `jsonapi.UnmarshalPayload` into `*Team` returns: the team and its users (from `included`), or the errors it would raise. */
function decodeTeam (node: any, included: any[] = []): { errors: string[], users: Array<{ id: string, username: string }> } {
  const errors: string[] = []
  if (node?.type !== 'teams') errors.push(`Trying to Unmarshal an object of type "${String(node?.type)}", but "teams" is expected`)
  if (typeof node?.id !== 'string') errors.push('data.id: not a string')
  errors.push(...Object.entries(TEAM).flatMap(([name, type]) => fieldErrors(node?.attributes?.[name], type, `attributes.${name}`)))
  const users = (node?.relationships?.users?.data ?? []).map((user: any) => {
    if (user.type !== 'users') errors.push(`relationships.users: an object of type "${String(user.type)}", but "users" is expected`)
    const full = included.find((x) => x.type === user.type && x.id === user.id)
    errors.push(...fieldErrors(full?.attributes?.username, 'string', `included ${String(user.id)}.username`))
    return { id: user.id, username: full?.attributes?.username ?? '' }
  })
  return { errors, users }
}

/** A request as go-tfe's client makes it. */
const goTfe = (app: FastifyInstance, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: string) => app.inject({
  method,
  url: `/api/v2/${path}`,
  headers: {
    authorization: `Bearer ${CALLERS.organization}`,
    accept: 'application/vnd.api+json',
    'user-agent': 'go-tfe',
    ...(method === 'GET' ? {} : { 'content-type': 'application/vnd.api+json' })
  },
  ...(body === undefined ? {} : { payload: body })
})

t.test(`go-tfe's Teams and TeamMembers, replayed, on ${ENGINE}`, async (t) => {
  const app = await buildDirectory(t)
  const allFlags = '{"manage-policies":false,"manage-policy-overrides":false,"delegate-policy-overrides":false,"manage-workspaces":true,"manage-vcs-settings":false,"manage-providers":false,"manage-modules":false,"manage-run-tasks":false,"manage-projects":false,"read-workspaces":true,"read-projects":false,"manage-membership":false,"manage-teams":false,"manage-organization-access":false,"access-secret-teams":false,"manage-agent-pools":false}'

  // Teams.Create, every organization-access flag configured (and the final v1's delegate-policy-overrides, which this service ignores)
  const created = await goTfe(app, 'POST', 'organizations/acme/teams',
    `{"data":{"type":"teams","attributes":{"allow-member-token-management":true,"name":"devs","organization-access":${allFlags},"sso-team-id":"abc","visibility":"organization"}}}\n`)
  t.equal(created.statusCode, 201, 'Teams.Create: 201')
  t.same(decodeTeam(created.json().data).errors, [], 'decodes into Team')
  const id = created.json().data.id as string
  t.match(created.json().data.attributes, { name: 'devs', visibility: 'organization', 'organization-access': { 'manage-workspaces': true, 'read-workspaces': true, 'manage-teams': false } })

  // Teams.Create, a name only (plus the provider's default)
  const minimal = await goTfe(app, 'POST', 'organizations/acme/teams', '{"data":{"type":"teams","attributes":{"allow-member-token-management":true,"name":"minimal"}}}\n')
  t.equal(minimal.statusCode, 201)
  t.equal(minimal.json().data.attributes.visibility, 'secret')

  // provider 0.22.0 (go-tfe v0.10): three flags, visibility always; its update sends the same set, name included
  const legacyBody = (visibility: string) => `{"data":{"type":"teams","attributes":{"name":"legacy","organization-access":{"manage-policies":false,"manage-workspaces":true,"manage-vcs-settings":false},"visibility":"${visibility}"}}}\n`
  const legacy = await goTfe(app, 'POST', 'organizations/acme/teams', legacyBody('secret'))
  t.equal(legacy.statusCode, 201, 'provider 0.22.0 create')
  const legacyUpdate = await goTfe(app, 'PATCH', `teams/${legacy.json().data.id as string}`, legacyBody('organization'))
  t.equal(legacyUpdate.statusCode, 200, 'provider 0.22.0 update')
  t.same(decodeTeam(legacyUpdate.json().data).errors, [])
  t.match(legacyUpdate.json().data.attributes, { visibility: 'organization', 'organization-access': { 'manage-workspaces': true, 'manage-policies': false } })

  // Teams.Read
  const read = await goTfe(app, 'GET', `teams/${id}`)
  t.equal(read.statusCode, 200, 'Teams.Read')
  t.same(decodeTeam(read.json().data).errors, [])

  // Teams.List, as the provider's data source asks
  const list = await goTfe(app, 'GET', 'organizations/acme/teams?filter%5Bnames%5D=devs')
  t.equal(list.statusCode, 200, 'Teams.List')
  t.same(list.json().data.flatMap((node: unknown) => decodeTeam(node).errors), [])
  t.same(list.json().data.map((node: any) => node.id), [id])

  // Teams.Update, as the newest provider sends it (sso-team-id "" to clear it)
  const updated = await goTfe(app, 'PATCH', `teams/${id}`,
    `{"data":{"type":"teams","attributes":{"allow-member-token-management":true,"name":"developers","organization-access":${allFlags.replace('"manage-modules":false', '"manage-modules":true')},"sso-team-id":"","visibility":"secret"}}}\n`)
  t.equal(updated.statusCode, 200, 'Teams.Update')
  t.same(decodeTeam(updated.json().data).errors, [])
  t.match(updated.json().data.attributes, { name: 'developers', visibility: 'secret', 'organization-access': { 'manage-modules': true } })

  // TeamMembers.Add
  const added = await goTfe(app, 'POST', `teams/${id}/relationships/users`, '{"data":[{"type":"users","id":"writer"},{"type":"users","id":"spare"}]}\n')
  t.equal(added.statusCode, 204, 'TeamMembers.Add')

  // TeamMembers.List (ListUsers: include=users, users resolved from included)
  const members = await goTfe(app, 'GET', `teams/${id}?include=users`)
  t.equal(members.statusCode, 200, 'TeamMembers.List')
  const decoded = decodeTeam(members.json().data, members.json().included)
  t.same(decoded.errors, [])
  t.same(decoded.users.map((user) => user.username), ['spare', 'writer'], 'every member with its username')

  // TeamMembers.Remove: DELETE with the same body
  const removed = await goTfe(app, 'DELETE', `teams/${id}/relationships/users`, '{"data":[{"type":"users","id":"spare"}]}\n')
  t.equal(removed.statusCode, 204, 'TeamMembers.Remove')
  const after = await goTfe(app, 'GET', `teams/${id}?include=users`)
  t.same(decodeTeam(after.json().data, after.json().included).users.map((user) => user.username), ['writer'])

  // Teams.Delete: no body, a Content-Type still; a second delete is the 404 the provider takes as gone
  const deleted = await goTfe(app, 'DELETE', `teams/${id}`)
  t.equal(deleted.statusCode, 204, 'Teams.Delete')
  const again = await goTfe(app, 'DELETE', `teams/${id}`)
  t.equal(again.statusCode, 404, 'ErrResourceNotFound: gone')
  t.equal((await goTfe(app, 'GET', `teams/${id}`)).statusCode, 404)
})
