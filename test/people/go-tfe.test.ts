import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { ENGINE } from '../helper.js'
import { decodeMany, decodeOne, MEMBERSHIP, ORGANIZATION, TEAM, type Decoded } from './go-jsonapi.js'
import { buildPeople, CALLERS, EMAILS, membershipOf } from './people.js'

/**
 * The exact requests HashiCorp's go-tfe sends for OrganizationMemberships (Create, List with its
 * filters, Read, ReadWithOptions with include, Delete), TeamMembers with OrganizationMembershipIDs
 * (Add, Remove, ListOrganizationMemberships) and Organizations.List — v1 (v1.110.0: its own query
 * encoding, keys sorted, `filter[…]` and `include` values joined with an escaped comma) and the
 * provider 0.22.0's v0.10.2 (`include=` always sent) — byte for byte: `MarshalPayloadWithoutIncluded`
 * bodies (type before id, attributes sorted, a trailing newline), `Content-Type` on POST and DELETE
 * even without a body; each answer decoded as go-tfe decodes it into its structs (./go-jsonapi.ts).
 * @see https://github.com/hashicorp/go-tfe/blob/v1.109.0/organization_membership.go
 * @see https://github.com/hashicorp/go-tfe/blob/v1.109.0/team_member.go
 */

/** A request as go-tfe's client makes it. */
const goTfe = (app: FastifyInstance, method: 'GET' | 'POST' | 'DELETE', path: string, body?: string, token: string = CALLERS.organization) => app.inject({
  method,
  url: `/api/v2/${path}`,
  headers: {
    authorization: `Bearer ${token}`,
    accept: 'application/vnd.api+json',
    'user-agent': 'go-tfe',
    ...(method === 'GET' ? {} : { 'content-type': 'application/vnd.api+json' })
  },
  ...(body === undefined ? {} : { payload: body })
})

const membershipIds = (ids: string[]) => `{"data":[${ids.map((id) => `{"type":"organization-memberships","id":"${id}"}`).join(',')}]}\n`

