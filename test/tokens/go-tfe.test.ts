import t, { type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'

/**
 * go-tfe's TeamTokens, OrganizationTokens, UserTokens and Users.ReadCurrent, replayed: the exact
 * requests it sends (team_token.go, organization_token.go, user_token.go, user.go: method, path,
 * the headers of every request, the body hashicorp/jsonapi marshals from the option structs — a
 * struct without a primary field gives `"type":""`, an empty attribute map is left out, a time is
 * `2006-01-02T15:04:05Z` in UTC, and the encoder ends the body with a newline), and every answer
 * checked as hashicorp/jsonapi unmarshals it into go-tfe's structs.
 * @see https://github.com/hashicorp/go-tfe/blob/main/team_token.go
 */

/** The fields of a go-tfe struct, by their jsonapi tags: `primary,<type>`, `attr,<name>[,iso8601]`, `polyrelation,<name>`. */
type Field = 'string' | 'bool' | 'iso8601' | { polyrelation: string[] }
interface GoStruct { primary: string, attributes: Record<string, Field>, relationships?: Record<string, Field> }

const TOKEN_ATTRIBUTES: Record<string, Field> = { 'created-at': 'iso8601', description: 'string', 'last-used-at': 'iso8601', token: 'string', 'expired-at': 'iso8601' }
const TeamToken: GoStruct = { primary: 'authentication-tokens', attributes: TOKEN_ATTRIBUTES }
const OrganizationToken: GoStruct = TeamToken
const UserToken: GoStruct = { primary: 'authentication-tokens', attributes: TOKEN_ATTRIBUTES, relationships: { 'created-by': { polyrelation: ['organizations', 'teams', 'users'] } } }
const User: GoStruct = { primary: 'users', attributes: { 'avatar-url': 'string', email: 'string', 'is-service-account': 'bool', 'unconfirmed-email': 'string', username: 'string', 'v2-only': 'bool' } }

/** time.Parse("2006-01-02T15:04:05Z", …): a literal Z; a fraction of a second is accepted after the seconds. */
const ISO8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

/** The errors hashicorp/jsonapi would return unmarshalling `node` (a resource object) into `go`. */
function unmarshalErrors (node: unknown, go: GoStruct, path = 'data'): string[] {
  if (typeof node !== 'object' || node === null) return [`${path}: not an object`]
  const { type, id, attributes = {}, relationships = {} } = node as { type: unknown, id: unknown, attributes?: Record<string, unknown>, relationships?: Record<string, { data?: unknown }> }
  const errors: string[] = []
  if (type !== go.primary) errors.push(`${path}.type: ${JSON.stringify(type)} is not ${go.primary} (ErrTypeMismatch)`)
  if (typeof id !== 'string') errors.push(`${path}.id: not a string`)
  for (const [name, field] of Object.entries(go.attributes)) {
    const value = attributes[name]
    if (value === undefined || value === null) continue // absent or null: the zero value
    if (field === 'string' && typeof value !== 'string') errors.push(`${path}.attributes.${name}: not a string`)
    if (field === 'bool' && typeof value !== 'boolean') errors.push(`${path}.attributes.${name}: not a bool`)
    if (field === 'iso8601' && (typeof value !== 'string' || !ISO8601.test(value))) errors.push(`${path}.attributes.${name}: ErrInvalidISO8601 (${JSON.stringify(value)})`)
  }
  for (const [name, field] of Object.entries(go.relationships ?? {})) {
    const relation = relationships[name]
    if (relation === undefined || relation.data === null || relation.data === undefined) continue
    const data = relation.data as { type?: unknown, id?: unknown }
    if (typeof field === 'object' && (!field.polyrelation.includes(data.type as string) || typeof data.id !== 'string')) errors.push(`${path}.relationships.${name}: no choice for ${JSON.stringify(data)}`)
  }
  return errors
}

/** go-tfe's *Pagination, from meta.pagination: every field an int. */
function paginationErrors (body: { meta?: { pagination?: Record<string, unknown> } }): string[] {
  const pagination = body.meta?.pagination
  if (pagination === undefined) return ['meta.pagination: missing']
  return ['current-page', 'total-pages', 'total-count'].filter((name) => !Number.isSafeInteger(pagination[name])).map((name) => `meta.pagination.${name}: not an int`)
}

/** A request exactly as go-tfe's client sends one (tfe.go NewRequest and its retrying transport). */
function goTfe (app: FastifyInstance, token: string) {
  return async (method: 'GET' | 'POST' | 'DELETE', path: string, body?: string): Promise<LightMyRequestResponse> => await app.inject({
    method,
    url: `/api/v2/${path}`,
    headers: {
      accept: 'application/vnd.api+json',
      'content-type': 'application/vnd.api+json',
      'user-agent': 'go-tfe',
      authorization: `Bearer ${token}`
    },
    ...(body === undefined ? {} : { payload: body })
  })
}

t.test(`go-tfe's token clients, replayed, on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world })
  const asOwner = goTfe(app, TOKENS.owner)
  const decodes = (t: Test, res: LightMyRequestResponse, go: GoStruct) => {
    t.equal(res.headers['content-type'], 'application/vnd.api+json')
    t.same(unmarshalErrors(res.json().data, go), [], 'decodes as go-tfe decodes it')
  }

  t.test('TeamTokens: Create, Read, Create again (regenerate), Delete', async (t) => {
    // Create(ctx, "team-green", TeamTokenCreateOptions{})
    const created = await asOwner('POST', 'teams/team-green/authentication-token', '{"data":{"type":""}}\n')
    t.equal(created.statusCode, 201)
    decodes(t, created, TeamToken)
    const secret = created.json().data.attributes.token as string
    t.ok(secret.length > 40)
    // Read(ctx, "team-green")
    const read = await asOwner('GET', 'teams/team-green/authentication-token')
    t.equal(read.statusCode, 200)
    decodes(t, read, TeamToken)
    t.equal(read.json().data.attributes.token, null, 'TeamToken.Token is "" on a read')
    // Create(ctx, "team-green", TeamTokenCreateOptions{ExpiredAt: &t}) regenerates
    const again = await asOwner('POST', 'teams/team-green/authentication-token', '{"data":{"type":"","attributes":{"expired-at":"2099-12-31T23:59:59Z"}}}\n')
    t.equal(again.statusCode, 201)
    decodes(t, again, TeamToken)
    t.equal(again.json().data.attributes['expired-at'], '2099-12-31T23:59:59.000Z')
    t.equal((await goTfe(app, secret)('GET', 'teams/team-green')).statusCode, 401, 'the one before: 401')
    // Delete(ctx, "team-green"): req.Do(ctx, nil) wants a 2xx
    const deleted = await asOwner('DELETE', 'teams/team-green/authentication-token')
    t.equal(deleted.statusCode, 204)
    // Read after Delete: 404, which go-tfe turns into ErrResourceNotFound (the provider then removes it from state)
    const gone = await asOwner('GET', 'teams/team-green/authentication-token')
    t.equal(gone.statusCode, 404)
    t.same(gone.json(), { errors: [{ status: '404', title: 'not found' }] })
  })

  t.test('OrganizationTokens: Read (404 first), Create, Read, Delete', async (t) => {
    const before = await asOwner('GET', 'organizations/acme/authentication-token')
    t.equal(before.statusCode, 404, 'the provider reads before it creates')
    const created = await asOwner('POST', 'organizations/acme/authentication-token', '{"data":{"type":""}}\n')
    t.equal(created.statusCode, 201)
    decodes(t, created, OrganizationToken)
    const secret = created.json().data.attributes.token as string
    const read = await asOwner('GET', 'organizations/acme/authentication-token')
    t.equal(read.statusCode, 200)
    decodes(t, read, OrganizationToken)
    t.equal(read.json().data.id, created.json().data.id)
    const trail = await goTfe(app, secret)('GET', 'organization/audit-trail')
    t.equal(trail.statusCode, 200, 'the new token reads the audit trail (AuditTrails.List)')
    t.equal((await asOwner('DELETE', 'organizations/acme/authentication-token')).statusCode, 204)
    t.equal((await goTfe(app, secret)('GET', 'organization/audit-trail')).statusCode, 401)
  })

  t.test('UserTokens: Create, List, Read, Delete; Users.ReadCurrent', async (t) => {
    const asWriter = goTfe(app, TOKENS.writer)
    // Create(ctx, "user-writer", UserTokenCreateOptions{Description: "go-tfe"}); user ids are path-escaped
    const created = await asWriter('POST', 'users/user-writer/authentication-tokens', '{"data":{"type":"","attributes":{"description":"go-tfe"}}}\n')
    t.equal(created.statusCode, 201)
    decodes(t, created, UserToken)
    t.same(created.json().data.relationships['created-by'].data, { id: 'user-writer', type: 'users' }, 'CreatedBy.User')
    const { id, attributes: { token: secret } } = created.json().data
    // List(ctx, "user-writer")
    const list = await asWriter('GET', 'users/user-writer/authentication-tokens')
    t.equal(list.statusCode, 200)
    t.same(list.json().data.flatMap((node: unknown, i: number) => unmarshalErrors(node, UserToken, `data[${i}]`)), [], 'every item decodes')
    t.same(paginationErrors(list.json()), [], 'the pagination decodes')
    t.ok(list.json().data.some((node: { id: string }) => node.id === id))
    // Read(ctx, id)
    const read = await asWriter('GET', `authentication-tokens/${id}`)
    t.equal(read.statusCode, 200)
    decodes(t, read, UserToken)
    // Users.ReadCurrent(ctx) with the new token
    const current = await goTfe(app, secret)('GET', 'account/details')
    t.equal(current.statusCode, 200)
    decodes(t, current, User)
    t.same(current.json().data, { id: 'user-writer', type: 'users', attributes: { username: 'writer' } })
    // Delete(ctx, id)
    t.equal((await asWriter('DELETE', `authentication-tokens/${id}`)).statusCode, 204)
    t.equal((await goTfe(app, secret)('GET', 'account/details')).statusCode, 401)
    t.equal((await asWriter('GET', `authentication-tokens/${id}`)).statusCode, 404)
  })

  t.test('older go-tfe: a create body without a type, or with the type set', async (t) => {
    for (const body of ['{"data":{"attributes":{}}}\n', '{"data":{"type":"authentication-tokens"}}\n']) {
      const res = await asOwner('POST', 'teams/team-blue/authentication-token', body)
      t.equal(res.statusCode, 201, body.trim())
      decodes(t, res, TeamToken)
    }
  })
})
