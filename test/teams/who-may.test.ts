import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { ENGINE } from '../helper.js'
import { buildDirectory, CALLERS, observable, teamsClient } from './directory.js'

/**
 * DESIGN §9.3, §9.4, who may: create, update, delete — owners and manage-teams; membership —
 * owners, manage-teams, manage-membership. Everyone else answers the 404 of a missing team, byte
 * for byte. And the rules beyond HCP Terraform (docs/CONTRACT.md): (a) nobody hands out more than
 * they hold, (b) only owners manage the owners team, which keeps its name, no flags, and a member,
 * (c) only owners set or change organization-access flags.
 */
t.test(`who may manage teams and their members on ${ENGINE}`, async (t) => {
  const app = await buildDirectory(t)
  const api = teamsClient(t, app)
  const org = CALLERS.organization
  let made = 0
  /** A fresh API team, made by the organization token. */
  const team = async (attributes: Record<string, unknown> = {}): Promise<string> => {
    const res = await api.create('acme', { name: `t${++made}`, ...attributes }, org)
    if (res.statusCode !== 201) throw new Error(res.body)
    return res.json().data.id
  }
  // the answers of a missing team, per operation, against which every refusal is compared
  const missing = {
    update: observable(await api.update('team-missing', { visibility: 'secret' }, org)),
    destroy: observable(await api.destroy('team-missing', org)),
    add: observable(await api.addMembers('team-missing', ['spare'], org)),
    remove: observable(await api.removeMembers('team-missing', ['spare'], org)),
    create: observable(await api.create('missing-organization', { name: 'x' }, org))
  }
  t.equal(missing.update.status, 404)
  const hidden = (t: Test, res: LightMyRequestResponse, kind: keyof typeof missing, who: string) => {
    t.same(observable(res), missing[kind], `${who}: ${kind} answers the 404 of a missing team, byte for byte`)
  }

  const plain = await team({ visibility: 'organization' })
  const secret = await team()
  const workspaceManagers = await team({ visibility: 'organization', 'organization-access': { 'manage-workspaces': true } })
  const teamManagers = await team({ visibility: 'organization', 'organization-access': { 'manage-teams': true } })
  const membershipManagers = await team({ visibility: 'organization', 'organization-access': { 'manage-membership': true } })

  /** Every operation on a team the caller may act on: a no-op update (200), a member added and removed (204), a delete of a team of the same flags (204). */
  const mayAll = async (t: Test, token: string, who: string, target = plain, flagsOfTarget: Record<string, unknown> = { visibility: 'organization' }) => {
    t.equal((await api.update(target, {}, token)).statusCode, 200, `${who}: update (changing nothing)`)
    t.equal((await api.addMembers(target, ['spare'], token)).statusCode, 204, `${who}: add a member`)
    t.equal((await api.removeMembers(target, ['spare'], token)).statusCode, 204, `${who}: remove a member`)
    const doomed = await team(flagsOfTarget)
    t.equal((await api.destroy(doomed, token)).statusCode, 204, `${who}: delete`)
    const created = await api.create('acme', { name: `made-by-${who.replace(/\W+/g, '-')}` }, token)
    t.equal(created.statusCode, 201, `${who}: create`)
    t.same(created.json().data.attributes.permissions, { 'can-update-membership': true, 'can-destroy': true }, `${who}: its permissions on the team it made`)
  }
  const mayNothing = async (t: Test, token: string, who: string, target = plain) => {
    hidden(t, await api.update(target, { visibility: 'organization' }, token), 'update', who)
    hidden(t, await api.destroy(target, token), 'destroy', who)
    hidden(t, await api.addMembers(target, ['spare'], token), 'add', who)
    hidden(t, await api.removeMembers(target, ['writer'], token), 'remove', who)
  }

  t.test('owners: a member of the owners team, the owners team’s token, the organization token', async (t) => {
    for (const [who, token] of [['owner user', CALLERS.owner], ['owners team token', CALLERS.ownersTeam], ['organization token', org]] as const) {
      await mayAll(t, token, who)
      await mayAll(t, token, `${who} (a secret team)`, secret, {})
      await mayAll(t, token, `${who} (a manage-workspaces team)`, workspaceManagers, { 'organization-access': { 'manage-workspaces': true } })
      t.equal((await api.update(plain, { 'organization-access': { 'manage-policies': true } }, token)).statusCode, 200, `${who}: sets a flag`)
      t.equal((await api.update(plain, { 'organization-access': { 'manage-policies': false } }, token)).statusCode, 200, `${who}: and clears it`)
    }
  })

  t.test('manage-teams: the team’s token and its member', async (t) => {
    for (const [who, token] of [['manage-teams team token', CALLERS.leadsTeam], ['manage-teams member', CALLERS.lead]] as const) {
      await mayAll(t, token, who)
      await mayAll(t, token, `${who} (a secret team: it sees every team)`, secret, {})
      await mayAll(t, token, `${who} (a manage-teams team: it holds the flag)`, teamManagers, { 'organization-access': { 'manage-teams': true } })
      await mayAll(t, token, `${who} (a manage-membership team: manage-teams holds it)`, membershipManagers, { 'organization-access': { 'manage-membership': true } })
      t.same((await api.show(workspaceManagers, token)).json().data.attributes.permissions, { 'can-update-membership': false, 'can-destroy': false }, `${who}: permissions say what it may not`)
      const renamed = await api.update(plain, { name: `renamed-by-${who.replace(/\W+/g, '-')}`, visibility: 'secret' }, token)
      t.equal(renamed.statusCode, 200, `${who}: renames a team and changes its visibility`)
      t.equal((await api.update(plain, { visibility: 'organization' }, token)).statusCode, 200, `${who}: and back`)
    }
  })

  t.test('manage-membership: members of the teams it sees, nothing else', async (t) => {
    const token = CALLERS.hr
    t.equal((await api.addMembers(plain, ['spare'], token)).statusCode, 204, 'add a member')
    t.equal((await api.removeMembers(plain, ['spare'], token)).statusCode, 204, 'remove a member')
    t.equal((await api.addMembers('team-membership', ['spare'], token)).statusCode, 204, 'of its own secret team')
    t.equal((await api.removeMembers('team-membership', ['spare'], token)).statusCode, 204)
    t.same((await api.show(plain, token)).json().data.attributes.permissions, { 'can-update-membership': true, 'can-destroy': false })
    hidden(t, await api.update(plain, { visibility: 'organization' }, token), 'update', 'manage-membership')
    hidden(t, await api.destroy(plain, token), 'destroy', 'manage-membership')
    hidden(t, await api.create('acme', { name: 'nope' }, token), 'create', 'manage-membership')
    hidden(t, await api.addMembers(secret, ['spare'], token), 'add', 'manage-membership, a secret team it does not see')
    hidden(t, await api.addMembers(teamManagers, ['spare'], token), 'add', 'manage-membership, a manage-teams team (a flag it does not hold)')
    hidden(t, await api.addMembers(workspaceManagers, ['spare'], token), 'add', 'manage-membership, a manage-workspaces team')
  })

  t.test('a plain member, a team token without flags, a user in no team, another organization’s owner: nothing', async (t) => {
    for (const [who, token] of [['plain member', CALLERS.writer], ['plain team token', CALLERS.nonOwnerTeam], ['manage-workspaces member', CALLERS.manager],
      ['user in no team', CALLERS.noTeam], ['another organization’s owner', CALLERS.globexOwner]] as const) {
      await mayNothing(t, token, who)
      await mayNothing(t, token, `${who}, a secret team`, secret)
      hidden(t, await api.create('acme', { name: 'nope' }, token), 'create', who)
    }
    t.same((await api.show(plain, CALLERS.writer)).json().data.attributes.permissions, { 'can-update-membership': false, 'can-destroy': false }, 'a member sees it may do nothing')
  })

  t.test('(a) nobody hands out more than they hold', async (t) => {
    for (const [who, token] of [['manage-teams team token', CALLERS.leadsTeam], ['manage-teams member', CALLERS.lead]] as const) {
      await mayNothing(t, token, `${who}, a manage-workspaces team`, workspaceManagers)
      const readers = await team({ 'organization-access': { 'read-workspaces': true } })
      await mayNothing(t, token, `${who}, a read-workspaces team`, readers)
      await mayNothing(t, token, `${who}, the owners team`, 'team-owners')
    }
    // the manage-workspaces member holds manage-workspaces; given manage-teams too, it may manage such a team
    await app.db.updateTable('teams').set({ manage_teams: true }).where('id', '=', 'team-managers').execute()
    await mayAll(t, CALLERS.manager, 'manage-teams and manage-workspaces member (a manage-workspaces team)', workspaceManagers, { 'organization-access': { 'manage-workspaces': true } })
    const readers = await team({ 'organization-access': { 'read-workspaces': true } })
    t.equal((await api.addMembers(readers, ['spare'], CALLERS.manager)).statusCode, 204, 'manage-workspaces holds read-workspaces')
    await app.db.updateTable('teams').set({ manage_teams: false }).where('id', '=', 'team-managers').execute()
  })

  t.test('(b) the owners team: only owners manage it; never deleted, renamed or given flags; keeps a member', async (t) => {
    t.equal((await api.destroy('team-owners', CALLERS.owner)).statusCode, 422)
    t.equal((await api.update('team-owners', { name: 'chiefs' }, CALLERS.ownersTeam)).statusCode, 422)
    t.equal((await api.update('team-owners', { 'organization-access': { 'manage-teams': true } }, CALLERS.ownersTeam)).statusCode, 422)
    t.equal((await api.removeMembers('team-owners', ['owner'], CALLERS.ownersTeam)).statusCode, 422)
    t.same((await api.show('team-owners', CALLERS.owner)).json().data.attributes.permissions, { 'can-update-membership': true, 'can-destroy': false })
    // owners acting through the owners team, not the organization token (rule a: it may not manage organization tokens, which the owners team may)
    hidden(t, await api.addMembers('team-owners', ['spare'], org), 'add', 'the organization token on the owners team')
    hidden(t, await api.update('team-owners', { visibility: 'organization' }, org), 'update', 'the organization token on the owners team')
    t.same((await api.show('team-owners', org)).json().data.attributes.permissions, { 'can-update-membership': false, 'can-destroy': false })
  })

  t.test('(c) only owners set or change organization-access flags', async (t) => {
    for (const [who, token] of [['manage-teams team token', CALLERS.leadsTeam], ['manage-teams member', CALLERS.lead]] as const) {
      hidden(t, await api.update(plain, { 'organization-access': { 'manage-policies': true } }, token), 'update', `${who}, a flag set`)
      hidden(t, await api.update(teamManagers, { 'organization-access': { 'manage-teams': false } }, token), 'update', `${who}, a flag cleared`)
      t.equal((await api.update(teamManagers, { 'organization-access': { 'manage-teams': true, 'manage-policies': false } }, token)).statusCode, 200, `${who}: repeating current values is fine`)
      hidden(t, await api.create('acme', { name: 'escalated', 'organization-access': { 'manage-modules': true } }, token), 'create', `${who}, a team with a flag`)
      t.equal((await api.create('acme', { name: `flagless-${who.replace(/\W+/g, '-')}`, 'organization-access': { 'manage-modules': false } }, token)).statusCode, 201, `${who}: a team with every flag false`)
    }
    const flagsOf = async (id: string) => (await api.show(id, org)).json().data.attributes['organization-access']
    t.equal((await flagsOf(plain))['manage-policies'], false, 'nothing was changed')
    t.equal((await flagsOf(teamManagers))['manage-teams'], true)
  })

  t.test('seed-managed teams: 422 to everyone who may manage them, 404 to the rest', async (t) => {
    t.equal((await api.update('team-green', { visibility: 'secret' }, CALLERS.lead)).statusCode, 422)
    t.equal((await api.destroy('team-green', CALLERS.leadsTeam)).statusCode, 422)
    hidden(t, await api.update('team-green', { visibility: 'secret' }, CALLERS.writer), 'update', 'a plain member, a seed team')
  })
})
