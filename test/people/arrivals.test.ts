import t from 'tap'
import { applySeedDocument, SeedError } from '../../src/directory/seed.js'
import { directory, DirectoryError } from '../../src/directory/host-directory.js'
import { ENGINE } from '../helper.js'
import { buildPeople, CALLERS, membershipOf, peopleClient, peopleSeed } from './people.js'

/**
 * DESIGN §14.2: an invited person holds nothing until they arrive — a seed or the host declaring a
 * user with the invitation's email — and then holds the teams the invitation gave them from the
 * very next request. A user declared without an id takes the invitation's user over (its id
 * kept); one with an id of its own, or a user that exists, absorbs it; re-applies change nothing.
 * A seed-managed person the document lists in no team of an organization leaves it. The host's
 * users gain emails, and its directory invites, lists and ends memberships.
 */
t.test(`people arriving and leaving on ${ENGINE}`, async (t) => {
  const app = await buildPeople(t)
  const api = peopleClient(t, app)
  const owner = CALLERS.owner
  const read = async (token: string, path = '/workspaces/ws-prod') => (await app.inject({ url: `/api/v2${path}`, headers: { authorization: `Bearer ${token}` } })).statusCode
  /** The users the seed declares beyond the world's, applied as a restart of the service would. */
  const arrivals: Array<Record<string, unknown>> = []
  const apply = async (change: (doc: any) => void = () => {}) => {
    const doc = peopleSeed(arrivals)
    change(doc)
    return await applySeedDocument(app.db, doc)
  }
  const userOf = async (membership: string) => (await api.show(membership, owner)).json().data.relationships.user.data.id as string

  t.test('an invitation holds nothing; a seed declaring its email makes it active, with its teams, from the next request', async (t) => {
    const invited = await api.invite('acme', 'Dana@Acme.test', owner, ['team-writers'])
    t.equal(invited.statusCode, 201)
    const id = invited.json().data.id as string
    const placeholder = invited.json().data.relationships.user.data.id as string
    t.match(placeholder, /^user-/, 'a user for the email, so relationships.user always names one')
    const writers = (await api.team('team-writers', owner, '?include=users')).json()
    t.equal(writers.data.attributes['users-count'], 1, 'users-count: active members only')
    t.same(writers.data.relationships.users.data.map((u: any) => u.id), ['user-writer'])
    const review = (await app.inject({ url: '/api/v2/organizations/acme/access-review?page%5Bsize%5D=100', headers: { authorization: `Bearer ${owner}` } })).json()
    t.same(review.data.filter((e: any) => e.attributes['team-name'] === 'writers').map((e: any) => e.attributes['team-members']), [['writer']], 'the access review counts active members only')

    arrivals.push({ username: 'dana', email: 'Dana@Acme.test', tokens: ['dana-user-token'] })
    const summary = await apply()
    t.same(summary.changed.users, ['dana'], 'the invitation’s user, now the seed’s')
    t.same(summary.created.memberships, ['acme/writers: dana'], 'the team the invitation gave')
    t.same(summary.warnings.filter((warning) => warning.includes('user')), [], 'a person arriving is no row adopted')
    t.equal(await read('dana-user-token'), 200, 'dana reads what writers grant, from the very next request')
    const now = (await api.show(id, owner, '?include=user')).json()
    t.equal(now.data.attributes.status, 'active')
    t.equal(now.data.relationships.user.data.id, placeholder, 'the same user: the invitation’s, its id kept')
    t.same(now.included[0].attributes, { username: 'dana', email: 'Dana@Acme.test' })
    t.equal((await api.team('team-writers', owner)).json().data.attributes['users-count'], 2)
    const event = await app.db.selectFrom('audit_events').select(['accessor_kind', 'accessor_description', 'meta'])
      .where('action', '=', 'add_member').where('resource_id', '=', 'team-writers').orderBy('occurred_at', 'desc').executeTakeFirstOrThrow()
    t.same(event, { accessor_kind: 'system', accessor_description: 'seed', meta: { team: 'writers', user: 'dana' } }, 'its add_member event, the seed’s')
    t.same((await api.organizations('dana-user-token')).json().data.map((o: any) => o.id), ['acme'])

    const again = await apply()
    t.same([again.created.users, again.changed.users, again.created.memberships, again.removed.memberships, again.changed.memberships], [[], [], [], [], []], 'applied again: nothing changes')
    // the team membership is the invitation's (the API's): the seed, which lists dana in no team, does not end it
    t.equal((await api.show(id, owner)).json().data.attributes.status, 'active')
    t.equal((await api.destroy(id, owner)).statusCode, 204, 'the API ends it')
    t.equal(await read('dana-user-token'), 404, 'from the very next request')
  })

  t.test('a user declared with an id of its own absorbs the invitation: the membership’s id stays, its user is the declared one', async (t) => {
    const id = (await api.invite('acme', 'erin@acme.test', owner, ['team-green'])).json().data.id as string
    const placeholder = await userOf(id)
    arrivals.push({ id: 'user-erin', username: 'erin', email: 'erin@acme.test' })
    const summary = await apply()
    t.same(summary.created.users, ['erin'])
    t.same(summary.created.memberships, ['acme/green: erin'])
    const now = (await api.show(id, owner)).json().data
    t.match(now, { attributes: { status: 'active', email: 'erin@acme.test' }, relationships: { user: { data: { id: 'user-erin' } } } })
    t.equal(await app.db.selectFrom('users').select('id').where('id', '=', placeholder).executeTakeFirst(), undefined, 'the invitation’s user is gone')
    const again = await apply()
    t.same([again.created.users, again.changed.users, again.removed.users], [[], [], []], 'applied again: the row is found by its id')
  })

  t.test('an existing user given an invitation’s email absorbs it; where it is a member already, it gains the teams', async (t) => {
    const id = (await api.invite('acme', 'spare@acme.test', owner, ['team-green'])).json().data.id as string
    const spare = (await membershipOf(app, 'user-spare'))!
    const summary = await apply((doc) => { doc.users.find((u: any) => u.username === 'spare').email = 'spare@acme.test' })
    t.same(summary.changed.users, ['spare'])
    t.same(summary.created.memberships, ['acme/green: spare'])
    t.equal((await api.show(id, owner)).statusCode, 404, 'the invitation merged into spare’s membership')
    t.same((await api.show(spare, owner)).json().data.relationships.teams.data.map((x: any) => x.id), ['team-green', 'team-staff'])
    // leave it as the world has it
    await app.db.deleteFrom('team_memberships').where('team_id', '=', 'team-green').where('user_id', '=', 'user-spare').execute()
    await apply()
  })

  t.test('a seed-managed person the document lists in no team leaves the organization; one the API keeps in a team stays', async (t) => {
    const reader = (await membershipOf(app, 'user-reader'))!
    t.equal((await api.addToTeam('team-green', [reader], owner)).statusCode, 204, 'the API puts reader in green too')
    const summary = await apply((doc) => {
      const teams = doc.organizations[0].teams
      teams.find((x: any) => x.name === 'staff').members = []
      teams.find((x: any) => x.name === 'readers').members = []
    })
    t.same(summary.removed.memberships, ['acme/readers: reader', 'acme/staff: spare', 'acme: spare'], 'spare, in no team, leaves acme')
    t.same(summary.changed.memberships, ['acme: reader (listed in none of its teams: kept, now as the teams added through the API that remain)'])
    t.equal(await membershipOf(app, 'user-spare'), undefined)
    t.same((await app.db.selectFrom('audit_events').select('meta').where('resource_type', '=', 'organization-membership').where('action', '=', 'destroy')
      .where('accessor_description', '=', 'seed').execute()).map((e) => e.meta), [{ user: 'spare' }], 'its destroy event, the seed’s')
    t.equal((await api.show(reader, owner)).json().data.attributes.status, 'active', 'reader stays, through green')
    t.equal((await api.destroy(reader, owner)).statusCode, 204, 'and the API, which now manages it, may end it')
    const back = await apply()
    t.same(back.created.memberships.sort(), ['acme/readers: reader', 'acme/staff: spare'], 'declared again: members again')
    t.ok(await membershipOf(app, 'user-spare'), 'and of the organization (a trigger makes one for every team member)')
  })

  t.test('the seed: emails unique case-insensitively, checked before anything is written', async (t) => {
    const doc = peopleSeed([{ username: 'twin', email: 'WRITER@acme.test' }])
    await t.rejects(applySeedDocument(app.db, doc), new SeedError('users[13] "twin"', 'duplicate email (emails are unique, case-insensitively)'))
    await t.rejects(applySeedDocument(app.db, peopleSeed([{ username: 'bad', email: 'no-at-sign' }])), SeedError)
    // another source's user holding the email: the entry is named
    const host = directory(app.db)
    await host.createUser({ username: 'holder', email: 'held@acme.test' })
    await t.rejects(applySeedDocument(app.db, peopleSeed([{ username: 'taker', email: 'held@acme.test' }])), { name: 'SeedError', entry: 'users[13] "taker"' })
  })

  t.test('the host: users with emails arrive as the seed’s do; invite, list and end memberships', async (t) => {
    const host = directory(app.db)
    const id = (await api.invite('acme', 'gil@acme.test', owner, ['team-writers'])).json().data.id as string
    const placeholder = await userOf(id)
    const gil = await host.createUser({ username: 'gil', email: 'gil@acme.test' }, { actor: 'signup' })
    t.match(gil, { id: placeholder, username: 'gil', email: 'gil@acme.test', managedBy: 'host' }, 'the invitation’s user, taken over')
    await host.createToken({ userId: gil.id }, { secret: 'gil-user-token' })
    t.equal(await read('gil-user-token'), 200, 'with the invitation’s teams')

    // an existing user given an invitation's email by changeUser absorbs it
    const hal = await host.createUser({ username: 'hal' })
    const invitation = (await api.invite('acme', 'hal@acme.test', owner, ['team-writers'])).json().data.id as string
    t.match(await host.changeUser(hal.id, { email: 'HAL@acme.test' }), { id: hal.id, email: 'HAL@acme.test' })
    t.match((await api.show(invitation, owner)).json().data, { attributes: { status: 'active' }, relationships: { user: { data: { id: hal.id } } } })
    t.match(await host.changeUser(hal.id, { email: null }), { email: null }, 'an email cleared')
    await t.rejects(host.changeUser(hal.id, { email: 'gil@acme.test' }), new DirectoryError('conflict', 'a user with this email already exists'))

    const made = await host.createOrganizationMembership({ organizationId: 'org-acme', email: 'ivy@acme.test', teamIds: ['team-green'] }, { actor: 'hr-sync' })
    t.match(made, { organizationId: 'org-acme', email: 'ivy@acme.test', status: 'invited', teamIds: ['team-green'], managedBy: 'host' })
    const listed = await host.listOrganizationMemberships('org-acme')
    t.ok(listed.some((m) => m.id === made.id && m.status === 'invited'))
    t.match(listed.find((m) => m.userId === 'user-writer'), { status: 'active', teamIds: ['team-writers'], managedBy: 'seed' })
    await t.rejects(host.createOrganizationMembership({ organizationId: 'org-acme', email: 'IVY@acme.test' }), { code: 'conflict' })
    await t.rejects(host.createOrganizationMembership({ organizationId: 'org-nope', email: 'x@acme.test' }), { code: 'not-found' })
    await t.rejects(host.createOrganizationMembership({ organizationId: 'org-acme', email: 'x@acme.test', teamIds: ['team-globex'] }), { code: 'not-found' })
    await t.rejects(host.createOrganizationMembership({ organizationId: 'org-acme', email: 'not an email' }), { code: 'invalid' })
    const ivy = await host.createUser({ username: 'ivy', email: 'ivy@acme.test', id: 'user-ivy' })
    t.equal(ivy.id, 'user-ivy', 'an explicit id: the new row absorbs the invitation')
    t.match((await host.listOrganizationMemberships('org-acme')).find((m) => m.id === made.id), { userId: 'user-ivy', status: 'active', teamIds: ['team-green'] })

    // the host is trusted: it ends a seed's membership too, the person leaving every team there
    const writer = (await membershipOf(app, 'user-writer'))!
    await host.removeOrganizationMembership(writer, { actor: 'offboarding' })
    t.equal(await read(CALLERS.writer), 404, 'writer reads nothing any more')
    await t.rejects(host.removeOrganizationMembership(writer), { code: 'not-found' })
    await t.rejects(host.removeOrganizationMembership((await membershipOf(app, 'user-owner'))!), { code: 'invalid', message: /last member of the owners team/ })
    await t.rejects(host.listOrganizationMemberships('org-nope'), { code: 'not-found' })
  })
})
