/**
 * Recorded answers in HCP Terraform's documented shapes (its API documentation of organizations,
 * projects, workspaces, teams, organization memberships, team access and project team access;
 * go-tfe's structs), for the mirror's reader: the attributes and relationships HCP Terraform sends
 * that the mirror does not use, included resources, `meta.pagination` over several pages, a
 * HashiCorp API service account among a team's users, an invited person (username null, the email
 * on the included user only), and values this service does not know — an organization-access
 * flag, a team access level, a permission value. `answer(path, query)` serves them by path, as
 * HCP Terraform would at /api/v2; `manyWorkspaces` adds workspaces for the tests of the pace.
 */
export const ORG = 'acme'
export const ID = {
  org: 'org-Bzyc2JuegvVLAibn',
  defaultProject: 'prj-WFWPn2C4SGbJKtnv',
  payments: 'prj-3mBqFY8w5ZoNjDxS',
  network: 'ws-SihZTyXKfNXUWuUa',
  billing: 'ws-Cq2u7kTqDPFNkGbf',
  legacy: 'ws-9pEDvT1Xy3HaRZdB',
  owners: 'team-yUrEehvfG4pdmSjc',
  platform: 'team-6p5jTwJQXwqZBncC',
  red: 'team-GeLZkdnK6xAVjA5H',
  alice: 'user-vaQqszES9JnuK4eB',
  bob: 'user-oqCgH7NgTn95jTGc',
  carol: 'user-hn6v2WK1naDpGadd',
  dave: 'user-UntUdBTHsVRQMzC8',
  robot: 'user-ApiTeam6p5jTwJQ'
} as const

const pagination = (current: number, total: number, count: number) => ({
  pagination: { 'current-page': current, 'page-size': 100, 'prev-page': current > 1 ? current - 1 : null, 'next-page': current < total ? current + 1 : null, 'total-pages': total, 'total-count': count }
})
const links = (path: string) => ({ self: `https://app.terraform.io/api/v2${path}?page%5Bnumber%5D=1&page%5Bsize%5D=100`, first: '…', prev: null, next: null, last: '…' })

export const organization = (canUpdate = true) => ({
  data: {
    id: ORG,
    type: 'organizations',
    attributes: {
      'external-id': ID.org,
      'created-at': '2021-08-24T23:10:04.675Z',
      email: 'admin@acme.example',
      'session-timeout': null,
      'collaborator-auth-policy': 'password',
      'cost-estimation-enabled': false,
      name: ORG,
      permissions: { 'can-update': canUpdate, 'can-destroy': canUpdate, 'can-access-via-teams': true, 'can-create-team': canUpdate, 'can-create-workspace': canUpdate, 'can-manage-users': canUpdate, 'can-traverse': true, 'can-create-project': canUpdate },
      'saml-enabled': false,
      'owners-team-saml-role-id': null,
      'two-factor-conformant': false,
      'default-execution-mode': 'remote'
    },
    relationships: {
      'default-agent-pool': { data: null },
      'oauth-tokens': { links: { related: `/api/v2/organizations/${ORG}/oauth-tokens` } },
      'authentication-token': { links: { related: `/api/v2/organizations/${ORG}/authentication-token` } },
      'entitlement-set': { data: { id: ID.org, type: 'entitlement-sets' }, links: { related: `/api/v2/organizations/${ORG}/entitlement-set` } },
      'default-project': { data: { id: ID.defaultProject, type: 'projects' } }
    },
    links: { self: `/api/v2/organizations/${ORG}` }
  }
})

const project = (id: string, name: string, description: string | null) => ({
  id,
  type: 'projects',
  attributes: { name, description, 'created-at': '2023-01-02T03:04:05.678Z', 'workspace-count': 1, 'team-count': 1, 'auto-destroy-activity-duration': null, 'default-execution-mode': 'remote', 'is-unified': false, permissions: { 'can-read': true, 'can-update': true } },
  relationships: { organization: { data: { id: ORG, type: 'organizations' } }, 'default-agent-pool': { data: null } },
  links: { self: `/api/v2/projects/${id}` }
})

/** Two pages: the mirror follows `next-page`. */
const projectPages = [
  { data: [project(ID.defaultProject, 'Default Project', null)], links: links(`/organizations/${ORG}/projects`), meta: { 'status-counts': { total: 2, matching: 2 }, ...pagination(1, 2, 2) } },
  { data: [project(ID.payments, 'payments', 'the money')], links: links(`/organizations/${ORG}/projects`), meta: { 'status-counts': { total: 2, matching: 2 }, ...pagination(2, 2, 2) } }
]

