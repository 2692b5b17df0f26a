import t from 'tap'
import { answerOf, effectiveAccess, isMember, mayExplainTeam, mayModify, mayRead, maySee, teamAsGrant, type AccessRow, type Grant, type RowRecord, type TeamRecord } from './rules.js'
import { IMPLICIT_PERMISSIONS } from '../../src/access/permissions.js'
import { higher } from '../../src/access/effective-access.js'

const ORG = 'org-a'
const team = (teamId: string, extra: Partial<Grant> = {}): Grant =>
  ({ organizationId: ORG, teamId, isOwner: false, manageWorkspaces: false, readWorkspaces: false, ...extra })
const orgToken: Grant = { organizationId: ORG, teamId: null, isOwner: true, manageWorkspaces: false, readWorkspaces: false }
const row = (teamId: string, access: AccessRow['access'], visibility: AccessRow['visibility'] = 'secret'): AccessRow => ({ teamId, access, visibility })

t.test('levels: read < plan < write < admin, and custom is never admin', async (t) => {
  t.equal(higher('read', 'plan'), 'plan')
  t.equal(higher('admin', 'write'), 'admin')
  t.equal(higher('custom', 'read'), 'read', 'any fixed level outranks custom')
  t.equal(higher(null, 'custom'), 'custom')
  t.equal(higher('plan', null), 'plan')
})

t.test('effective access is the highest of every source', async (t) => {
  t.equal(effectiveAccess([orgToken], ORG, []), 'admin', 'an owner (organization token)')
  t.equal(effectiveAccess([team('owners', { isOwner: true })], ORG, []), 'admin', 'an owner (owners team)')
  t.equal(effectiveAccess([team('ops', { manageWorkspaces: true })], ORG, [row('ops', 'read')]), 'admin',
    'manage-workspaces wins over a read row (the seed spec’s example)')
  t.equal(effectiveAccess([team('r', { readWorkspaces: true })], ORG, []), 'read', 'read-workspaces')
  t.equal(effectiveAccess([team('r', { readWorkspaces: true })], ORG, [row('r', 'write')]), 'write', 'a row above read-workspaces')
  t.equal(effectiveAccess([team('a'), team('b')], ORG, [row('a', 'plan'), row('b', 'write'), row('c', 'admin')]), 'write',
    'the highest of the caller’s own teams’ rows, not other teams’')
  t.equal(effectiveAccess([team('a')], ORG, [row('a', 'custom')]), 'custom')
  t.equal(effectiveAccess([team('a')], ORG, []), null, 'a member with no grant here')
  t.equal(effectiveAccess([{ ...orgToken, organizationId: 'org-b' }], ORG, []), null, 'ownership elsewhere counts for nothing')
})

t.test('who may modify: owners and workspace admins only', async (t) => {
  t.ok(mayModify([orgToken], ORG, []))
  t.ok(mayModify([team('x')], ORG, [row('x', 'admin')]), 'a team row with admin')
  t.ok(mayModify([team('x', { manageWorkspaces: true })], ORG, []))
  t.notOk(mayModify([team('x')], ORG, [row('x', 'write')]))
  t.notOk(mayModify([team('x')], ORG, [row('x', 'custom')]), 'custom is never admin')
  t.notOk(mayModify([team('x', { readWorkspaces: true })], ORG, []))
})

t.test('who sees which row', async (t) => {
  const rows = [row('red', 'read', 'secret'), row('blue', 'write', 'organization'), row('boss', 'admin', 'secret')]
  const sees = (grants: Grant[]) => rows.filter((r) => maySee(grants, ORG, rows, r)).map((r) => r.teamId)
  t.same(sees([orgToken]), ['red', 'blue', 'boss'], 'owners see every row, secret teams included')
  t.same(sees([team('boss')]), ['red', 'blue', 'boss'], 'a workspace admin sees every row')
  t.same(sees([team('red')]), ['red', 'blue'], 'a member sees visible teams and their own secret team')
  t.same(sees([team('green', { readWorkspaces: true })]), ['blue'], 'a reader (read-workspaces) of another secret team sees only visible teams')
  t.same(sees([team('blue')]), ['blue'], 'a member through a team with a row sees visible teams and its own')
  t.same(sees([team('green')]), [], 'a member who cannot read the workspace sees no row, not even of visible teams')
  t.same(sees([{ ...team('red'), organizationId: 'org-b' }]), [], 'nothing outside one’s organizations')
  t.ok(isMember([team('green')], ORG))
  t.notOk(mayRead([team('green')], ORG, rows), 'a member is not a reader')
  t.ok(mayRead([team('red')], ORG, rows), 'a row of any level (custom included) makes a reader')
  t.ok(mayRead([team('green', { readWorkspaces: true })], ORG, rows))
  t.ok(mayRead([orgToken], ORG, rows))
  t.notOk(isMember([], ORG))
})

t.test('the answers of §10.2: a team\'s grants, a user\'s through its teams', async (t) => {
  const ws = { id: 'ws-1', organizationId: ORG }
  const team = (id: string, extra: Partial<TeamRecord> = {}): TeamRecord => ({ id, organizationId: ORG, isOwners: false, manageWorkspaces: false, readWorkspaces: false, ...extra })
  const custom = { runs: 'apply', variables: 'none', 'state-versions': 'read-outputs', 'sentinel-mocks': 'none', 'workspace-locking': false, 'run-tasks': false, 'policy-overrides': true } as const
  const rows: RowRecord[] = [
    { id: 'tws-a', teamId: 'a', workspaceId: 'ws-1', access: 'custom', permissions: custom },
    { id: 'tws-b', teamId: 'b', workspaceId: 'ws-2', access: 'admin', permissions: IMPLICIT_PERMISSIONS.admin }
  ]
  t.same(answerOf([team('o', { isOwners: true })], ws, rows), { access: 'admin', permissions: IMPLICIT_PERMISSIONS.admin, sources: [{ kind: 'owners', teamId: 'o', access: 'admin' }] })
  t.same(answerOf([team('a', { readWorkspaces: true })], ws, rows), {
    access: 'read',
    permissions: { runs: 'apply', variables: 'read', 'state-versions': 'read', 'sentinel-mocks': 'none', 'workspace-locking': false, 'run-tasks': false, 'policy-overrides': true },
    sources: [{ kind: 'organization-access.read-workspaces', teamId: 'a', access: 'read' }, { kind: 'team-access', teamId: 'a', access: 'custom', rowId: 'tws-a' }]
  }, 'read-workspaces and a custom row: read, each permission the strongest')
  t.equal(answerOf([team('b')], ws, rows), null, 'a row on another workspace grants nothing here')
  t.equal(answerOf([team('o', { isOwners: true, organizationId: 'org-b' })], ws, rows), null, 'nothing across organizations')
  t.same(answerOf([team('a'), team('m', { manageWorkspaces: true })], ws, rows)?.access, 'admin', 'a user: the highest through any of its teams')
  t.ok(mayExplainTeam([team('a')].map(teamAsGrant), team('a')), 'who acts through the team')
  t.ok(mayExplainTeam([orgToken], team('a')), 'owners')
  t.notOk(mayExplainTeam([team('m', { manageWorkspaces: true })].map(teamAsGrant), team('a')), 'manage-workspaces is no ownership')
})
