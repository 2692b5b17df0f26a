import t from 'tap'
import { applySeedDocument } from '../../src/directory/seed.js'
import { bearer, build, ENGINE } from '../helper.js'

/**
 * Taking access away counts from the very next request, for every source a grant can come from
 * (DESIGN §10.2, §11.3; issue 47): the owners team, an organization-access flag, a team-access
 * row, a team-project row, and the membership all of them pass through. Each grant is read warm
 * first — the workspace over HTTP and the host's check, several times — then taken away, and the
 * very next read of each finds nothing.
 */
const OWNER = 'source-owner-token'
const SUBJECT = 'source-subject-token'
const seedOf = (subjectIsOwner: boolean) => ({
  users: [{ id: 'user-src-owner', username: 'owner', tokens: [OWNER] }, { id: 'user-src-subject', username: 'subject', tokens: [SUBJECT] }],
  organizations: [{
    id: 'org-src',
    name: 'sources',
    teams: [{ id: 'team-src-owners', name: 'owners', owners: true, members: subjectIsOwner ? ['owner', 'subject'] : ['owner'] }],
    projects: [{ id: 'prj-src-app', name: 'app' }],
    workspaces: [{ id: 'ws-src-app', name: 'app', project: 'app' }]
  }]
})
const JSONAPI = { 'content-type': 'application/vnd.api+json' }

t.test(`taking access away counts from the very next request, whatever granted it (${ENGINE})`, async (t) => {
  const app = await build(t, { seed: seedOf(false) })
  const send = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, token: string, payload?: unknown) =>
    await app.inject({ method, url: `/api/v2${url}`, headers: { ...bearer(token), ...(payload === undefined ? {} : JSONAPI) }, ...(payload === undefined ? {} : { payload: payload as object }) })
  const subjectReads = async () => {
    const http = (await send('GET', '/workspaces/ws-src-app', SUBJECT)).statusCode
    const host = (await app.teamAccess.effectiveAccess({ caller: { kind: 'user', userId: 'user-src-subject' }, workspaceId: 'ws-src-app' })).access
    return { http, host }
  }
  /** The subject reads the workspace, warm; then `take` runs, and its very next reads find nothing. */
  const grantedThenTaken = async (source: string, take: () => Promise<void>) => {
    for (let i = 0; i < 3; i++) t.match(await subjectReads(), { http: 200, host: /./ }, `${source}: the subject reads the workspace (${i + 1})`)
    await take()
    t.same(await subjectReads(), { http: 404, host: null }, `${source}, taken away: the very next request finds nothing`)
  }

  const team = await send('POST', '/organizations/sources/teams', OWNER, { data: { type: 'teams', attributes: { name: 'subjects', visibility: 'organization' } } })
  t.equal(team.statusCode, 201, team.body)
  const teamId = team.json().data.id as string
  const joined = await send('POST', `/teams/${teamId}/relationships/users`, OWNER, { data: [{ type: 'users', id: 'subject' }] })
  t.equal(joined.statusCode, 204, joined.body)
  t.same(await subjectReads(), { http: 404, host: null }, 'a member of a team with no grant reads nothing')

  // a team-access row
  const row = await send('POST', '/team-workspaces', OWNER, { data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { team: { data: { id: teamId, type: 'teams' } }, workspace: { data: { id: 'ws-src-app', type: 'workspaces' } } } } })
  t.equal(row.statusCode, 200, row.body)
  await grantedThenTaken('a team-access row', async () => {
    t.equal((await send('DELETE', `/team-workspaces/${row.json().data.id as string}`, OWNER)).statusCode, 204)
  })

  // a team-project row on the workspace's project
  const projectRow = await send('POST', '/team-projects', OWNER, { data: { type: 'team-projects', attributes: { access: 'read' }, relationships: { team: { data: { id: teamId, type: 'teams' } }, project: { data: { id: 'prj-src-app', type: 'projects' } } } } })
  t.equal(projectRow.statusCode, 201, projectRow.body)
  await grantedThenTaken('a team-project row', async () => {
    t.equal((await send('DELETE', `/team-projects/${projectRow.json().data.id as string}`, OWNER)).statusCode, 204)
  })

  // an organization-access flag of the team
  const flag = (value: boolean) => ({ data: { type: 'teams', attributes: { 'organization-access': { 'read-workspaces': value } } } })
  t.equal((await send('PATCH', `/teams/${teamId}`, OWNER, flag(true))).statusCode, 200)
  await grantedThenTaken('organization-access read-workspaces', async () => {
    t.equal((await send('PATCH', `/teams/${teamId}`, OWNER, flag(false))).statusCode, 200)
  })

  // the membership every team grant passes through
  t.equal((await send('PATCH', `/teams/${teamId}`, OWNER, flag(true))).statusCode, 200)
  await grantedThenTaken('a membership of a team with a grant', async () => {
    t.equal((await send('DELETE', `/teams/${teamId}/relationships/users`, OWNER, { data: [{ type: 'users', id: 'subject' }] })).statusCode, 204)
  })

  // the owners team, as its seed declares it
  await applySeedDocument(app.db, seedOf(true))
  await grantedThenTaken('the owners team', async () => { await applySeedDocument(app.db, seedOf(false)) })
})