export const workspace = (id: string, name: string, projectId: string | null) => ({
  id,
  type: 'workspaces',
  attributes: { name, description: `${name} things`, 'auto-apply': false, 'execution-mode': 'remote', 'terraform-version': '1.9.5', 'resource-count': 12, locked: false, 'tag-names': ['prod'], permissions: { 'can-update': true, 'can-destroy': true, 'can-queue-run': true } },
  relationships: {
    organization: { data: { id: ORG, type: 'organizations' } },
    // an older Terraform Enterprise has no projects: a workspace without one is in the default project
    ...(projectId === null ? {} : { project: { data: { id: projectId, type: 'projects' } } }),
    'current-run': { data: null },
    'latest-run': { data: null },
    'locked-by': { data: null }
  },
  links: { self: `/api/v2/organizations/${ORG}/workspaces/${name}` }
})

const workspacePages = [
  { data: [workspace(ID.network, 'network', ID.defaultProject), workspace(ID.legacy, 'legacy', null)], meta: { 'status-counts': {}, ...pagination(1, 2, 3) } },
  { data: [workspace(ID.billing, 'billing', ID.payments)], meta: { 'status-counts': {}, ...pagination(2, 2, 3) } }
]

const user = (id: string, username: string | null, extra: Record<string, unknown> = {}) => ({
  id,
  type: 'users',
  attributes: { username, 'is-service-account': false, 'auth-method': 'tfc', 'avatar-url': 'https://www.gravatar.com/avatar/x?s=100&d=mm', 'two-factor': { enabled: true, verified: true }, permissions: { 'can-create-organizations': true, 'can-change-email': true }, ...extra },
  relationships: { 'authentication-tokens': { links: { related: `/api/v2/users/${id}/authentication-tokens` } } },
  links: { self: `/api/v2/users/${id}` }
})

const team = (id: string, name: string, visibility: string, access: Record<string, boolean>, users: string[]) => ({
  id,
  type: 'teams',
  attributes: {
    name,
    'users-count': users.length,
    visibility,
    'sso-team-id': null,
    'is-unified': false,
    'allow-member-token-management': true,
    permissions: { 'can-update-membership': true, 'can-destroy': true, 'can-update-organization-access': true, 'can-update-api-token': true, 'can-update-visibility': true },
    'organization-access': {
      'manage-policies': false,
      'manage-policy-overrides': false,
      'manage-run-tasks': false,
      'manage-workspaces': false,
      'manage-vcs-settings': false,
      'manage-agent-pools': false,
      'manage-projects': false,
      'read-projects': false,
      'read-workspaces': false,
      ...access
    }
  },
  relationships: { users: { data: users.map((u) => ({ id: u, type: 'users' })) }, 'authentication-token': { meta: {} } },
  links: { self: `/api/v2/teams/${id}` }
})

const teams = {
  data: [
    // the owners team's token acts as a HashiCorp API service account, listed among its users
    team(ID.owners, 'owners', 'organization', {}, [ID.alice, ID.robot]),
    // a flag HCP Terraform has and this service does not: said once, never a failed run
    team(ID.platform, 'platform', 'organization', { 'read-workspaces': true, 'manage-teams': true, 'manage-something-new': true }, [ID.bob]),
    team(ID.red, 'red', 'secret', {}, [ID.bob, ID.carol])
  ],
  included: [
    user(ID.alice, 'alice'), user(ID.bob, 'bob'), user(ID.carol, 'carol'),
    user(ID.robot, 'api-team_6p5jTwJQ', { 'is-service-account': true })
  ],
  links: links(`/organizations/${ORG}/teams`),
  meta: pagination(1, 1, 3)
}

const membership = (id: string, status: string, email: string | undefined, userId: string, teamIds: string[]) => ({
  id,
  type: 'organization-memberships',
  attributes: { status, ...(email === undefined ? {} : { email }), 'created-at': '2024-01-01T00:00:00.000Z' },
  relationships: {
    teams: { data: teamIds.map((t) => ({ id: t, type: 'teams' })) },
    user: { data: { id: userId, type: 'users' } },
    organization: { data: { id: ORG, type: 'organizations' } }
  }
})

/** Two pages; bob's email only on his included user, as the documented list shows memberships without it. */
const membershipPages = [
  {
    data: [membership('ou-tTJph1AQVK5ZmdND', 'active', 'alice@acme.example', ID.alice, [ID.owners]), membership('ou-D6HPYFt4GzeBt3gB', 'active', undefined, ID.bob, [ID.platform, ID.red])],
    included: [user(ID.alice, 'alice', { email: 'alice@acme.example' }), user(ID.bob, 'bob', { email: 'bob@acme.example' })],
    meta: { 'status-counts': { total: 4, active: 3, invited: 1 }, ...pagination(1, 2, 4) }
  },
  {
    data: [membership('ou-kit6GaMo3zPGCzWb', 'active', 'carol@acme.example', ID.carol, [ID.red]), membership('ou-x1E2eBwYwusLDC7h', 'invited', undefined, ID.dave, [ID.platform])],
    included: [user(ID.carol, 'carol', { email: 'carol@acme.example' }), user(ID.dave, null, { email: 'dave@acme.example', 'auth-method': 'hcp_sso' })],
    meta: { 'status-counts': { total: 4, active: 3, invited: 1 }, ...pagination(2, 2, 4) }
  }
]

