import t from 'tap'
import { tokenDigest } from '../../src/auth/token-digest.js'
import { directory, DirectoryError } from '../../src/directory/host-directory.js'
import { applySeedDocument } from '../../src/directory/seed.js'
import { ENGINE, freshDatabase } from '../helper.js'

/**
 * Edges of the one writer (src/directory/) that a review of it found: concurrent removals keep an
 * owner, an id no row can have is a missing one, and a secret a document moves to another subject
 * is moved — not removed, and so not revoked.
 */
const document = (ownerTokens: string[], userTokens: string[]) => ({
  users: [{ id: 'user-e-ann', username: 'ann', tokens: userTokens }, { id: 'user-e-ben', username: 'ben' }],
  organizations: [{
    id: 'org-e',
    name: 'edges',
    teams: [{ id: 'team-e-owners', name: 'owners', owners: true, members: ['ann', 'ben'], tokens: ownerTokens }],
    workspaces: [{ id: 'ws-e-prod', name: 'prod' }]
  }]
})

t.test(`the owners team keeps a member when its two members are removed at once (${ENGINE})`, async (t) => {
  const { db } = await freshDatabase(t)
  await applySeedDocument(db, document([], []))
  const dir = directory(db)
  for (const [what, removals] of [
    ['two users removed', () => [dir.removeUser('user-e-ann'), dir.removeUser('user-e-ben')]],
    ['a member removed and a user removed', () => [dir.removeMember({ teamId: 'team-e-owners', userId: 'user-e-ann' }), dir.removeUser('user-e-ben')]]
  ] as const) {
    await applySeedDocument(db, document([], []))
    const results = await Promise.allSettled(removals())
    const refused = results.filter((r) => r.status === 'rejected')
    t.equal(refused.length, 1, `${what}: one of the two is refused`)
    t.match((refused[0] as PromiseRejectedResult | undefined)?.reason, { code: 'invalid', message: /last member of the owners team/ }, `${what}: as the last owner`)
    const members = await db.selectFrom('team_memberships').select('user_id').where('team_id', '=', 'team-e-owners').execute()
    t.equal(members.length, 1, `${what}: the team keeps one member`)
  }
})

t.test(`an id no row can have is not found, before any statement (${ENGINE})`, async (t) => {
  const { db } = await freshDatabase(t)
  await applySeedDocument(db, document([], []))
  const dir = directory(db)
  for (const id of ['', 'team-\u0000', 'x'.repeat(300)]) {
    for (const [what, call] of [['changeTeam', () => dir.changeTeam(id, { name: 'x' })], ['removeTeam', () => dir.removeTeam(id)], ['removeToken', () => dir.removeToken(id)]] as const) {
      const err = await call().then(() => undefined, (e: unknown) => e)
      t.ok(err instanceof DirectoryError && err.code === 'not-found', `${what}(${JSON.stringify(id.slice(0, 12))}): not-found (${String(err)})`)
    }
  }
})

t.test(`a secret the document moves from a user to a team is moved, not revoked (${ENGINE})`, async (t) => {
  const { db } = await freshDatabase(t)
  await applySeedDocument(db, document([], ['edges-moving-secret']))
  const summary = await applySeedDocument(db, document(['edges-moving-secret'], []))
  t.same(summary.warnings.filter((w) => !w.startsWith('workspace ids')), [], 'no warning')
  const token = await db.selectFrom('tokens').select(['kind', 'team_id']).where('digest', '=', tokenDigest('edges-moving-secret')).executeTakeFirst()
  t.same(token, { kind: 'team', team_id: 'team-e-owners' }, 'the token is the team’s now')
  t.same(await db.selectFrom('revoked_tokens').selectAll().execute(), [], 'nothing revoked')
  const dropped = await applySeedDocument(db, document([], []))
  t.same(dropped.removed.tokens, ['team edges/owners'], 'dropped from the document: removed')
  t.equal((await db.selectFrom('revoked_tokens').selectAll().execute()).length, 1, 'and revoked for good')
})
