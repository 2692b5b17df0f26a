import t from 'tap'
import { readOrganization } from '../../src/mirror/read.js'
import { progressLine, type ReadProgress } from '../../src/mirror/progress.js'
import type { MirrorSnapshot } from '../../src/directory/mirror-snapshot.js'
import { ID } from './hcp-answers.js'
import { standIn } from './hcp-stand-in.js'

/**
 * The mirror's reader (DESIGN §13.2) against recorded answers in HCP Terraform's documented shapes
 * (./hcp-answers.ts), served over real HTTP (./hcp-stand-in.ts) with the faults HCP Terraform's
 * clients meet — a 429 with `X-RateLimit-Reset` (a delay in seconds), a 503, a dropped connection,
 * a body cut off half-way, a body that is not JSON — each waited out or tried again: the snapshot,
 * exactly; every request counted; progress n of m; the API's base found through the discovery
 * document, and at /api/v2/ without one.
 */
const TOKEN = 'hcp-secret-token-3fJk2.atlasv1.do-not-leak'

const off = { 'manage-policies': false, 'manage-policy-overrides': false, 'manage-run-tasks': false, 'manage-workspaces': false, 'manage-vcs-settings': false, 'manage-agent-pools': false, 'manage-projects': false, 'read-projects': false, 'read-workspaces': false }

const expected = (host: string, requests: number): MirrorSnapshot => ({
  host,
  organization: { name: 'acme', externalId: ID.org, defaultProjectId: ID.defaultProject },
  // by id; usernames from the included users, emails from the memberships or their included users; the invited person has no username
  users: [
    { id: ID.dave, username: null, email: 'dave@acme.example' },
    { id: ID.carol, username: 'carol', email: 'carol@acme.example' },
    { id: ID.bob, username: 'bob', email: 'bob@acme.example' },
    { id: ID.alice, username: 'alice', email: 'alice@acme.example' }
  ],
  teams: [
    { id: ID.owners, name: 'owners', visibility: 'organization', isOwners: true, organizationAccess: off, userIds: [ID.alice] },
    { id: ID.platform, name: 'platform', visibility: 'organization', isOwners: false, organizationAccess: { ...off, 'read-workspaces': true, 'manage-teams': true }, userIds: [ID.bob] },
    { id: ID.red, name: 'red', visibility: 'secret', isOwners: false, organizationAccess: off, userIds: [ID.bob, ID.carol] }
  ],
  memberships: [
    { id: 'ou-tTJph1AQVK5ZmdND', userId: ID.alice, status: 'active', teamIds: [ID.owners] },
    { id: 'ou-D6HPYFt4GzeBt3gB', userId: ID.bob, status: 'active', teamIds: [ID.platform, ID.red] },
    { id: 'ou-kit6GaMo3zPGCzWb', userId: ID.carol, status: 'active', teamIds: [ID.red] },
    { id: 'ou-x1E2eBwYwusLDC7h', userId: ID.dave, status: 'invited', teamIds: [ID.platform] }
  ],
  projects: [
    { id: ID.defaultProject, name: 'Default Project', description: null, isDefault: true },
    { id: ID.payments, name: 'payments', description: 'the money', isDefault: false }
  ],
  workspaces: [
    { id: ID.network, name: 'network', projectId: ID.defaultProject, description: 'network things' },
    { id: ID.legacy, name: 'legacy', projectId: ID.defaultProject, description: 'legacy things' },
    { id: ID.billing, name: 'billing', projectId: ID.payments, description: 'billing things' }
  ],
  teamWorkspaces: [
    { id: 'tws-19iugLwoNgtWZbKP', teamId: ID.platform, workspaceId: ID.network, access: 'write', runs: 'apply', variables: 'write', stateVersions: 'write', sentinelMocks: 'read', workspaceLocking: true, runTasks: false, policyOverrides: false },
    { id: 'tws-5KpT9cXtdvDBBJ9b', teamId: ID.red, workspaceId: ID.billing, access: 'custom', runs: 'plan', variables: 'read', stateVersions: 'read-outputs', sentinelMocks: 'none', workspaceLocking: false, runTasks: true, policyOverrides: true },
    // a level this service does not know: custom, with the permissions given (an unknown value: custom's default)
    { id: 'tws-Wd3y7Qeg8xPYGpKm', teamId: ID.platform, workspaceId: ID.billing, access: 'custom', runs: 'apply', variables: 'read', stateVersions: 'read', sentinelMocks: 'none', workspaceLocking: true, runTasks: false }
  ],
  teamProjects: [
    {
      id: 'tprj-2pmCrGhwFcVwXbXo',
      teamId: ID.red,
      projectId: ID.payments,
      access: 'custom',
      projectAccess: { settings: 'update', teams: 'read', variableSets: 'none' },
      workspaceAccess: { runs: 'plan', variables: 'read', stateVersions: 'read', sentinelMocks: 'read', create: true, locking: false, delete: false, move: false, runTasks: false }
    },
    {
      id: 'tprj-Hq8ZsgX3bPUJwVwe',
      teamId: ID.platform,
      projectId: ID.payments,
      access: 'maintain',
      projectAccess: { settings: 'read', teams: 'none', variableSets: 'none' },
      workspaceAccess: { runs: 'apply', variables: 'write', stateVersions: 'write', sentinelMocks: 'read', create: true, locking: true, delete: true, move: false, runTasks: true }
    }
  ],
  notes: [
    '1 HashiCorp API service account (the users of team tokens) left out of the teams\' members: tokens here are this service\'s own',
    'organization-access "manage-something-new" (on team "platform", perhaps others too) has no place here: left out',
    'team access level "operator" is not one this service knows: kept as custom, with the permissions HCP Terraform gives',
    'team access sentinel-mocks "write" is not one this service knows: read as "none"'
  ],
  requests
})