const teamWorkspace = (id: string, teamId: string, workspaceId: string, attributes: Record<string, unknown>) => ({
  id,
  type: 'team-workspaces',
  attributes,
  relationships: { team: { data: { id: teamId, type: 'teams' }, links: { related: `/api/v2/teams/${teamId}` } }, workspace: { data: { id: workspaceId, type: 'workspaces' }, links: { related: `/api/v2/workspaces/${workspaceId}` } } },
  links: { self: `/api/v2/team-workspaces/${id}` }
})

const teamWorkspaces: Record<string, unknown> = {
  [ID.network]: {
    data: [teamWorkspace('tws-19iugLwoNgtWZbKP', ID.platform, ID.network, { access: 'write', runs: 'apply', variables: 'write', 'state-versions': 'write', 'sentinel-mocks': 'read', 'workspace-locking': true, 'run-tasks': false, 'policy-overrides': false })],
    meta: pagination(1, 1, 1)
  },
  [ID.billing]: {
    data: [
      teamWorkspace('tws-5KpT9cXtdvDBBJ9b', ID.red, ID.billing, { access: 'custom', runs: 'plan', variables: 'read', 'state-versions': 'read-outputs', 'sentinel-mocks': 'none', 'workspace-locking': false, 'run-tasks': true, 'policy-overrides': true }),
      // a level HCP Terraform might add, with a permission value it might add: kept as custom with the permissions known, each said once
      teamWorkspace('tws-Wd3y7Qeg8xPYGpKm', ID.platform, ID.billing, { access: 'operator', runs: 'apply', variables: 'read', 'state-versions': 'read', 'sentinel-mocks': 'write', 'workspace-locking': true, 'run-tasks': false })
    ],
    meta: pagination(1, 1, 2)
  },
  [ID.legacy]: { data: [], meta: pagination(1, 1, 0) }
}

const teamProject = (id: string, teamId: string, projectId: string, attributes: Record<string, unknown>) => ({
  id,
  type: 'team-projects',
  attributes,
  relationships: { team: { data: { id: teamId, type: 'teams' } }, project: { data: { id: projectId, type: 'projects' } } },
  links: { self: `/api/v2/team-projects/${id}` }
})

const teamProjects: Record<string, unknown> = {
  [ID.defaultProject]: { data: [], meta: pagination(1, 1, 0) },
  [ID.payments]: {
    data: [
      teamProject('tprj-2pmCrGhwFcVwXbXo', ID.red, ID.payments, {
        access: 'custom',
        'project-access': { settings: 'update', teams: 'read', 'variable-sets': 'none' },
        'workspace-access': { runs: 'plan', 'sentinel-mocks': 'read', 'state-versions': 'read', variables: 'read', create: true, locking: false, delete: false, move: false, 'run-tasks': false }
      }),
      // a fixed level as HCP Terraform answers it: the objects say what the level implies
      teamProject('tprj-Hq8ZsgX3bPUJwVwe', ID.platform, ID.payments, {
        access: 'maintain',
        'project-access': { settings: 'read', teams: 'none', 'variable-sets': 'none' },
        'workspace-access': { runs: 'apply', 'sentinel-mocks': 'read', 'state-versions': 'write', variables: 'write', create: true, locking: true, delete: true, move: false, 'run-tasks': true }
      })
    ],
    meta: pagination(1, 1, 2)
  }
}

/** Workspaces added to the world (in the default project, no team access), for the tests of the pace. */
export interface World { extraWorkspaces?: number, canUpdate?: boolean }

/** The document HCP Terraform answers at `path` (below /api/v2) with `query`, or undefined (404). */
export function answer (world: World, path: string, query: URLSearchParams): unknown {
  const page = Number(query.get('page[number]') ?? '1')
  const extra = Array.from({ length: world.extraWorkspaces ?? 0 }, (_, i) => workspace(`ws-Extra${String(i).padStart(12, '0')}`, `extra-${i}`, ID.defaultProject))
  switch (path) {
    case `/organizations/${ORG}`: return organization(world.canUpdate ?? true)
    case `/organizations/${ORG}/projects`: return projectPages[page - 1]
    case `/organizations/${ORG}/workspaces`:
      if (extra.length === 0) return workspacePages[page - 1]
      return page === 1 ? { data: [...workspacePages[0]!.data, ...workspacePages[1]!.data, ...extra], meta: pagination(1, 1, 3 + extra.length) } : undefined
    case `/organizations/${ORG}/teams`: return query.get('include') === 'users' ? teams : undefined
    case `/organizations/${ORG}/organization-memberships`: return query.get('include') === 'user' ? membershipPages[page - 1] : undefined
    case '/team-workspaces': {
      const id = query.get('filter[workspace][id]') ?? ''
      return teamWorkspaces[id] ?? (id.startsWith('ws-Extra') ? { data: [], meta: pagination(1, 1, 0) } : undefined)
    }
    case '/team-projects': return teamProjects[query.get('filter[project][id]') ?? '']
    default: return undefined
  }
}
