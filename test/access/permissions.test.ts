import t from 'tap'
import {
  CUSTOM_DEFAULTS, IMPLICIT_PERMISSIONS, customOnlyViolations, permissionsOnAdd, updateChanges, type Permissions
} from '../../src/access/permissions.js'

t.test('implicit permissions per level (DESIGN §4 table)', async (t) => {
  t.same(IMPLICIT_PERMISSIONS, {
    read: { runs: 'read', variables: 'read', 'state-versions': 'read', 'sentinel-mocks': 'none', 'workspace-locking': false, 'run-tasks': false, 'policy-overrides': false },
    plan: { runs: 'plan', variables: 'read', 'state-versions': 'read', 'sentinel-mocks': 'none', 'workspace-locking': false, 'run-tasks': false, 'policy-overrides': false },
    write: { runs: 'apply', variables: 'write', 'state-versions': 'write', 'sentinel-mocks': 'read', 'workspace-locking': true, 'run-tasks': false, 'policy-overrides': false },
    admin: { runs: 'apply', variables: 'write', 'state-versions': 'write', 'sentinel-mocks': 'read', 'workspace-locking': true, 'run-tasks': true, 'policy-overrides': false }
  })
  t.same(CUSTOM_DEFAULTS, { runs: 'read', variables: 'none', 'state-versions': 'none', 'sentinel-mocks': 'none', 'workspace-locking': false, 'run-tasks': false, 'policy-overrides': false })
})

t.test('custom-only: a value other than the implied one under a fixed level is refused, with HCP Terraform’s words', async (t) => {
  t.same(customOnlyViolations('read', { runs: 'apply' }), [{
    attribute: 'runs',
    detail: "Runs is read-only when access level is 'read'; use the 'custom' access level to set this attribute."
  }])
  t.same(customOnlyViolations('write', { 'state-versions': 'read-outputs', 'run-tasks': true, 'policy-overrides': false }).map((v) => v.detail), [
    "State versions is read-only when access level is 'write'; use the 'custom' access level to set this attribute.",
    "Run tasks is read-only when access level is 'write'; use the 'custom' access level to set this attribute."
  ])
  t.same(customOnlyViolations('plan', { 'sentinel-mocks': 'read' })[0]?.attribute, 'sentinel-mocks')
  t.same(customOnlyViolations('admin', { 'workspace-locking': false })[0]?.detail,
    "Workspace locking is read-only when access level is 'admin'; use the 'custom' access level to set this attribute.")
  t.same(customOnlyViolations('read', { variables: 'write' })[0]?.detail.startsWith('Variables is read-only'), true)
})

t.test('custom-only: sending the implied value anyway is accepted (clients send resources back)', async (t) => {
  for (const [level, implied] of Object.entries(IMPLICIT_PERMISSIONS)) {
    t.same(customOnlyViolations(level as keyof typeof IMPLICIT_PERMISSIONS, implied), [], level)
  }
  t.same(customOnlyViolations('custom', { runs: 'apply', 'run-tasks': true, 'policy-overrides': false }), [], 'anything goes under custom')
})

t.test('add: fixed levels take their implicit permissions; custom fills omitted ones with the defaults', async (t) => {
  t.same(permissionsOnAdd('write', {}), IMPLICIT_PERMISSIONS.write)
  t.same(permissionsOnAdd('custom', {}), CUSTOM_DEFAULTS)
  t.same(permissionsOnAdd('custom', { runs: 'apply', 'workspace-locking': true, variables: undefined }),
    { ...CUSTOM_DEFAULTS, runs: 'apply', 'workspace-locking': true })
})

/** What a row holds after applying the changes an update computes (the repository's UPDATE, in JS). */
function apply (current: { access: string } & Permissions, access: Parameters<typeof updateChanges>[0], body: Partial<Permissions>) {
  const changes = updateChanges(access, body)
  if (Array.isArray(changes)) return { violations: changes.map((v) => v.attribute) }
  if (!changes.currentAccessIn.includes(current.access as any)) return { refusedFor: current.access }
  return { ...current, ...changes.permissions, access: changes.access ?? current.access }
}

t.test('update: switching to a fixed level resets every permission to that level', async (t) => {
  const custom = { access: 'custom', ...CUSTOM_DEFAULTS, runs: 'apply' as const, 'run-tasks': true, 'policy-overrides': false }
  t.same(apply(custom, 'plan', {}), { access: 'plan', ...IMPLICIT_PERMISSIONS.plan })
  t.same(apply(custom, 'admin', { runs: 'apply' }), { access: 'admin', ...IMPLICIT_PERMISSIONS.admin }, 'the implied value may be sent along')
  t.same(apply(custom, 'read', { runs: 'apply' }), { violations: ['runs'] }, 'a contradicting value is refused')
})

t.test('update: switching to or staying on custom keeps every permission the body omits', async (t) => {
  const write = { access: 'write', ...IMPLICIT_PERMISSIONS.write }
  t.same(apply(write, 'custom', { 'run-tasks': true, 'policy-overrides': false }), { access: 'custom', ...IMPLICIT_PERMISSIONS.write, 'run-tasks': true, 'policy-overrides': false })
  const custom = { access: 'custom', ...CUSTOM_DEFAULTS, variables: 'write' as const }
  t.same(apply(custom, undefined, { runs: 'plan' }), { ...custom, runs: 'plan' }, 'no access in the body: the level stays custom')
  t.same(apply(custom, 'custom', {}), custom)
})

t.test('update without access: the values given must suit the row’s current level', async (t) => {
  const read = { access: 'read', ...IMPLICIT_PERMISSIONS.read }
  t.same(apply(read, undefined, { runs: 'apply' }), { refusedFor: 'read' })
  t.same(apply(read, undefined, { runs: 'read' }), read, 'the implied value is fine')
  const changes = updateChanges(undefined, { 'workspace-locking': true })
  t.same(!Array.isArray(changes) && changes.currentAccessIn, ['write', 'admin', 'custom'])
})
