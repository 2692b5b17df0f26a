import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { ENGINE } from '../helper.js'
import { observable } from '../teams/directory.js'
import { buildPeople, CALLERS, EMAILS, membershipOf, peopleClient } from './people.js'

/**
 * DESIGN §14.2, §14.3 through the API: who may invite, read, end a membership and change a team's
 * members by membership (everyone else: the 404 of a missing one, byte for byte); the 422s (an
 * email already a member, a team one may not name, the seed's and the host's memberships, the
 * owners team's last member, an unknown membership); whose email a caller reads; and the caller's
 * organizations for each kind of token.
 */
t.test(`organization memberships through the API on ${ENGINE}`, async (t) => {
  const app = await buildPeople(t)
  const api = peopleClient(t, app)
  const owner = CALLERS.owner
  let made = 0
  /** A fresh invitation (no user has its email), made by the owner. */
  const invitation = async (teams: string[] = []): Promise<string> => {
    const res = await api.invite('acme', `person${++made}@invited.test`, owner, teams)
    if (res.statusCode !== 201) throw new Error(res.body)
    return res.json().data.id
  }
  const missing = {
    list: observable(await api.list('no-such-organization', CALLERS.organization)),
    invite: observable(await api.invite('no-such-organization', 'x@y.test', CALLERS.organization)),
    show: observable(await api.show('ou-missing', CALLERS.organization)),
    destroy: observable(await api.destroy('ou-missing', CALLERS.organization)),
    add: observable(await api.addToTeam('team-missing', ['ou-missing'], CALLERS.organization)),
    remove: observable(await api.removeFromTeam('team-missing', ['ou-missing'], CALLERS.organization))
  }
  t.equal(missing.list.status, 404)
  const hidden = (t: Test, res: LightMyRequestResponse, kind: keyof typeof missing, who: string) =>
    t.same(observable(res), missing[kind], `${who}: ${kind} answers the 404 of a missing one, byte for byte`)

  t.test('who may invite, read and end a membership', async (t) => {
    const managers: Array<[string, string]> = [['the organization token', CALLERS.organization], ['the owners team token', CALLERS.ownersTeam],
      ['an owner', owner], ['a manage-teams team token', CALLERS.leadsTeam], ['a manage-teams member', CALLERS.lead], ['a manage-membership member', CALLERS.hr]]
    for (const [who, token] of managers) {
      const created = await api.invite('acme', `by-${who.replace(/\W+/g, '-')}@invited.test`, token)
      t.equal(created.statusCode, 201, `${who}: invite`)
      t.match(created.json().data, { type: 'organization-memberships', attributes: { status: 'invited' }, relationships: { organization: { data: { id: 'acme' } }, user: { data: { type: 'users' } } } })
      t.match(created.json().data.id, /^ou-[1-9A-HJ-NP-Za-km-z]{16}$/, 'an id of HCP Terraform’s shape')
      t.equal((await api.show(created.json().data.id, token)).statusCode, 200, `${who}: show`)
      t.equal((await api.destroy(created.json().data.id, token)).statusCode, 204, `${who}: end`)
      t.equal((await api.show(created.json().data.id, token)).statusCode, 404, `${who}: gone`)
    }
    const members: Array<[string, string]> = [['a workspace admin', CALLERS.workspaceAdmin], ['a manage-workspaces member', CALLERS.manager],
      ['a plain member', CALLERS.writer], ['a read-workspaces member', CALLERS.reader], ['a secret team’s member', CALLERS.secretMember], ['a team token', CALLERS.nonOwnerTeam]]
    const someone = await invitation()
    for (const [who, token] of members) {
      t.equal((await api.list('acme', token)).statusCode, 200, `${who}: reads the list`)
      t.equal((await api.show(someone, token)).statusCode, 200, `${who}: reads a membership`)
      hidden(t, await api.invite('acme', 'nope@invited.test', token), 'invite', who)
      hidden(t, await api.destroy(someone, token), 'destroy', who)
    }
    for (const [who, token] of [['another organization’s member', CALLERS.otherOrganization], ['a user of no organization', CALLERS.noTeam], ['another organization’s owner', CALLERS.globexOwner]] as const) {
      hidden(t, await api.list('acme', token), 'list', who)
      hidden(t, await api.show(someone, token), 'show', who)
      hidden(t, await api.invite('acme', 'nope@invited.test', token), 'invite', who)
      hidden(t, await api.destroy(someone, token), 'destroy', who)
    }
    // the organization token is an owner, but only the owners team manages the owners team's members (DESIGN §9.4)
    const toOwners = await api.invite('acme', 'future-owner@invited.test', owner, ['team-owners'])
    t.equal(toOwners.statusCode, 201, 'an owner (through the owners team) invites into the owners team')
    t.equal((await api.invite('acme', 'other-owner@invited.test', CALLERS.organization, ['team-owners'])).statusCode, 422, 'the organization token may not name the owners team')
    t.equal((await api.destroy(toOwners.json().data.id, owner)).statusCode, 204)
  })

  t.test('the 422s: an email already a member, a team the caller may not name, bad input; nothing changes', async (t) => {
    const taken = await api.invite('acme', 'WRITER@acme.test', owner)
    t.equal(taken.statusCode, 422, 'the email (case-insensitively) already has a membership here')
    t.match(taken.json().errors[0], { detail: /already has a membership/, source: { pointer: '/data/attributes/email' } })
    const users = await app.db.selectFrom('users').select('id').execute()
    const events = await app.db.selectFrom('audit_events').select('id').execute()
    const refused = await api.invite('acme', 'new-person@invited.test', CALLERS.hr, ['team-green', 'team-red'])
    t.equal(refused.statusCode, 422, 'a secret team the manage-membership member does not see')
    t.match(refused.json().errors[0].detail, /team-red/)
    t.equal((await api.invite('acme', 'new-person@invited.test', CALLERS.hr, ['team-writers'])).statusCode, 422, 'a team whose grants it does not hold')
    t.equal((await api.invite('acme', 'new-person@invited.test', owner, ['team-globex'])).statusCode, 422, 'another organization’s team')
    for (const email of ['not-an-email', 'two@at@signs.test', 'spaced out@x.test', '']) {
      t.equal((await api.invite('acme', email, owner)).statusCode, 422, `a bad email: ${JSON.stringify(email)}`)
    }
    t.equal((await api.send(undefined, 'POST', '/organizations/acme/organization-memberships', owner, { data: { type: 'organization-memberships', attributes: {} } })).statusCode, 422, 'no email')
    t.same(await app.db.selectFrom('users').select('id').execute(), users, 'no user made')
    t.same(await app.db.selectFrom('audit_events').select('id').execute(), events, 'no event')
    t.equal((await api.list('acme', owner, '?include=workspaces')).statusCode, 400, 'include of anything but user and teams')
    t.equal((await api.list('acme', owner, '?filter%5Bstatus%5D=gone')).statusCode, 422, 'a status that is none')
  })

  t.test('ending a membership the seed or the host manages, or the owners team’s last one: 422', async (t) => {
    const writer = (await membershipOf(app, 'user-writer'))!
    const bySeed = await api.destroy(writer, owner)
    t.equal(bySeed.statusCode, 422)
    t.equal(bySeed.json().errors[0].detail, 'managed by the seed file: the team memberships of writer (writers)', 'names the seed, the person and its teams')
    const ownerMembership = (await membershipOf(app, 'user-owner'))!
    t.match((await api.destroy(ownerMembership, owner)).json().errors[0].detail, /managed by the seed file/)
    // as if the API had made the membership: the owners team membership is still the host's
    await app.db.updateTable('organization_memberships').set({ managed_by: 'api' }).where('id', '=', ownerMembership).execute()
    const byHost = await api.destroy(ownerMembership, owner)
    t.equal(byHost.statusCode, 422)
    t.equal(byHost.json().errors[0].detail, 'managed by the host application: the team memberships of owner (owners)', 'names the source, the person and the teams')
    await app.db.updateTable('team_memberships').set({ managed_by: 'api' }).where('team_id', '=', 'team-owners').execute()
    const last = await api.destroy(ownerMembership, owner)
    t.equal(last.statusCode, 422)
    t.match(last.json().errors[0].detail, /owners team "owners" must keep at least one member/)
    t.ok(await membershipOf(app, 'user-owner'), 'still a member')
    t.equal((await api.destroy(ownerMembership, CALLERS.organization)).statusCode, 404, 'the organization token may not change the owners team’s members')
    await app.db.updateTable('team_memberships').set({ managed_by: 'host' }).where('team_id', '=', 'team-owners').execute()
    await app.db.updateTable('organization_memberships').set({ managed_by: 'seed' }).where('id', '=', ownerMembership).execute()
  })

  t.test('whose email a caller reads: those who manage memberships everyone’s, a member its own, and filters find nobody by another’s', async (t) => {
    const emails = async (token: string, query = '') => Object.fromEntries((await api.list('acme', token, `?page%5Bsize%5D=100${query}`)).json().data
      .filter((m: any) => m.attributes.status === 'active').map((m: any) => [m.relationships.user.data.id, m.attributes.email]))
    for (const token of [CALLERS.organization, CALLERS.ownersTeam, owner, CALLERS.lead, CALLERS.leadsTeam, CALLERS.hr]) {
      t.match(await emails(token), { 'user-writer': EMAILS.writer, 'user-reader': EMAILS.reader, 'user-owner': null }, 'a manager reads every email (a user with none: null)')
    }
    t.match(await emails(CALLERS.writer), { 'user-writer': EMAILS.writer, 'user-reader': null }, 'a member reads its own, not another’s')
    t.match(await emails(CALLERS.nonOwnerTeam), { 'user-writer': null, 'user-reader': null }, 'a team token reads none')
    const found = async (token: string, query: string) => (await api.list('acme', token, query)).json().data.map((m: any) => m.relationships.user.data.id)
    t.same(await found(CALLERS.writer, `?filter%5Bemail%5D=${encodeURIComponent(EMAILS.reader!)}`), [], 'filter[email] finds nobody by an email the member may not read')
    t.same(await found(CALLERS.writer, '?q=acme.test'), ['user-writer'], 'q finds only its own by email')
    t.same(await found(CALLERS.writer, '?q=READER'), ['user-reader'], 'q finds by username')
    t.same(await found(CALLERS.writer, `?filter%5Bemail%5D=${encodeURIComponent(EMAILS.writer!.toUpperCase())}`), ['user-writer'], 'its own, case-insensitively')
    t.same((await found(CALLERS.hr, `?filter%5Bemail%5D=reader%40acme.test,${encodeURIComponent(EMAILS.writer!)}`)).sort(), ['user-reader', 'user-writer'], 'a manager finds both, comma-separated')
    const included = (await api.list('acme', CALLERS.writer, '?include=user&page%5Bsize%5D=100')).json().included
    t.match(included.find((u: any) => u.id === 'user-reader'), { type: 'users', attributes: { username: 'reader', email: null } }, 'an included user’s email as the membership’s')
    t.match(included.find((u: any) => u.id === 'user-writer'), { attributes: { username: 'writer', email: EMAILS.writer } })
    const invited = await invitation()
    const asWriter = (await api.show(invited, CALLERS.writer, '?include=user')).json()
    t.equal(asWriter.data.attributes.email, null, 'an invitation’s email, hidden from a member')
    t.same(asWriter.included[0].attributes, { username: null, email: null }, 'its user has no username yet')
    t.match((await api.list('acme', owner, '?filter%5Bstatus%5D=invited')).json().data.map((m: any) => m.attributes.status), ['invited'], 'filter[status]')
    await api.destroy(invited, owner)
  })

  t.test('a team’s members by membership (§14.3): who may, an invited one waits, 422s', async (t) => {
    const writer = (await membershipOf(app, 'user-writer'))!
    const reader = (await membershipOf(app, 'user-reader'))!
    const invited = await invitation()
    t.equal((await api.addToTeam('team-green', [reader, invited], CALLERS.hr)).statusCode, 204, 'a manage-membership member, on a team it sees and holds')
    t.equal((await api.addToTeam('team-green', [reader], CALLERS.hr)).statusCode, 204, 'a present member: no error')
    const green = (await api.team('team-green', owner, '?include=organization-memberships,users')).json()
    t.equal(green.data.attributes['users-count'], 1, 'users-count counts the active member only')
    t.same(green.data.relationships.users.data.map((u: any) => u.id), ['user-reader'], 'the invited person is no user of the team yet')
    t.same(green.data.relationships['organization-memberships'].data.map((m: any) => m.id).sort(), [reader, invited].sort(), 'both memberships are the team’s')
    t.same(green.included.filter((x: any) => x.type === 'organization-memberships').map((m: any) => [m.id, m.attributes.status]).sort(),
      [[reader, 'active'], [invited, 'invited']].sort(), 'included, with their status')
    const listed = (await api.ofTeam('team-green', CALLERS.writer, '?page%5Bsize%5D=100')).json()
    t.same(listed.data.map((m: any) => m.id).sort(), [reader, invited].sort(), 'GET …/relationships/organization-memberships, for a reader of the team')
    t.equal(listed.meta.pagination['total-count'], 2)
    t.same((await app.db.selectFrom('audit_events').select(['action', 'meta']).where('resource_type', '=', 'team').where('resource_id', '=', 'team-green').execute())
      .map((e) => [e.action, e.meta]), [['add_member', { team: 'green', user: 'reader' }]], 'an add_member event for the active one; the invited one’s comes when they arrive')

    for (const [who, token] of [['a plain member', CALLERS.writer], ['a team token', CALLERS.nonOwnerTeam], ['another organization', CALLERS.otherOrganization]] as const) {
      hidden(t, await api.addToTeam('team-green', [reader], token), 'add', who)
      hidden(t, await api.removeFromTeam('team-green', [reader], token), 'remove', who)
    }
    hidden(t, await api.addToTeam('team-red', [reader], CALLERS.hr), 'add', 'a secret team the manage-membership member does not see')
    hidden(t, await api.addToTeam('team-writers', [reader], CALLERS.hr), 'add', 'a team whose grants it does not hold')
    hidden(t, await api.ofTeam('team-red', CALLERS.writer), 'add', 'a secret team’s memberships, for a member of another team')

    const unknown = await api.addToTeam('team-green', ['ou-nothing', reader], CALLERS.hr)
    t.equal(unknown.statusCode, 422)
    t.match(unknown.json().errors[0].detail, /Organization membership not found: ou-nothing/)
    const globex = (await membershipOf(app, 'user-globex', 'org-globex'))!
    t.equal((await api.addToTeam('team-green', [globex], owner)).statusCode, 422, 'another organization’s membership')
    const bySeed = await api.removeFromTeam('team-writers', [writer], owner)
    t.equal(bySeed.statusCode, 422)
    t.match(bySeed.json().errors[0].detail, /managed by the seed file/)

    t.equal((await api.removeFromTeam('team-green', [reader, invited], CALLERS.hr)).statusCode, 204)
    t.same((await api.team('team-green', owner)).json().data.relationships['organization-memberships'].data, [], 'both gone from the team')
    t.equal((await api.show(reader, owner)).json().data.attributes.status, 'active', 'the last team gone through the API, the person stays a member')
    t.equal((await api.removeFromTeam('team-green', [reader], CALLERS.hr)).statusCode, 204, 'an absent one: no error')
    await api.destroy(invited, owner)
  })

  t.test('ending a membership: the person leaves every team there, with events, from the next request', async (t) => {
    // lonely is a user of no organization, with an email: an invitation to it is active at once, with its teams
    const created = await api.invite('acme', 'LONELY@nowhere.test', owner, ['team-writers', 'team-green'])
    t.equal(created.statusCode, 201)
    t.match(created.json().data, { attributes: { status: 'active', email: EMAILS.lonely }, relationships: { user: { data: { id: 'user-lonely' } } } })
    t.same(created.json().data.relationships.teams.data.map((x: any) => x.id), ['team-green', 'team-writers'])
    const read = (token: string) => app.inject({ url: '/api/v2/workspaces/ws-prod', headers: { authorization: `Bearer ${token}` } })
    t.equal((await read(CALLERS.noTeam)).statusCode, 200, 'writers grant it prod at once')
    t.same((await api.organizations(CALLERS.noTeam)).json().data.map((o: any) => o.id), ['acme'])
    const id = created.json().data.id as string
    const before = await app.db.selectFrom('audit_events').select('id').execute()
    t.equal((await api.destroy(id, owner)).statusCode, 204)
    t.equal((await read(CALLERS.noTeam)).statusCode, 404, 'from the very next request')
    t.same((await api.organizations(CALLERS.noTeam)).json().data, [], 'no organization')
    const events = await app.db.selectFrom('audit_events').select(['resource_type', 'action', 'meta', 'accessor_description'])
      .where('id', 'not in', before.map((e) => e.id)).orderBy('resource_type').orderBy('resource_id').execute()
    t.same(events.map((e) => [e.resource_type, e.action, e.meta]).sort(), [
      ['organization-membership', 'destroy', { email: EMAILS.lonely, user: 'lonely' }],
      ['team', 'remove_member', { team: 'green', user: 'lonely' }],
      ['team', 'remove_member', { team: 'writers', user: 'lonely' }]
    ].sort(), 'a remove_member per team, then the membership’s destroy')
    t.ok(events.every((e) => e.accessor_description === 'owner'))
    t.ok(await app.db.selectFrom('users').select('id').where('id', '=', 'user-lonely').executeTakeFirst(), 'the user stays: it is not an invitation’s')
    const create = await app.db.selectFrom('audit_events').select('meta').where('resource_type', '=', 'organization-membership').where('action', '=', 'create').where('resource_id', '=', id).execute()
    t.same(create.map((e) => e.meta), [{ email: EMAILS.lonely, user: 'lonely' }], 'its create event, with the email')
    t.equal((await api.destroy(id, owner)).statusCode, 404, 'a second end: 404')
  })

  t.test('an invitation ended takes the user it made with it', async (t) => {
    const id = await invitation(['team-green'])
    const user = (await api.show(id, owner)).json().data.relationships.user.data.id as string
    t.equal((await api.destroy(id, owner)).statusCode, 204)
    t.equal(await app.db.selectFrom('users').select('id').where('id', '=', user).executeTakeFirst(), undefined, 'the placeholder is gone')
    t.same(await app.db.selectFrom('organization_membership_teams').selectAll().execute(), [], 'and its teams')
  })

  t.test('GET /organizations: the caller’s own, for each kind of token', async (t) => {
    const names = async (token: string, query = '') => (await api.organizations(token, query)).json().data.map((o: any) => o.id)
    for (const token of [CALLERS.organization, CALLERS.ownersTeam, CALLERS.nonOwnerTeam, owner, CALLERS.writer, CALLERS.hr]) t.same(await names(token), ['acme'])
    t.same(await names(CALLERS.otherOrganization), ['globex'])
    t.same(await names(CALLERS.noTeam), [], 'a user of no organization: none')
    // globex's member, invited into acme: active at once (it has a user), so it belongs to both
    const both = await api.invite('acme', EMAILS['globex-user']!, owner)
    t.equal(both.json().data.attributes.status, 'active')
    t.same(await names(CALLERS.otherOrganization), ['acme', 'globex'], 'a user token: each organization it is an active member of, by name')
    t.same(await names(CALLERS.otherOrganization, '?q=GLO'), ['globex'], 'q: a substring of the name')
    const page = (await api.organizations(CALLERS.otherOrganization, '?page%5Bsize%5D=1&page%5Bnumber%5D=2')).json()
    t.same(page.data.map((o: any) => o.id), ['globex'])
    t.match(page.meta.pagination, { 'current-page': 2, 'total-pages': 2, 'total-count': 2, 'next-page': null, 'prev-page': 1 })
    t.match(page.data[0], { type: 'organizations', attributes: { name: 'globex' }, relationships: { 'default-project': { data: { type: 'projects' } } }, links: { self: '/api/v2/organizations/globex' } })
    const single = (await api.send(undefined, 'GET', '/organizations/globex', CALLERS.otherOrganization)).json()
    t.same(page.data[0], single.data, 'as GET /organizations/:org answers it')
    t.equal((await api.destroy(both.json().data.id, owner)).statusCode, 204)
    t.same(await names(CALLERS.otherOrganization), ['globex'])
    const revoked = await app.inject({ url: '/api/v2/organizations', headers: { authorization: 'Bearer not-a-token' } })
    t.equal(revoked.statusCode, 401)
  })
})
