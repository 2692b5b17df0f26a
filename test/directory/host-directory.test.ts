import t, { type Test } from 'tap'
import type { Kysely } from 'kysely'
import type { Database } from '../../src/db/database.js'
import { applySeedDocument } from '../../src/directory/seed.js'
import { tokenDigest } from '../../src/auth/token-digest.js'
import { directory, DirectoryError, type DirectoryErrorCode } from '../../src/directory/host-directory.js'
import { ENGINE, freshDatabase } from '../helper.js'

/**
 * DESIGN §9.1: the host's directory. Every function, one row at a time, each call one
 * transaction with its cascades and audit events (System, the actor, default `host`); rows it
 * creates are the host's, which no seed removes; a change names only what it changes; errors are
 * DirectoryErrors, never a raw database error.
 */
const seed = () => ({
  users: [{ id: 'user-ann', username: 'ann' }, { id: 'user-ben', username: 'ben', tokens: ['ben-seed-token'] }],
  organizations: [{
    id: 'org-acme',
    name: 'acme',
    teams: [
      { id: 'team-owners', name: 'owners', owners: true, members: ['ann'] },
      { id: 'team-red', name: 'red', members: ['ben'], tokens: ['red-seed-token'] }
    ],
    workspaces: [{ id: 'ws-prod', name: 'prod' }],
    'team-access': [{ team: 'red', workspace: 'prod', access: 'write' }]
  }]
})

type Event = { action: string, resource_type: string, resource_id: string | null, meta: unknown, accessor_kind: string, accessor_description: string, request_id: string, team_id: string | null, workspace_id: string | null, organization_id: string }

/** The audit events recorded since the last call. */
function trail (db: Kysely<Database>) {
  const seen = new Set<string>()
  return async (): Promise<Event[]> => {
    const rows = await db.selectFrom('audit_events').selectAll().orderBy('occurred_at').orderBy('id').execute()
    const fresh = rows.filter((r) => !seen.has(r.id))
    for (const r of fresh) seen.add(r.id)
    return fresh.map((r) => ({
      action: r.action,
      resource_type: r.resource_type,
      resource_id: r.resource_id,
      meta: r.meta,
      accessor_kind: r.accessor_kind,
      accessor_description: r.accessor_description,
      request_id: r.request_id,
      team_id: r.team_id,
      workspace_id: r.workspace_id,
      organization_id: r.organization_id
    }))
  }
}

async function refused (t: Test, promise: Promise<unknown>, code: DirectoryErrorCode, message: RegExp | string, what: string) {
  try {
    await promise
    t.fail(`${what}: not refused`)
  } catch (err) {
    t.ok(err instanceof DirectoryError, `${what}: a DirectoryError (${String(err)})`)
    t.equal((err as DirectoryError).code, code, `${what}: ${code}`)
    t.match((err as DirectoryError).message, message, `${what}: message`)
  }
}

async function setup (t: Test) {
  const { db } = await freshDatabase(t)
  await applySeedDocument(db, seed())
  const events = trail(db)
  await events()
  return { db, dir: directory(db), events }
}

const rowOf = async (db: Kysely<Database>, table: 'organizations' | 'users' | 'teams' | 'workspaces' | 'tokens', id: string) =>
  await db.selectFrom(table as 'teams').selectAll().where('id', '=', id).executeTakeFirst()

