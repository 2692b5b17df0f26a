import t, { type Test } from 'tap'
import { validateSeed } from '../../src/directory/seed.js'
import type { MirrorSnapshot } from '../../src/directory/mirror-snapshot.js'
import { readOrganization } from '../../src/mirror/read.js'
import { seedOutNotes, snapshotToSeed } from '../../src/mirror/seed-out.js'
import { bearer, build, ENGINE } from '../helper.js'
import { ID } from './hcp-answers.js'
import { standIn } from './hcp-stand-in.js'

/**
 * `--seed-out` (DESIGN §13.1): an organization read from HCP Terraform's recorded answers as a
 * seed document (DESIGN §6) — exactly; valid (validateSeed); applied to a fresh database; HCP
 * Terraform's ids kept where the seed's id shapes take them, and what a seed cannot hold said in
 * the notes: an invited person, a member in no team, an id or email of another shape, a default
 * project of another name.
 */
const TOKEN = 'hcp-seed-out-token.atlasv1.secret'

async function read (t: Test): Promise<MirrorSnapshot> {
  const hcp = await standIn({ token: TOKEN })
  t.teardown(hcp.close)
  return await readOrganization({ from: hcp.from, organization: 'acme', token: TOKEN, rate: 1000 })
}

t.test(`an organization read as a seed document: exactly, valid, applied (${ENGINE})`, async (t) => {
  const snapshot = await read(t)
  const document = snapshotToSeed(snapshot)
  t.same(document, {
    users: [
      { id: ID.carol, username: 'carol', email: 'carol@acme.example' },
      { id: ID.bob, username: 'bob', email: 'bob@acme.example' },
      { id: ID.alice, username: 'alice', email: 'alice@acme.example' }
    ],
    organizations: [{
      id: ID.org,
      name: 'acme',
      teams: [
        { id: ID.owners, name: 'owners', visibility: 'organization', owners: true, members: ['alice'] },
        { id: ID.platform, name: 'platform', visibility: 'organization', 'organization-access': { 'read-workspaces': true, 'manage-teams': true }, members: ['bob'] },
        { id: ID.red, name: 'red', visibility: 'secret', members: ['bob', 'carol'] }
      ],
      // the default project is the fresh organization's own, taken over by its name
      projects: [{ id: ID.payments, name: 'payments', description: 'the money' }],
      workspaces: [{ id: ID.network, name: 'network' }, { id: ID.legacy, name: 'legacy' }, { id: ID.billing, name: 'billing', project: 'payments' }],
      'team-access': [
        { id: 'tws-19iugLwoNgtWZbKP', team: 'platform', workspace: 'network', access: 'write' },
        { id: 'tws-5KpT9cXtdvDBBJ9b', team: 'red', workspace: 'billing', access: 'custom', runs: 'plan', variables: 'read', 'state-versions': 'read-outputs', 'sentinel-mocks': 'none', 'workspace-locking': false, 'run-tasks': true, 'policy-overrides': true },
        { id: 'tws-Wd3y7Qeg8xPYGpKm', team: 'platform', workspace: 'billing', access: 'custom', runs: 'apply', variables: 'read', 'state-versions': 'read', 'sentinel-mocks': 'none', 'workspace-locking': true, 'run-tasks': false }
      ],
      'project-access': [
        {
          id: 'tprj-2pmCrGhwFcVwXbXo',
          team: 'red',
          project: 'payments',
          access: 'custom',
          'project-access': { settings: 'update', teams: 'read', 'variable-sets': 'none' },
          'workspace-access': { runs: 'plan', variables: 'read', 'state-versions': 'read', 'sentinel-mocks': 'read', create: true, locking: false, delete: false, move: false, 'run-tasks': false }
        },
        { id: 'tprj-Hq8ZsgX3bPUJwVwe', team: 'platform', project: 'payments', access: 'maintain' }
      ]
    }]
  })
  t.doesNotThrow(() => validateSeed(document), 'a valid seed document')
  t.same(seedOutNotes(snapshot), ['1 invited person left out: a seed holds people with usernames (invite them again where you move to)'])

  // applied to a fresh database, it is the organization read: HCP Terraform's ids, the grants
  const app = await build(t, { seed: { ...document, users: document.users!.map((u) => u.username === 'alice' ? { ...u, tokens: ['alice-seed-out-token'] } : u) } })
  const res = await app.inject({ url: `/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=${ID.billing}`, headers: bearer('alice-seed-out-token') })
  t.equal(res.statusCode, 200)
  t.same(res.json().data.map((r: any) => [r.id, r.attributes.access, r.relationships.team.data.id]).sort(), [['tws-5KpT9cXtdvDBBJ9b', 'custom', ID.red], ['tws-Wd3y7Qeg8xPYGpKm', 'custom', ID.platform]])
  const project = await app.inject({ url: `/api/v2/projects/${ID.payments}`, headers: bearer('alice-seed-out-token') })
  t.equal(project.json().data.attributes.name, 'payments')
})

t.test('what a seed cannot hold: left out, and said', async (t) => {
  const snapshot = await read(t)
  const odd: MirrorSnapshot = {
    ...snapshot,
    users: [...snapshot.users, { id: 'user-Loner00000000001', username: 'loner', email: 'not an address' }],
    memberships: [...snapshot.memberships, { id: 'ou-Loner0000000000001', userId: 'user-Loner00000000001', status: 'active', teamIds: [] }],
    projects: snapshot.projects.map((p) => p.isDefault ? { ...p, name: 'Main' } : p),
    workspaces: snapshot.workspaces.map((w) => w.name === 'legacy' ? { ...w, id: 'ws-with.a.dot' } : w),
    teamWorkspaces: snapshot.teamWorkspaces.map((r) => ({ ...r, id: `${r.id}:x` }))
  }
  const document = snapshotToSeed(odd)
  t.doesNotThrow(() => validateSeed(document), 'still a valid seed document')
  const org = document.organizations![0]!
  t.same(document.users!.find((u) => u.username === 'loner'), { id: 'user-Loner00000000001', username: 'loner' }, 'an email of no address\'s shape left out')
  t.same(org.projects, [{ name: 'Main' }, { id: ID.payments, name: 'payments', description: 'the money' }], 'a default project of another name, declared by its name')
  t.same(org.workspaces!.map((w) => [w.id, w.name, w.project]), [[ID.network, 'network', 'Main'], [undefined, 'legacy', 'Main'], [ID.billing, 'billing', 'payments']])
  t.ok(org['team-access']!.every((entry) => entry.id === undefined), 'ids of another shape left out')
  t.same(seedOutNotes(odd), [
    '1 invited person left out: a seed holds people with usernames (invite them again where you move to)',
    '1 member in no team: a seed\'s user, but no member of the organization (a seed makes members by teams)',
    '1 email of no address\'s shape left out',
    'the default project "Main" is declared as a project of its own: a seed\'s organization keeps its own "Default Project" as the default (where a workspace with no project goes)',
    '1 id of HCP Terraform not of the seed\'s shape ws-… (letters, digits, - and _, at most 64) left out: generated where the seed is applied',
    '3 ids of HCP Terraform not of the seed\'s shape tws-… (letters, digits, - and _, at most 64) left out: generated where the seed is applied'
  ])
})