const sortedNotes = (snapshot: MirrorSnapshot): MirrorSnapshot => ({ ...snapshot, notes: [...snapshot.notes].sort() })

t.test('HCP Terraform\'s answers, decoded exactly; every fault waited out or tried again, every request counted', async (t) => {
  const hcp = await standIn({ token: TOKEN })
  t.teardown(hcp.close)
  hcp.faults.set('/organizations/acme/teams', ['429'])
  hcp.faults.set('/team-workspaces', ['503', 'drop'])
  hcp.faults.set('/organizations/acme/projects', ['cut'])
  hcp.faults.set('/organizations/acme/organization-memberships', ['garbage'])
  const progress: ReadProgress[] = []
  const snapshot = await readOrganization({ from: hcp.from, organization: 'acme', token: TOKEN, rate: 500, retryPause: 5, onProgress: (p) => progress.push(p) })

  // discovery, the organization, projects 2 pages + the cut one, workspaces 2, teams 1 + the 429,
  // memberships 2 + the garbled one, team access 3 + the 503 and the drop, project team access 2
  t.same(sortedNotes(snapshot), expected(hcp.from.replace('http://', ''), 19))
  t.same(hcp.faulted.map((f) => f.fault).sort(), ['429', '503', 'cut', 'drop', 'garbage'], 'every fault was met')
  t.equal(hcp.log.length, 19, 'the stand-in saw as many requests as the snapshot counts')
  t.ok(hcp.log.filter((r) => !['/.well-known/terraform.json', '/organizations/acme'].includes(r.path)).every((r) => /page%5Bsize%5D=100/.test(r.query)), 'every list asked 100 a page')
  t.same(hcp.log.filter((r) => r.path === '/organizations/acme/organization-memberships').map((r) => new URLSearchParams(r.query).get('page[number]')), ['1', '1', '2'], 'a page read again after a garbled body, then the next')

  const lines = progress.map(progressLine)
  t.ok(lines.includes(lines.find((l) => l.startsWith('reading workspaces · 3 of 3 · ')) ?? '-'), 'progress: a list, n of m')
  t.ok(lines.some((l) => l.startsWith('reading team access of workspaces and projects · 5 of 5 · ')), 'progress: the team access, n of m')
  t.ok(progress.every((p, i) => i === 0 || p.requests >= progress[i - 1]!.requests), 'requests so far, never fewer')
  t.ok(progress.some((p) => p.rate > 0), 'and the rate')
})

t.test('the API\'s base, as the clients find it: the discovery document\'s tfe.v2.2; /api/v2/ when there is none', async (t) => {
  const elsewhere = await standIn({ token: TOKEN, apiBase: '/tfe/api/v2/' })
  t.teardown(elsewhere.close)
  const read = await readOrganization({ from: elsewhere.from, organization: 'acme', token: TOKEN, rate: 500 })
  t.same(sortedNotes(read), expected(elsewhere.from.replace('http://', ''), 14))
  t.equal(elsewhere.log[0]!.path, '/.well-known/terraform.json')
  t.ok(elsewhere.log.slice(1).every((r) => r.path.startsWith('/') && !r.path.startsWith('/tfe/')), 'every API request below the base it names')

  const none = await standIn({ token: TOKEN, apiBase: 'none' })
  t.teardown(none.close)
  const fallback = await readOrganization({ from: none.from, organization: 'acme', token: TOKEN, rate: 500 })
  t.same(sortedNotes(fallback), expected(none.from.replace('http://', ''), 14))
})

t.test('--from with a path: the host\'s discovery document all the same', async (t) => {
  const hcp = await standIn({ token: TOKEN })
  t.teardown(hcp.close)
  const read = await readOrganization({ from: `${hcp.from}/app/acme/workspaces`, organization: 'acme', token: TOKEN, rate: 500 })
  t.equal(read.teams.length, 3)
  t.equal(hcp.log[0]!.path, '/.well-known/terraform.json')
})