t.test(`the host's directory (${ENGINE})`, async (t) => {
  t.test('organizations: create, change, remove; errors', async (t) => {
    const { db, dir, events } = await setup(t)
    const org = await dir.createOrganization({ name: 'globex' })
    t.match(org, { id: /^org-[1-9A-HJ-NP-Za-km-z]{16}$/, name: 'globex', managedBy: 'host' })
    t.ok(org.createdAt instanceof Date)
    t.match(await dir.createOrganization({ name: 'initech', id: 'org-initech' }), { id: 'org-initech', name: 'initech', managedBy: 'host' })
    await refused(t, dir.createOrganization({ name: 'globex' }), 'conflict', 'an organization with this name already exists', 'a taken name')
    await refused(t, dir.createOrganization({ name: 'other', id: 'org-initech' }), 'conflict', 'an organization with this id already exists', 'a taken id')
    await refused(t, dir.createOrganization({ name: '' }), 'invalid', /^organization › name: /, 'an empty name')
    await refused(t, dir.createOrganization({ name: 'a b' }), 'invalid', /name/, 'a name that is not URL-safe')
    await refused(t, dir.createOrganization({ name: 'x', id: 'team-x' }), 'invalid', /id/, 'an id of another kind')

    const renamed = await dir.changeOrganization(org.id, { name: 'globex-corp' })
    t.same(renamed, { ...org, name: 'globex-corp' }, 'renamed, nothing else moved')
    t.same(await dir.changeOrganization(org.id, {}), renamed, 'an empty change changes nothing')
    t.same(await dir.changeOrganization(org.id, { name: undefined }), renamed, 'an undefined member is absent')
    await refused(t, dir.changeOrganization(org.id, { name: 'acme' }), 'conflict', /name/, 'a rename to a taken name')
    await refused(t, dir.changeOrganization('org-nope', { name: 'x' }), 'not-found', 'no organization with id "org-nope"', 'a missing id')
    await refused(t, dir.removeOrganization('org-nope'), 'not-found', /no organization/, 'removing a missing one')
    await refused(t, dir.changeOrganization(org.id, { name: 'x', nope: 1 } as any), 'invalid', /unknown member "nope"/, 'an unknown member')

    const seeded = await dir.changeOrganization('org-acme', { name: 'acme-inc' })
    t.equal(seeded.managedBy, 'seed', 'a change keeps the row’s source')
    await dir.removeOrganization(org.id)
    t.equal(await rowOf(db, 'organizations', org.id), undefined, 'removed')
    t.same(await events(), [], 'organizations record no events of their own')
  })

  t.test('users: create, change, remove with memberships and tokens', async (t) => {
    const { db, dir, events } = await setup(t)
    const cy = await dir.createUser({ username: 'cy' })
    t.match(cy, { id: /^user-/, username: 'cy', managedBy: 'host' })
    await refused(t, dir.createUser({ username: 'ann' }), 'conflict', 'a user with this username already exists', 'a taken username')
    await refused(t, dir.createUser({ username: 'x', id: 'user-ann' }), 'conflict', 'a user with this id already exists', 'a taken id')
    await refused(t, dir.createUser({ username: '' }), 'invalid', /username/, 'an empty username')
    t.same(await dir.changeUser(cy.id, { username: 'cyd' }), { ...cy, username: 'cyd' })
    await refused(t, dir.changeUser(cy.id, { username: 'ben' }), 'conflict', /username/, 'a rename to a taken username')
    await refused(t, dir.changeUser('user-nope', {}), 'not-found', /no user/, 'a missing user')

    await dir.addMember({ teamId: 'team-red', userId: cy.id })
    await dir.addMember({ teamId: 'team-owners', userId: cy.id })
    const token = await dir.createToken({ userId: cy.id })
    await events()
    await dir.removeUser(cy.id, { actor: 'hr-sync', requestId: 'req-offboard' })
    t.equal(await rowOf(db, 'users', cy.id), undefined, 'the user is gone')
    t.same(await db.selectFrom('team_memberships').select('team_id').where('user_id', '=', cy.id).execute(), [], 'with its memberships')
    t.equal(await rowOf(db, 'tokens', token.id), undefined, 'and its tokens')
    const trailed = await events()
    t.same(trailed.map((e) => JSON.stringify([e.resource_type, e.action, e.meta])).sort(), [
      ['organization-membership', 'destroy', { user: 'cyd' }],
      ['team', 'remove_member', { team: 'owners', user: 'cyd' }],
      ['team', 'remove_member', { team: 'red', user: 'cyd' }]
    ].map((e) => JSON.stringify(e)), 'one remove_member per membership, its organization membership destroyed (a user’s own token is in no organization’s trail)')
    t.ok(trailed.every((e) => e.accessor_kind === 'system' && e.accessor_description === 'hr-sync' && e.request_id === 'req-offboard'), 'System, the actor, the request id')

    await refused(t, dir.removeUser('user-ann'), 'invalid', /last member of the owners team/, 'the last owner')
    t.ok(await rowOf(db, 'users', 'user-ann'), 'still there')
    await dir.removeUser('user-ben')
    t.equal(await rowOf(db, 'users', 'user-ben'), undefined, 'a seed’s user may be removed by the host')
    t.equal(await db.selectFrom('tokens').select('id').where('digest', '=', tokenDigest('ben-seed-token')).executeTakeFirst(), undefined, 'with its seed token')
  })

  t.test('teams: create, with defaults and with every field, and their events', async (t) => {
    const { db, dir, events } = await setup(t)
    const plain = await dir.createTeam({ organizationId: 'org-acme', name: 'blue' }, { requestId: 'req-1' })
    t.match(plain, { id: /^team-/, organizationId: 'org-acme', name: 'blue', visibility: 'secret', owners: false, ssoTeamId: null, allowMemberTokenManagement: true, managedBy: 'host' })
    t.ok(Object.values(plain.organizationAccess).every((v) => v === false), 'no flag')
    t.equal(Object.keys(plain.organizationAccess).length, 16, 'every flag answered')
    const created = { action: 'create', resource_type: 'team', resource_id: plain.id, meta: { team: 'blue' }, accessor_kind: 'system' }
    const where = { accessor_description: 'host', request_id: 'req-1', team_id: null, workspace_id: null, organization_id: 'org-acme' }
    t.same(await events(), [{ ...created, ...where }], 'a create event, System host')

    const full = await dir.createTeam({
      organizationId: 'org-acme',
      name: 'green',
      id: 'team-green',
      visibility: 'organization',
      organizationAccess: { 'manage-workspaces': true, 'read-projects': true, 'manage-teams': undefined },
      ssoTeamId: 'sso-1',
      allowMemberTokenManagement: false
    })
    t.match(full, { id: 'team-green', visibility: 'organization', ssoTeamId: 'sso-1', allowMemberTokenManagement: false })
    t.match(full.organizationAccess, { 'manage-workspaces': true, 'read-projects': true, 'manage-teams': false, 'read-workspaces': false })

    await refused(t, dir.createTeam({ organizationId: 'org-acme', name: 'blue' }), 'conflict', 'the organization already has a team with this name', 'a taken name')
    await refused(t, dir.createTeam({ organizationId: 'org-acme', name: 'x', id: 'team-green' }), 'conflict', 'a team with this id already exists', 'a taken id')
    await refused(t, dir.createTeam({ organizationId: 'org-acme', name: 'o2', owners: true }), 'conflict', 'the organization already has an owners team', 'a second owners team')
    await refused(t, dir.createTeam({ organizationId: 'org-nope', name: 'x' }), 'not-found', /no organization/, 'a missing organization')
    await refused(t, dir.createTeam({ organizationId: 'org-acme', name: '' }), 'invalid', /team › name/, 'an empty name')
    await refused(t, dir.createTeam({ organizationId: 'org-acme', name: 'x', visibility: 'public' as any }), 'invalid', /visibility: must be one of "secret", "organization"/, 'a bad visibility')
    await refused(t, dir.createTeam({ organizationId: 'org-acme', name: 'x', organizationAccess: { 'manage-everything': true } as any }), 'invalid', /unknown member "manage-everything"/, 'an unknown flag')
    const globex = await dir.createOrganization({ name: 'globex' })
    await refused(t, dir.createTeam({ organizationId: globex.id, name: 'owners', owners: true, organizationAccess: { 'manage-teams': true } }), 'invalid', /owners team has no organization-access flags/, 'an owners team with flags')
    t.match(await dir.createTeam({ organizationId: globex.id, name: 'owners', owners: true }), { owners: true }, 'an owners team')
    t.same((await events()).map((e) => e.action), ['create', 'create'], 'refusals record nothing')
    t.equal(await db.selectFrom('teams').select('id').where('name', '=', 'x').executeTakeFirst(), undefined, 'nor write anything')
  })

  t.test('a host-managed team changed through the directory keeps every field the change did not name', async (t) => {
    const { db, dir, events } = await setup(t)
    const team = await dir.createTeam({
      organizationId: 'org-acme',
      name: 'ops',
      visibility: 'organization',
      ssoTeamId: 'sso-ops',
      organizationAccess: { 'manage-workspaces': true, 'manage-membership': true, 'manage-policies': true },
      allowMemberTokenManagement: false
    })
    await events()
    const before = await rowOf(db, 'teams', team.id)
    const changed = await dir.changeTeam(team.id, { name: 'operations' })
    const after = await rowOf(db, 'teams', team.id)
    t.same(after, { ...before, name: 'operations' }, 'the whole row: only the name moved')
    t.same(changed, { ...team, name: 'operations' }, 'and the answer says so')
    t.same((await events()).map((e) => [e.action, e.meta]), [['update', { team: 'operations' }]], 'one update event')

    // undefined members are absent; flags merge one by one
    const merged = await dir.changeTeam(team.id, { visibility: undefined, organizationAccess: { 'manage-workspaces': false, 'read-workspaces': true, 'manage-teams': undefined } })
    t.same(await rowOf(db, 'teams', team.id), { ...after, manage_workspaces: false, read_workspaces: true }, 'only the two flags named')
    t.same(merged.organizationAccess, { ...team.organizationAccess, 'manage-workspaces': false, 'read-workspaces': true })
    t.same(await dir.changeTeam(team.id, { ssoTeamId: '' }).then((x) => x.ssoTeamId), null, 'an empty sso-team-id clears it')
    t.same(await dir.changeTeam(team.id, { allowMemberTokenManagement: true, visibility: 'secret' }).then((x) => [x.allowMemberTokenManagement, x.visibility, x.ssoTeamId]), [true, 'secret', null])
    t.equal((await events()).length, 3, 'one update event per change')
  })

  t.test('a change that changes nothing records nothing', async (t) => {
    const { db, dir, events } = await setup(t)
    const before = await rowOf(db, 'teams', 'team-red')
    const same = await dir.changeTeam('team-red', { name: 'red', visibility: 'secret', organizationAccess: { 'manage-teams': false }, ssoTeamId: null })
    t.same(await rowOf(db, 'teams', 'team-red'), before, 'the row as it was')
    t.equal(same.managedBy, 'seed')
    t.same(await dir.changeTeam('team-red', {}), same)
    t.same(await events(), [], 'no event')
  })

  t.test('the owners team’s rules; a seed team changed and removed by the host', async (t) => {
    const { db, dir, events } = await setup(t)
    await refused(t, dir.removeTeam('team-owners'), 'invalid', /owners team "owners" cannot be removed/, 'removing the owners team')
    await refused(t, dir.changeTeam('team-owners', { name: 'bosses' }), 'invalid', /cannot be renamed/, 'renaming it')
    await refused(t, dir.changeTeam('team-owners', { organizationAccess: { 'manage-teams': true } }), 'invalid', /no organization-access flags/, 'giving it a flag')
    t.match(await dir.changeTeam('team-owners', { name: 'owners', organizationAccess: { 'manage-teams': false }, visibility: 'organization' }), { visibility: 'organization' }, 'what is no rule may change')
    await refused(t, dir.removeMember({ teamId: 'team-owners', userId: 'user-ann' }), 'invalid', /last member of the owners team/, 'its last member')
    await refused(t, dir.changeTeam('team-nope', {}), 'not-found', /no team/, 'a missing team')
    await refused(t, dir.removeTeam('team-nope'), 'not-found', /no team/, 'removing a missing team')
    await refused(t, dir.changeTeam('team-red', { name: 'owners' }), 'conflict', /already has a team with this name/, 'a taken name')

    const changed = await dir.changeTeam('team-red', { name: 'crimson' })
    t.equal(changed.managedBy, 'seed', 'a change keeps the seed’s row the seed’s')
    await events()
    const red = await db.selectFrom('tokens').select('id').where('team_id', '=', 'team-red').execute()
    await dir.removeTeam('team-red', { actor: 'admin-console', requestId: 'req-rm' })
    t.equal(await rowOf(db, 'teams', 'team-red'), undefined, 'the seed’s team removed')
    t.same(await db.selectFrom('team_memberships').selectAll().where('team_id', '=', 'team-red').execute(), [], 'its memberships')
    t.equal(await db.selectFrom('tokens').select('id').where('id', 'in', red.map((x) => x.id)).executeTakeFirst(), undefined, 'its tokens')
    t.same(await db.selectFrom('team_workspaces').selectAll().where('team_id', '=', 'team-red').execute(), [], 'its team access')
    t.same(await db.selectFrom('seed_grants').selectAll().where('team_id', '=', 'team-red').execute(), [], 'its remembered grants')
    const trailed = await events()
    // the rows' events come first (a statement of their own); the rest share one statement's instant
    t.same(trailed.map((e) => JSON.stringify([e.resource_type, e.action, e.meta])).slice(0, 1), [JSON.stringify(['workspace', 'remove_team', null])])
    t.same(trailed.map((e) => JSON.stringify([e.resource_type, e.action, e.meta])).slice(1).sort(), [
      ['authentication-token', 'destroy', { subject: 'crimson' }],
      ['team', 'destroy', { team: 'crimson' }],
      ['team', 'remove_member', { team: 'crimson', user: 'ben' }]
    ].map((e) => JSON.stringify(e)))
    t.match(trailed[0], { team_id: 'team-red', workspace_id: 'ws-prod' }, 'the remove_team event names the team and workspace')
    t.ok(trailed.every((e) => e.accessor_description === 'admin-console' && e.request_id === 'req-rm'))
    const counts = await db.selectFrom('workspace_access_counts').selectAll().where('workspace_id', '=', 'ws-prod').executeTakeFirst()
    t.match(counts, { total: 0 }, 'the workspace counter counted the row out')
  })

  t.test('memberships: add and remove, idempotent, with events', async (t) => {
    const { db, dir, events } = await setup(t)
    const added = await dir.addMember({ teamId: 'team-red', userId: 'user-ann' })
    t.same(added, { teamId: 'team-red', userId: 'user-ann', managedBy: 'host' })
    t.same((await events()).map((e) => [e.action, e.meta, e.resource_id]), [['add_member', { team: 'red', user: 'ann' }, 'team-red']])
    t.same(await dir.addMember({ teamId: 'team-red', userId: 'user-ann' }), added, 'adding a member again changes nothing')
    t.same(await dir.addMember({ teamId: 'team-red', userId: 'user-ben' }), { teamId: 'team-red', userId: 'user-ben', managedBy: 'seed' }, 'a seed’s membership stays the seed’s')
    t.same(await events(), [], 'no event for either')
    await refused(t, dir.addMember({ teamId: 'team-nope', userId: 'user-ann' }), 'not-found', /no team/, 'a missing team')
    await refused(t, dir.addMember({ teamId: 'team-red', userId: 'user-nope' }), 'not-found', /no user/, 'a missing user')
    await refused(t, dir.addMember({ teamId: 'team-red' } as any), 'invalid', /membership › userId/, 'no user')

    await dir.removeMember({ teamId: 'team-red', userId: 'user-ann' })
    await dir.removeMember({ teamId: 'team-red', userId: 'user-ann' })
    t.same((await events()).map((e) => [e.action, e.meta]), [['remove_member', { team: 'red', user: 'ann' }]], 'one remove_member; removing an absent member is no error')
    await dir.removeMember({ teamId: 'team-red', userId: 'user-ben' })
    t.same(await db.selectFrom('team_memberships').selectAll().where('team_id', '=', 'team-red').execute(), [], 'a seed’s membership removed by the host')
    await dir.addMember({ teamId: 'team-owners', userId: 'user-ben' })
    await dir.removeMember({ teamId: 'team-owners', userId: 'user-ann' })
    t.same(await db.selectFrom('team_memberships').select('user_id').where('team_id', '=', 'team-owners').execute(), [{ user_id: 'user-ben' }], 'an owner removed while another remains')
  })

  t.test('workspaces: create, change, remove with team access', async (t) => {
    const { db, dir, events } = await setup(t)
    const ws = await dir.createWorkspace({ organizationId: 'org-acme', name: 'staging' })
    t.match(ws, { id: /^ws-[1-9A-HJ-NP-Za-km-z]{16}$/, organizationId: 'org-acme', name: 'staging', managedBy: 'host' })
    await refused(t, dir.createWorkspace({ organizationId: 'org-acme', name: 'prod' }), 'conflict', 'the organization already has a workspace with this name', 'a taken name')
    await refused(t, dir.createWorkspace({ organizationId: 'org-acme', name: 'no spaces' }), 'invalid', /workspace › name/, 'a bad name')
    await refused(t, dir.createWorkspace({ organizationId: 'org-nope', name: 'x' }), 'not-found', /no organization/, 'a missing organization')
    t.same(await dir.changeWorkspace(ws.id, { name: 'stage' }), { ...ws, name: 'stage' })
    await refused(t, dir.changeWorkspace(ws.id, { name: 'prod' }), 'conflict', /workspace with this name/, 'a rename to a taken name')
    await refused(t, dir.removeWorkspace('ws-nope'), 'not-found', /no workspace/, 'a missing workspace')
    t.same((await events()).map((e) => [e.resource_type, e.action, e.resource_id, e.meta, e.accessor_description]), [
      ['workspace', 'create', ws.id, { workspace: 'staging' }, 'host'],
      ['workspace', 'update', ws.id, { workspace: 'stage' }, 'host']
    ], 'a workspace created and renamed by the host: its events (DESIGN §14.1), none for a refusal')

    await dir.removeWorkspace('ws-prod')
    t.equal(await rowOf(db, 'workspaces', 'ws-prod'), undefined, 'the seed’s workspace removed')
    t.same(await db.selectFrom('team_workspaces').selectAll().where('workspace_id', '=', 'ws-prod').execute(), [], 'with its team access')
    t.same(await db.selectFrom('seed_grants').selectAll().where('workspace_id', '=', 'ws-prod').execute(), [], 'and its remembered grants')
    t.same((await events()).map((e) => [e.action, e.team_id, e.workspace_id, e.resource_id, e.meta]), [
      ['remove_team', 'team-red', 'ws-prod', null, null],
      ['destroy', null, null, 'ws-prod', { workspace: 'prod' }]
    ], 'one remove_team, then the workspace destroyed')
  })

  t.test('tokens: create for a team, an organization, a user; the secret; remove', async (t) => {
    const { db, dir, events } = await setup(t)
    const team = await dir.createToken({ teamId: 'team-red' })
    t.match(team, { id: /^at-/, secret: /^[A-Za-z0-9_-]{14}\.atlasv1\.[A-Za-z0-9_-]{54}$/ }, 'generated as the API does')
    const stored = await db.selectFrom('tokens').selectAll().where('id', '=', team.id).executeTakeFirstOrThrow()
    t.match(stored, { kind: 'team', team_id: 'team-red', organization_id: null, user_id: null, digest: tokenDigest(team.secret), managed_by: 'host', created_by: null, description: null, expires_at: null })
    const expiresAt = new Date('2031-01-02T03:04:05.000Z')
    const org = await dir.createToken({ organizationId: 'org-acme' }, { secret: 'host-org-secret', description: 'ci', expiresAt })
    t.same(org.secret, 'host-org-secret', 'the given secret')
    t.match(await rowOf(db, 'tokens', org.id), { kind: 'organization', organization_id: 'org-acme', description: 'ci', digest: tokenDigest('host-org-secret') })
    t.equal(((await rowOf(db, 'tokens', org.id)) as any).expires_at.toISOString(), expiresAt.toISOString())
    const user = await dir.createToken({ userId: 'user-ann' }, { expiresAt: '2031-01-02T03:04:05Z' })
    t.match(await rowOf(db, 'tokens', user.id), { kind: 'user', user_id: 'user-ann' })
    const trailed = await events()
    t.same(trailed.map((e) => [e.resource_type, e.action, e.resource_id, e.meta]), [
      ['authentication-token', 'create', team.id, { subject: 'red' }],
      ['authentication-token', 'create', org.id, { subject: 'acme' }]
    ], 'create events naming the subject; a user’s own token is in no organization’s trail')
    t.notOk(JSON.stringify(trailed).includes(team.secret) || JSON.stringify(trailed).includes('host-org-secret'), 'never the secret')

    await dir.createToken({ teamId: 'team-red' }, { description: 'deploy' })
    await refused(t, dir.createToken({ teamId: 'team-red' }, { description: 'deploy' }), 'conflict', 'the team already has a token with this description', 'a taken description')
    await refused(t, dir.createToken({ teamId: 'team-owners' }, { secret: 'host-org-secret' }), 'conflict', 'this secret is already the secret of another token', 'a secret in use')
    await db.insertInto('revoked_tokens').values({ digest: tokenDigest('a-revoked-secret') }).execute()
    await refused(t, dir.createToken({ userId: 'user-ben' }, { secret: 'a-revoked-secret' }), 'invalid', /revoked/, 'a revoked secret')
    await refused(t, dir.createToken({ userId: 'user-ben' }, { secret: 'short' }), 'invalid', /token › secret/, 'a short secret')
    await refused(t, dir.createToken({ userId: 'user-ben' }, { expiresAt: new Date('nope') }), 'invalid', /expiresAt/, 'a bad date')
    await refused(t, dir.createToken({ userId: 'user-ben' }, { expiresAt: 'tomorrow' }), 'invalid', /expiresAt/, 'a bad date string')
    await refused(t, dir.createToken({ teamId: 'team-nope' }), 'not-found', /no team/, 'a missing team')
    await refused(t, dir.createToken({ organizationId: 'org-nope' }), 'not-found', /no organization/, 'a missing organization')
    await refused(t, dir.createToken({ userId: 'user-nope' }), 'not-found', /no user/, 'a missing user')
    await refused(t, dir.createToken({ teamId: 'team-red', userId: 'user-ann' } as any), 'invalid', /subject/, 'two subjects')
    t.equal((await events()).length, 1, 'refusals record nothing')

    for (const secret of [team.secret, 'host-org-secret', 'a-revoked-secret']) {
      try { await dir.createToken({ teamId: 'team-red' }, { secret }) } catch (err) {
        t.notOk(String((err as Error).message).includes(secret) || String((err as Error).message).includes(tokenDigest(secret)), 'no error names the secret or its digest')
      }
    }
    await events()
    await dir.removeToken(team.id)
    await dir.removeToken(await db.selectFrom('tokens').select('id').where('digest', '=', tokenDigest('red-seed-token')).executeTakeFirstOrThrow().then((x) => x.id))
    t.same((await events()).map((e) => [e.action, e.meta]), [['destroy', { subject: 'red' }], ['destroy', { subject: 'red' }]], 'destroy events; a seed’s token too')
    t.equal(await rowOf(db, 'tokens', team.id), undefined)
    await refused(t, dir.removeToken(team.id), 'not-found', /no token/, 'removing it again')
  })

  t.test('removing an organization removes everything in it, with its events', async (t) => {
    const { db, dir, events } = await setup(t)
    const blue = await dir.createTeam({ organizationId: 'org-acme', name: 'blue' })
    await dir.addMember({ teamId: blue.id, userId: 'user-ann' })
    await dir.createToken({ teamId: blue.id })
    await dir.createToken({ organizationId: 'org-acme' })
    const ws = await dir.createWorkspace({ organizationId: 'org-acme', name: 'dev' })
    await db.insertInto('team_workspaces').values({ id: 'tws-blue-dev', organization_id: 'org-acme', team_id: blue.id, workspace_id: ws.id, access: 'read', runs: 'read', variables: 'none', state_versions: 'none', sentinel_mocks: 'none', workspace_locking: false, run_tasks: false }).execute()
    const other = await dir.createOrganization({ name: 'other' })
    const otherTeam = await dir.createTeam({ organizationId: other.id, name: 'red' })
    await events()

    await dir.removeOrganization('org-acme', { requestId: 'req-org' })
    for (const table of ['teams', 'workspaces', 'team_workspaces'] as const) {
      t.same(await db.selectFrom(table).select('id').where('organization_id', '=', 'org-acme').execute(), [], `no ${table} left`)
    }
    t.same(await db.selectFrom('tokens').select('id').where((eb) => eb.or([eb('organization_id', '=', 'org-acme'), eb('team_id', 'in', ['team-red', 'team-owners', blue.id])])).execute(), [], 'no tokens')
    t.same(await db.selectFrom('team_memberships').selectAll().where('team_id', 'in', ['team-red', 'team-owners', blue.id]).execute(), [], 'no memberships')
    t.same(await db.selectFrom('seed_grants').selectAll().execute(), [], 'no remembered grants')
    t.ok(await rowOf(db, 'users', 'user-ann'), 'users are global: they stay')
    t.ok(await rowOf(db, 'teams', otherTeam.id), 'another organization is untouched')
    const trailed = await events()
    const count = (type: string, action: string) => trailed.filter((e) => e.resource_type === type && e.action === action).length
    t.equal(count('workspace', 'remove_team'), 2, 'one remove_team per team-access row')
    t.equal(count('team', 'destroy'), 3, 'a destroy per team (the owners team’s too)')
    t.equal(count('team', 'remove_member'), 3, 'a remove_member per membership')
    t.equal(count('authentication-token', 'destroy'), 3, 'a destroy per token')
    t.ok(trailed.every((e) => e.organization_id === 'org-acme' && e.request_id === 'req-org' && e.accessor_description === 'host'))
  })

  t.test('a seed never removes host-managed rows', async (t) => {
    const { db, dir } = await setup(t)
    const user = await dir.createUser({ username: 'hosty' })
    const team = await dir.createTeam({ organizationId: 'org-acme', name: 'host-team' })
    await dir.addMember({ teamId: team.id, userId: user.id })
    await dir.addMember({ teamId: 'team-red', userId: user.id })
    const ws = await dir.createWorkspace({ organizationId: 'org-acme', name: 'host-ws' })
    const token = await dir.createToken({ teamId: 'team-red' })
    const userToken = await dir.createToken({ userId: user.id })

    // the document no longer declares red's member ben nor red's seed token; the host's rows it never declared
    const doc = seed()
    doc.organizations[0]!.teams[1] = { id: 'team-red', name: 'red', members: [] as string[], tokens: [] as string[] } as any
    const summary = await applySeedDocument(db, doc)
    t.same(summary.removed.memberships, ['acme/red: ben', 'acme: ben'], 'the seed’s membership it no longer declares is removed, and ben, in no team of acme, leaves it (DESIGN §14.2)')
    t.same(summary.removed.tokens, ['team acme/red'], 'and its token')
    t.same(summary.removed.teams, [])
    t.same(summary.removed.users, [])
    t.same(summary.removed.workspaces, [])
    t.ok(await rowOf(db, 'users', user.id), 'the host’s user stays')
    t.ok(await rowOf(db, 'teams', team.id), 'the host’s team stays')
    t.ok(await rowOf(db, 'workspaces', ws.id), 'the host’s workspace stays')
    t.ok(await rowOf(db, 'tokens', token.id), 'the host’s token of a seed team stays')
    t.ok(await rowOf(db, 'tokens', userToken.id), 'the host’s user token stays')
    t.same((await db.selectFrom('team_memberships').select('team_id').where('user_id', '=', user.id).orderBy('team_id').execute()).map((m) => m.team_id).sort(),
      [team.id, 'team-red'].sort(), 'the host’s memberships stay, in a seed team too')

    // a seed-managed team the document drops goes as before
    const dropped = seed()
    dropped.organizations[0]!.teams = dropped.organizations[0]!.teams.filter((x) => x.name !== 'red')
    dropped.organizations[0]!['team-access'] = []
    const again = await applySeedDocument(db, dropped)
    t.same(again.removed.teams, ['acme/red'])
    t.equal(await rowOf(db, 'teams', 'team-red'), undefined)
    t.equal(await rowOf(db, 'tokens', token.id), undefined, 'the host’s token goes with its team')
    t.ok(await rowOf(db, 'teams', team.id), 'the host’s team still stays')
  })

  t.test('bad options and ids', async (t) => {
    const { dir } = await setup(t)
    await refused(t, dir.createUser({ username: 'x' }, { actor: '' }), 'invalid', /options › actor/, 'an empty actor')
    await refused(t, dir.changeUser('user-\u0000', {}), 'not-found', /no user/, 'an impossible id')
    await refused(t, dir.removeTeam(''), 'not-found', /no team/, 'an empty id')
    await refused(t, dir.createUser(null as any), 'invalid', /user/, 'no object')
  })
})
