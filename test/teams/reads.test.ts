import t from 'tap'
import { bearer, build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'

const NO_FLAGS = Object.fromEntries(['manage-policies', 'manage-policy-overrides', 'delegate-policy-overrides', 'manage-workspaces', 'manage-vcs-settings', 'manage-providers',
  'manage-modules', 'manage-run-tasks', 'manage-projects', 'read-workspaces', 'read-projects', 'manage-membership', 'manage-teams',
  'manage-organization-access', 'access-secret-teams', 'manage-agent-pools'].map((flag) => [flag, false]))

/**
 * DESIGN §7, who may read a team: owners every team of their organization; members the teams
 * visible to the organization and the secret teams they belong to. Anything else answers the
 * 404 of a team that does not exist, byte for byte.
 */
t.test(`team reads (DESIGN §7) on ${ENGINE}`, async (t) => {
  const app = await build(t, { seed: world })
  const get = (url: string, token: string) => app.inject({ url: `/api/v2${url}`, headers: bearer(token) })
  const missing = await get('/teams/team-missing', TOKENS.organization)
  t.equal(missing.statusCode, 404)

  const redMembership = (await app.db.selectFrom('organization_memberships').select('id').where('user_id', '=', 'user-red').executeTakeFirstOrThrow()).id
  t.test('GET /teams/:id: owners see every team', async (t) => {
    for (const token of [TOKENS.organization, TOKENS.ownersTeam, TOKENS.owner]) {
      const res = await get('/teams/team-red', token)
      t.equal(res.statusCode, 200)
      t.same(res.json(), {
        data: {
          id: 'team-red',
          type: 'teams',
          attributes: {
            name: 'red',
            visibility: 'secret',
            'users-count': 1,
            'organization-access': NO_FLAGS,
            'sso-team-id': null,
            'allow-member-token-management': true,
            // an owner may change the members of a seed team; the seed file alone deletes it
            permissions: { 'can-update-membership': true, 'can-destroy': false }
          },
          relationships: {
            organization: { data: { id: 'acme', type: 'organizations' } },
            users: { data: [{ id: 'user-red', type: 'users' }] },
            // red-member's organization membership (DESIGN §14.3)
            'organization-memberships': { data: [{ id: redMembership, type: 'organization-memberships' }] }
          },
          links: { self: '/api/v2/teams/team-red' }
        }
      })
    }
  })

  t.test('GET /teams/:id: members see organization-visible teams and their own secret teams', async (t) => {
    t.equal((await get('/teams/team-green', TOKENS.writer)).statusCode, 200, 'a team visible to the organization')
    t.equal((await get('/teams/team-red', TOKENS.secretMember)).statusCode, 200, 'a secret team of one’s own')
    t.match((await get('/teams/team-managers', TOKENS.manager)).json().data.attributes, { 'organization-access': { 'manage-workspaces': true, 'read-workspaces': false } })
    for (const [who, token, team] of [
      ['a member, another secret team', TOKENS.writer, 'team-red'],
      ['a manage-workspaces member (not an owner), a secret team not its own', TOKENS.manager, 'team-red'],
      ['a team token, a secret team not its own', TOKENS.nonOwnerTeam, 'team-blue'],
      ['a user in no team', TOKENS.noTeam, 'team-green'],
      ['another organization', TOKENS.otherOrganization, 'team-green']
    ] as const) {
      const res = await get(`/teams/${team}`, token)
      t.equal(res.statusCode, 404, who)
      t.equal(res.body, missing.body, `${who}: byte-identical to a missing id`)
    }
  })

  t.test('GET /organizations/:org/teams: a page of the teams the caller may see, by name, filter[names]', async (t) => {
    const names = async (url: string, token: string) => (await get(url, token)).json().data?.map((x: any) => x.attributes.name)
    t.same(await names('/organizations/acme/teams', TOKENS.organization), ['admins', 'blue', 'green', 'managers', 'owners', 'readers', 'red', 'writers'])
    t.same(await names('/organizations/acme/teams?include=', TOKENS.secretMember), ['green', 'red', 'writers'], 'a member: visible teams and its own')
    t.same(await names('/organizations/acme/teams?filter%5Bnames%5D=red', TOKENS.owner), ['red'], 'filter[names]: exact names')
    t.same(await names('/organizations/acme/teams?filter%5Bnames%5D=red,green,re', TOKENS.owner), ['green', 'red'], 'comma-separated, never a substring')
    t.same(await names('/organizations/acme/teams?filter%5Bnames%5D=red', TOKENS.writer), [], 'a team it may not see is not listed')
    const page = await get('/organizations/acme/teams?page%5Bsize%5D=3&page%5Bnumber%5D=2', TOKENS.organization)
    t.same(page.json().meta.pagination, { 'current-page': 2, 'page-size': 3, 'prev-page': 1, 'next-page': 3, 'total-pages': 3, 'total-count': 8 })
    t.same(page.json().data.map((x: any) => x.attributes.name), ['managers', 'owners', 'readers'])
    const noOrg = await get('/organizations/nope/teams', TOKENS.otherOrganization)
    const notMember = await get('/organizations/acme/teams', TOKENS.otherOrganization)
    t.equal(notMember.statusCode, 404)
    t.equal(notMember.body, noOrg.body, 'an organization the caller is not a member of: the 404 of one that does not exist')
    t.equal((await get('/organizations/acme/teams?include=workspaces', TOKENS.organization)).statusCode, 400, 'include of anything but users and organization-memberships: 400')
  })
})