t.test(`go-tfe's OrganizationMemberships, TeamMembers and Organizations, replayed, on ${ENGINE}`, async (t) => {
  const app = await buildPeople(t)

  // OrganizationMemberships.Create: the email only (as the provider sends it), then with teams
  const created = await goTfe(app, 'POST', 'organizations/acme/organization-memberships', '{"data":{"type":"organization-memberships","attributes":{"email":"a.b+c@example.com"}}}\n')
  t.equal(created.statusCode, 201, 'Create')
  const one = decodeOne(created.json(), MEMBERSHIP)
  t.same(one.errors, [], 'decodes into OrganizationMembership')
  t.match(one.value, { attributes: { status: 'invited', email: 'a.b+c@example.com' }, relations: { organization: { id: 'acme' }, user: { id: /^user-/ } } })
  const invited = one.value.id
  const withTeams = await goTfe(app, 'POST', 'organizations/acme/organization-memberships',
    '{"data":{"type":"organization-memberships","attributes":{"email":"lonely@nowhere.test"},"relationships":{"teams":{"data":[{"type":"teams","id":"team-green"}]}}}}\n')
  t.equal(withTeams.statusCode, 201, 'Create with Teams')
  const active = decodeOne(withTeams.json(), MEMBERSHIP)
  t.same(active.errors, [])
  t.match(active.value, { attributes: { status: 'active', email: EMAILS.lonely }, relations: { user: { id: 'user-lonely' } } })
  t.same((active.value.relations.teams as Decoded[]).map((team) => team.id), ['team-green'])

  // OrganizationMemberships.List with every option, keys sorted and values joined by go-tfe's encodeQueryParams
  const filtered = await goTfe(app, 'GET', 'organizations/acme/organization-memberships?filter%5Bemail%5D=a.b%2Bc%40example.com%2Cwriter%40acme.test&filter%5Bstatus%5D=invited&include=user%2Cteams&page%5Bnumber%5D=1&page%5Bsize%5D=100&q=example')
  t.equal(filtered.statusCode, 200, 'List with Emails, Status, Include, Query, ListOptions')
  const many = decodeMany(filtered.json(), MEMBERSHIP)
  t.same(many.errors, [], 'decodes into OrganizationMembershipList')
  t.same(many.items.map((m) => m.id), [invited], 'filter[email] and filter[status] and q, all at once')
  t.match(many.items[0]!.relations.user, { id: (one.value.relations.user as Decoded).id, attributes: { email: 'a.b+c@example.com', username: null } }, 'its user from included')
  t.match(many.pagination, { 'current-page': 1, 'total-count': 1, 'total-pages': 1 })
  const everyone = decodeMany((await goTfe(app, 'GET', 'organizations/acme/organization-memberships')).json(), MEMBERSHIP)
  t.same(everyone.errors, [])
  t.ok(everyone.items.length >= 10, 'List without options: every member, the first page')
  const byEmail = decodeMany((await goTfe(app, 'GET', 'organizations/acme/organization-memberships?filter%5Bemail%5D=writer%40acme.test&include=user')).json(), MEMBERSHIP)
  t.match(byEmail.items.map((m) => m.relations.user), [{ id: 'user-writer', attributes: { email: EMAILS.writer, username: 'writer' } }], 'by email, its user’s email included (what the provider matches)')
  // go-tfe v0.10.2 (provider 0.22.0): include= always sent
  const old = await goTfe(app, 'GET', 'organizations/acme/organization-memberships?include=')
  t.equal(old.statusCode, 200, 'v0.10.2 List: include=')
  t.same(decodeMany(old.json(), MEMBERSHIP).errors, [])

  // Read, ReadWithOptions
  const read = await goTfe(app, 'GET', `organization-memberships/${invited}`)
  t.equal(read.statusCode, 200, 'Read')
  t.same(decodeOne(read.json(), MEMBERSHIP).errors, [])
  t.equal((await goTfe(app, 'GET', `organization-memberships/${invited}?include=`)).statusCode, 200, 'v0.10.2 Read: include=')
  const withOptions = await goTfe(app, 'GET', `organization-memberships/${active.value.id}?include=user%2Cteams`)
  t.equal(withOptions.statusCode, 200, 'ReadWithOptions, include user and teams')
  const full = decodeOne(withOptions.json(), MEMBERSHIP)
  t.same(full.errors, [])
  t.match(full.value.relations.user, { id: 'user-lonely', attributes: { username: 'lonely', email: EMAILS.lonely } })
  t.match(full.value.relations.teams, [{ id: 'team-green', attributes: { name: 'green', visibility: 'organization' } }], 'teams from included')

  // TeamMembers.Add and Remove with OrganizationMembershipIDs; ListOrganizationMemberships
  const reader = (await membershipOf(app, 'user-reader'))!
  t.equal((await goTfe(app, 'POST', 'teams/team-green/relationships/organization-memberships', membershipIds([reader, invited]))).statusCode, 204, 'TeamMembers.Add')
  const listed = await goTfe(app, 'GET', 'teams/team-green?include=organization-memberships')
  t.equal(listed.statusCode, 200, 'TeamMembers.ListOrganizationMemberships')
  const team = decodeOne(listed.json(), TEAM)
  t.same(team.errors, [], 'decodes into Team, its memberships from included')
  const ofTeam = team.value.relations['organization-memberships'] as Decoded[]
  t.same(ofTeam.map((m) => m.id).sort(), [active.value.id, reader, invited].sort())
  t.same(ofTeam.map((m) => m.attributes.status).sort(), ['active', 'active', 'invited'])
  t.equal((await goTfe(app, 'DELETE', 'teams/team-green/relationships/organization-memberships', membershipIds([reader, invited]))).statusCode, 204, 'TeamMembers.Remove')
  t.same((decodeOne((await goTfe(app, 'GET', 'teams/team-green?include=organization-memberships')).json(), TEAM).value.relations['organization-memberships'] as Decoded[]).map((m) => m.id), [active.value.id])
  t.equal((await goTfe(app, 'POST', 'teams/team-missing/relationships/organization-memberships', membershipIds([reader]))).statusCode, 404, 'ErrResourceNotFound')

  // Delete: no body, a Content-Type still; a second delete is the 404 go-tfe takes as ErrResourceNotFound
  t.equal((await goTfe(app, 'DELETE', `organization-memberships/${invited}`)).statusCode, 204, 'Delete')
  t.equal((await goTfe(app, 'DELETE', `organization-memberships/${invited}`)).statusCode, 404)
  t.equal((await goTfe(app, 'GET', `organization-memberships/${invited}`)).statusCode, 404)

  // Organizations.List: without options (v0.10.2 and v1), then paged as v1 sends it
  for (const [token, names] of [[CALLERS.organization, ['acme']], [CALLERS.nonOwnerTeam, ['acme']], [CALLERS.writer, ['acme']], [CALLERS.otherOrganization, ['globex']]] as const) {
    const res = await goTfe(app, 'GET', 'organizations', undefined, token)
    t.equal(res.statusCode, 200, 'Organizations.List')
    const orgs = decodeMany(res.json(), ORGANIZATION)
    t.same(orgs.errors, [], 'decodes into OrganizationList')
    t.same(orgs.items.map((o) => o.id), names, 'Name is the primary: the id')
    t.match(orgs.items[0]!.relations['default-project'], { id: /^prj-/ })
  }
  const paged = await goTfe(app, 'GET', 'organizations?page%5Bnumber%5D=1&page%5Bsize%5D=100&q=ac', undefined, CALLERS.writer)
  t.same(decodeMany(paged.json(), ORGANIZATION).items.map((o) => o.id), ['acme'], 'with ListOptions and Query')
  t.same(decodeMany((await goTfe(app, 'GET', 'organizations?page%5Bnumber%5D=2&page%5Bsize%5D=100', undefined, CALLERS.writer)).json(), ORGANIZATION).items, [], 'a page past the end')
})
