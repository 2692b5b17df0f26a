import t from 'tap'
import type { AddressInfo } from 'node:net'
import { readOrganization } from '../../src/mirror/read.js'
import { ORGANIZATION_ACCESS_FLAGS } from '../../schemas/organization-access.js'
import { bearer, build, ENGINE } from '../helper.js'

/**
 * The mirror's reader against this service itself (DESIGN §13.3: it stands in for HCP Terraform
 * in the round trip): a small seeded organization, an invitation made through the API, read over
 * real HTTP with its owners team's token — the snapshot, exactly; a member's token, which does not
 * read the organization whole, stops the run.
 */
const SEED = {
  users: [
    { id: 'user-Maria0000000001', username: 'maria', email: 'maria@example.com' },
    { id: 'user-Nikolai00000001', username: 'nikolai', email: 'nikolai@example.com', tokens: ['nikolai-user-token-1'] },
    { id: 'user-Olga000000000001', username: 'olga' }
  ],
  organizations: [{
    id: 'org-MyOrg0000000001',
    name: 'my-org',
    teams: [
      { id: 'team-Owners000000001', name: 'owners', owners: true, members: ['maria'], tokens: ['my-org-owners-team-token'] },
      { id: 'team-Platform0000001', name: 'platform', visibility: 'organization', 'organization-access': { 'read-workspaces': true, 'manage-teams': true }, members: ['nikolai'] },
      { id: 'team-Payments0000001', name: 'payments', visibility: 'secret', members: ['nikolai', 'olga'] }
    ],
    projects: [{ id: 'prj-Payments00000001', name: 'payments', description: 'the money' }],
    workspaces: [
      { id: 'ws-Network000000001', name: 'network' },
      { id: 'ws-Billing000000001', name: 'billing', project: 'payments' }
    ],
    'team-access': [
      { id: 'tws-PlatformNet0001', team: 'platform', workspace: 'network', access: 'admin' },
      { id: 'tws-PaymentsBil0001', team: 'payments', workspace: 'billing', access: 'custom', runs: 'apply', variables: 'read' }
    ],
    'project-access': [
      { id: 'tprj-PaymentsPrj001', team: 'payments', project: 'payments', access: 'write' }
    ]
  }]
}

/** Every flag this service knows, as it answers them: the ones not set, false. */
const NO_FLAGS = Object.fromEntries(ORGANIZATION_ACCESS_FLAGS.map((flag) => [flag, false]))

t.test(`this service, read as HCP Terraform is read (${ENGINE})`, async (t) => {
  const app = await build(t, { seed: SEED })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const from = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const invited = await app.inject({
    method: 'POST',
    url: '/api/v2/organizations/my-org/organization-memberships',
    headers: { ...bearer('my-org-owners-team-token'), 'content-type': 'application/vnd.api+json' },
    payload: { data: { type: 'organization-memberships', attributes: { email: 'pia@example.com' }, relationships: { teams: { data: [{ type: 'teams', id: 'team-Platform0000001' }] } } } }
  })
  t.equal(invited.statusCode, 201)
  const invitation = invited.json().data

  const snapshot = await readOrganization({ from, organization: 'my-org', token: 'my-org-owners-team-token', rate: 1000 })
  const defaultProject = snapshot.projects.find((p) => p.isDefault)!
  t.match(defaultProject.id, /^prj-/)
  t.same(snapshot, {
    host: from.replace('http://', ''),
    organization: { name: 'my-org', externalId: 'org-MyOrg0000000001', defaultProjectId: defaultProject.id },
    users: [
      { id: 'user-Maria0000000001', username: 'maria', email: 'maria@example.com' },
      { id: 'user-Nikolai00000001', username: 'nikolai', email: 'nikolai@example.com' },
      { id: 'user-Olga000000000001', username: 'olga', email: null },
      { id: invitation.relationships.user.data.id, username: null, email: 'pia@example.com' }
    ].sort((a, b) => a.id < b.id ? -1 : 1),
    teams: [
      { id: 'team-Owners000000001', name: 'owners', visibility: 'secret', isOwners: true, organizationAccess: {}, userIds: ['user-Maria0000000001'] },
      { id: 'team-Payments0000001', name: 'payments', visibility: 'secret', isOwners: false, organizationAccess: {}, userIds: ['user-Nikolai00000001', 'user-Olga000000000001'] },
      { id: 'team-Platform0000001', name: 'platform', visibility: 'organization', isOwners: false, organizationAccess: { 'read-workspaces': true, 'manage-teams': true }, userIds: ['user-Nikolai00000001'] }
    ].map((team) => ({ ...team, organizationAccess: { ...NO_FLAGS, ...team.organizationAccess } })),
    memberships: snapshot.memberships,
    projects: [
      { id: defaultProject.id, name: 'Default Project', description: null, isDefault: true },
      { id: 'prj-Payments00000001', name: 'payments', description: 'the money', isDefault: false }
    ],
    workspaces: [
      { id: 'ws-Billing000000001', name: 'billing', projectId: 'prj-Payments00000001', description: null },
      { id: 'ws-Network000000001', name: 'network', projectId: defaultProject.id, description: null }
    ],
    teamWorkspaces: [
      { id: 'tws-PaymentsBil0001', teamId: 'team-Payments0000001', workspaceId: 'ws-Billing000000001', access: 'custom', runs: 'apply', variables: 'read', stateVersions: 'none', sentinelMocks: 'none', workspaceLocking: false, runTasks: false, policyOverrides: false },
      { id: 'tws-PlatformNet0001', teamId: 'team-Platform0000001', workspaceId: 'ws-Network000000001', access: 'admin', runs: 'apply', variables: 'write', stateVersions: 'write', sentinelMocks: 'read', workspaceLocking: true, runTasks: true, policyOverrides: false }
    ],
    teamProjects: [{
      id: 'tprj-PaymentsPrj001',
      teamId: 'team-Payments0000001',
      projectId: 'prj-Payments00000001',
      access: 'write',
      projectAccess: { settings: 'read', teams: 'none', variableSets: 'none' },
      workspaceAccess: { runs: 'apply', variables: 'write', stateVersions: 'write', sentinelMocks: 'read', create: false, locking: true, delete: false, move: false, runTasks: false }
    }],
    notes: [],
    requests: snapshot.requests
  })
  t.same(snapshot.memberships.map((m) => [m.userId, m.status, m.teamIds]).sort(), [
    ['user-Maria0000000001', 'active', ['team-Owners000000001']],
    ['user-Nikolai00000001', 'active', ['team-Payments0000001', 'team-Platform0000001']],
    ['user-Olga000000000001', 'active', ['team-Payments0000001']],
    [invitation.relationships.user.data.id, 'invited', ['team-Platform0000001']]
  ].sort(), 'the memberships: active, and the invitation with its team')
  t.ok(snapshot.memberships.some((m) => m.id === invitation.id), 'the invitation by its id')

  const refused = await readOrganization({ from, organization: 'my-org', token: 'nikolai-user-token-1', rate: 1000 }).then(() => undefined, (err: Error) => err)
  t.match(refused?.message, /^organization "my-org": this token does not read the whole organization/, 'a member\'s token stops the run')
})
