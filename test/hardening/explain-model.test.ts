import t from 'tap'
import fc from 'fast-check'
import { build, ENGINE } from '../helper.js'
import { validateResponse } from '../openapi.js'
import { applySeed } from '../../src/directory/seed.js'
import type { Permissions } from '../../src/access/permissions.js'
import { answerOf, mayExplainTeam, mayExplainWorkspace, type AccessRow, type Answer, type Grant, type RowRecord, teamAsGrant, type TeamRecord } from '../model/rules.js'
import { recordFigure } from './figures.js'

/**
 * The answers of DESIGN §10.2 against the reference model (test/model/rules.ts) on random worlds:
 * organizations, teams with organization access, memberships, workspaces, team-access rows of
 * every level with random custom permissions, and callers of every token kind. Random questions —
 * a workspace's teams, one user's access there, the workspaces a team reaches (walked page by page
 * at a random size) — interleaved with rows added, changed and removed through the API; every
 * status, level, permission and grant source must be the model's.
 */
const RUNS = Number(process.env.EXPLAIN_MODEL_RUNS ?? process.env.MODEL_RUNS ?? 25)
const STEPS = 24
const LEVELS = ['read', 'plan', 'write', 'admin', 'custom'] as const
type Level = typeof LEVELS[number]
const ORGS = 2
const USERS = 4

const permissionsArb: fc.Arbitrary<Permissions> = fc.record({
  runs: fc.constantFrom('read' as const, 'plan' as const, 'apply' as const),
  variables: fc.constantFrom('none' as const, 'read' as const, 'write' as const),
  'state-versions': fc.constantFrom('none' as const, 'read-outputs' as const, 'read' as const, 'write' as const),
  'sentinel-mocks': fc.constantFrom('none' as const, 'read' as const),
  'workspace-locking': fc.boolean(),
  'run-tasks': fc.boolean(),
  'policy-overrides': fc.boolean()
})

const worldArb = fc.record({
  teams: fc.array(fc.record({
    org: fc.integer({ min: 0, max: ORGS - 1 }),
    visibility: fc.constantFrom('secret' as const, 'organization' as const),
    manage: fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
    read: fc.integer({ min: 0, max: 9 }).map((n) => n < 3)
  }), { minLength: 2, maxLength: 6 }),
  members: fc.array(fc.tuple(fc.integer({ min: 0, max: USERS - 1 }), fc.nat()), { maxLength: 10 }),
  workspaces: fc.array(fc.integer({ min: 0, max: ORGS - 1 }), { minLength: 1, maxLength: 5 }),
  rows: fc.array(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom(...LEVELS), permissionsArb), { maxLength: 12 })
})

const commandArb = fc.record({
  op: fc.constantFrom('workspace', 'workspace', 'user', 'team', 'team', 'add', 'update', 'remove'),
  principal: fc.nat(),
  a: fc.nat(),
  b: fc.nat(),
  access: fc.constantFrom(...LEVELS),
  permissions: permissionsArb,
  size: fc.integer({ min: 1, max: 4 })
})

/** An answer as compared: level, permissions and the grants, sorted; one per team or user. */
type Compared = { who: string, access: string, permissions: Permissions, grants: string[] }
const grantKey = (g: { kind: string, team: string, access: string, 'team-workspace'?: string }) => `${g.kind} ${g.team} ${g.access}${g['team-workspace'] === undefined ? '' : ` ${g['team-workspace']}`}`
const fromModel = (who: string, answer: Answer): Compared => ({
  who,
  access: answer.access,
  permissions: answer.permissions,
  grants: answer.sources.map((s) => grantKey({ kind: s.kind, team: s.teamId, access: s.access, ...(s.rowId === undefined ? {} : { 'team-workspace': s.rowId }) })).sort()
})
interface Resource { id: string, attributes: Permissions & { access: string, grants: Array<{ kind: string, team: string, access: string, 'team-workspace'?: string }> } }
const fromService = (resource: Resource): Compared => {
  const { access, grants, ...permissions } = resource.attributes
  return { who: resource.id, access, permissions, grants: grants.map(grantKey).sort() }
}
const byWho = (a: Compared, b: Compared) => (a.who < b.who ? -1 : a.who > b.who ? 1 : 0)

t.test(`the answers of DESIGN §10.2 agree with the reference model on ${ENGINE}`, async (t) => {
  const app = await build(t)
  let run = 0
  let questions = 0
  let writes = 0
  const disagreements: string[] = []

  await fc.assert(fc.asyncProperty(worldArb, fc.array(commandArb, { minLength: STEPS, maxLength: STEPS }), async (raw, commands) => {
    const r = `e${run++}`
    const teams: Array<TeamRecord & { org: number, visibility: 'secret' | 'organization' }> = [
      ...Array.from({ length: ORGS }, (_, org) => ({ id: `team-${r}-owners${org}`, org, organizationId: `org-${r}-o${org}`, isOwners: true, visibility: 'secret' as const, manageWorkspaces: false, readWorkspaces: false })),
      ...raw.teams.map((x, i) => ({ id: `team-${r}-t${i}`, org: x.org, organizationId: `org-${r}-o${x.org}`, isOwners: false, visibility: x.visibility, manageWorkspaces: x.manage, readWorkspaces: x.read }))
    ]
    const members = raw.members.map(([u, ti]) => [u, ti % teams.length] as [number, number])
      .filter(([u, ti], i, all) => all.findIndex(([u2, t2]) => u2 === u && t2 === ti) === i)
    const workspaces = raw.workspaces.map((org, i) => ({ id: `ws-${r}-w${i}`, org, organizationId: `org-${r}-o${org}` }))
    let rows: RowRecord[] = []
    raw.rows.forEach(([ti, wi, access, permissions], i) => {
      const team = teams[ti % teams.length]!
      const ws = workspaces[wi % workspaces.length]!
      if (team.org !== ws.org || rows.some((x) => x.teamId === team.id && x.workspaceId === ws.id)) return
      rows.push({ id: `tws-${r}-r${i}`, teamId: team.id, workspaceId: ws.id, access, permissions: access === 'custom' ? permissions : IMPLIED[access] })
    })

    await applySeed(app.db, {
      users: Array.from({ length: USERS }, (_, u) => ({ id: `user-${r}-u${u}`, username: `${r}-u${u}`, tokens: [`${r}-user-token-${u}`] })),
      organizations: Array.from({ length: ORGS }, (_, org) => ({
        id: `org-${r}-o${org}`,
        name: `${r}-o${org}`,
        tokens: [`${r}-org-token-${org}`],
        teams: teams.filter((x) => x.org === org).map((x) => ({
          id: x.id,
          name: x.id,
          owners: x.isOwners,
          visibility: x.visibility,
          'organization-access': { 'manage-workspaces': x.manageWorkspaces, 'read-workspaces': x.readWorkspaces },
          members: members.filter(([, ti]) => teams[ti] === x).map(([u]) => `${r}-u${u}`),
          tokens: [`${r}-team-token-${x.id}`]
        })),
        workspaces: workspaces.filter((w) => w.org === org).map((w) => ({ id: w.id, name: w.id })),
        'team-access': rows.filter((x) => teams.find((tm) => tm.id === x.teamId)!.org === org)
          .map((x) => ({ id: x.id, team: x.teamId, workspace: x.workspaceId, access: x.access, ...(x.access === 'custom' ? x.permissions : {}) }))
      }))
    })

    const teamsOfUser = (u: number) => members.filter(([mu]) => mu === u).map(([, ti]) => teams[ti]!)
    const principals: Array<{ name: string, token: string, grants: Grant[] }> = [
      ...Array.from({ length: ORGS }, (_, org) => ({ name: `org token ${org}`, token: `${r}-org-token-${org}`, grants: [{ organizationId: `org-${r}-o${org}`, teamId: null, isOwner: true, manageWorkspaces: false, readWorkspaces: false }] })),
      ...teams.map((x) => ({ name: `team token ${x.id}`, token: `${r}-team-token-${x.id}`, grants: [teamAsGrant(x)] })),
      ...Array.from({ length: USERS }, (_, u) => ({ name: `user ${u}`, token: `${r}-user-token-${u}`, grants: teamsOfUser(u).map(teamAsGrant) }))
    ]
    const accessRows = (wsId: string): AccessRow[] => rows.filter((x) => x.workspaceId === wsId).map((x) => ({ teamId: x.teamId, access: x.access, visibility: 'secret' }))
    const owner = (org: number) => ({ authorization: `Bearer ${r}-org-token-${org}`, 'content-type': 'application/vnd.api+json' })

    for (const c of commands) {
      const p = principals[c.principal % principals.length]!
      const headers = { authorization: `Bearer ${p.token}` }
      const ws = c.a % (workspaces.length + 1) === workspaces.length ? undefined : workspaces[c.a % (workspaces.length + 1)]!
      const wsId = ws?.id ?? `ws-${r}-missing`
      let expected: { status: number, answers?: Compared[], total?: number }
      let actual: { status: number, answers?: Compared[], total?: number }
      let what: string
      switch (c.op) {
        case 'workspace':
        case 'user': {
          const u = c.b % (USERS + 1)
          const username = u === USERS ? `${r}-ghost` : `${r}-u${u}`
          what = `${p.name} asks about ${c.op === 'user' ? `${username} on ` : ''}${wsId}`
          const res = await app.inject({ url: `/api/v2/workspaces/${wsId}/effective-access${c.op === 'user' ? `?filter%5Buser%5D=${username}` : ''}`, headers })
          questions++
          if (ws === undefined || !mayExplainWorkspace(p.grants, ws.organizationId, accessRows(ws.id))) expected = { status: 404 }
          else if (c.op === 'workspace') {
            expected = {
              status: 200,
              answers: teams.map((team) => [team, answerOf([team], ws, rows)] as const)
                .filter((x): x is readonly [typeof x[0], Answer] => x[1] !== null)
                .map(([team, answer]) => fromModel(`${team.id}:${ws.id}`, answer)).sort(byWho)
            }
          } else if (u === USERS || !teamsOfUser(u).some((team) => team.organizationId === ws.organizationId)) {
            // no member of the organization by that name: a mistake to say (422), an unknown user and an outsider alike
            expected = { status: 422 }
          } else {
            const answer = answerOf(teamsOfUser(u), ws, rows)
            expected = { status: 200, answers: answer === null ? [] : [fromModel(`user-${username}:${ws.id}`, answer)] }
          }
          actual = { status: res.statusCode }
          if (res.statusCode === 200) {
            const { valid, errors } = validateResponse('workspaceEffectiveAccess', res.json())
            if (!valid) disagreements.push(`${r}: ${what}: the answer does not validate: ${JSON.stringify(errors)}`)
            actual.answers = (res.json().data as Resource[]).map(fromService).sort(byWho)
          }
          break
        }
        case 'team': {
          const team = c.b % (teams.length + 1) === teams.length ? undefined : teams[c.b % (teams.length + 1)]!
          const teamId = team?.id ?? `team-${r}-missing`
          what = `${p.name} asks which workspaces ${teamId} reaches, ${c.size} a page`
          expected = team === undefined || !mayExplainTeam(p.grants, team)
            ? { status: 404 }
            : (() => {
                const answers = workspaces.map((w) => [w, answerOf([team], w, rows)] as const)
                  .filter((x): x is readonly [typeof x[0], Answer] => x[1] !== null)
                  .map(([w, answer]) => fromModel(`${team.id}:${w.id}`, answer)).sort(byWho)
                return { status: 200, answers, total: answers.length }
              })()
          // every page, in turn, until the last
          const seen: Resource[] = []
          let page = 1
          let status = 0
          let total: number | undefined
          for (;;) {
            const res = await app.inject({ url: `/api/v2/teams/${teamId}/effective-access?page%5Bsize%5D=${c.size}&page%5Bnumber%5D=${page}`, headers })
            questions++
            status = res.statusCode
            if (status !== 200) break
            const { valid, errors } = validateResponse('teamEffectiveAccess', res.json())
            if (!valid) disagreements.push(`${r}: ${what}: page ${page} does not validate: ${JSON.stringify(errors)}`)
            seen.push(...res.json().data as Resource[])
            total = res.json().meta.pagination['total-count'] as number
            if (res.json().meta.pagination['next-page'] === null || page > 20) break
            page++
          }
          actual = status === 200 ? { status, answers: seen.map(fromService).sort(byWho), total } : { status }
          break
        }
        default: {
          // the world changes through the API, as its owners would change it
          const org = ws?.org ?? 0
          writes++
          if (c.op === 'add' && ws !== undefined) {
            const team = teams.filter((x) => x.org === ws.org)[c.b % teams.filter((x) => x.org === ws.org).length]!
            const attributes = c.access === 'custom' ? { access: c.access, ...c.permissions } : { access: c.access }
            const res = await app.inject({
              method: 'POST',
              url: '/api/v2/team-workspaces',
              headers: owner(org),
              payload: JSON.stringify({ data: { type: 'team-workspaces', attributes, relationships: { team: { data: { type: 'teams', id: team.id } }, workspace: { data: { type: 'workspaces', id: ws.id } } } } })
            })
            const exists = rows.some((x) => x.teamId === team.id && x.workspaceId === ws.id)
            if (res.statusCode !== (exists ? 422 : 200)) disagreements.push(`${r}: add ${team.id} on ${ws.id}: ${res.statusCode}`)
            if (res.statusCode === 200) rows.push({ id: res.json().data.id, teamId: team.id, workspaceId: ws.id, access: c.access, permissions: c.access === 'custom' ? c.permissions : IMPLIED[c.access] })
          } else if (c.op === 'update' && rows.length > 0) {
            const row = rows[c.b % rows.length]!
            const attributes = c.access === 'custom' ? { access: c.access, ...c.permissions } : { access: c.access }
            const res = await app.inject({ method: 'PATCH', url: `/api/v2/team-workspaces/${row.id}`, headers: owner(teams.find((x) => x.id === row.teamId)!.org), payload: JSON.stringify({ data: { attributes } }) })
            if (res.statusCode !== 200) disagreements.push(`${r}: update ${row.id}: ${res.statusCode}`)
            row.access = c.access
            row.permissions = c.access === 'custom' ? c.permissions : IMPLIED[c.access]
          } else if (c.op === 'remove' && rows.length > 0) {
            const row = rows[c.b % rows.length]!
            const res = await app.inject({ method: 'DELETE', url: `/api/v2/team-workspaces/${row.id}`, headers: owner(teams.find((x) => x.id === row.teamId)!.org) })
            if (res.statusCode !== 204) disagreements.push(`${r}: remove ${row.id}: ${res.statusCode}`)
            rows = rows.filter((x) => x !== row)
          }
          continue
        }
      }
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        disagreements.push(`${r}: ${what}: model ${JSON.stringify(expected)}, service ${JSON.stringify(actual)}`)
        return false
      }
    }
    return disagreements.length === 0
  }), { numRuns: RUNS, endOnFailure: true }).catch((err: Error) => { disagreements.push(err.message.split('\n').slice(0, 3).join(' ')) })

  t.same(disagreements, [], `${questions} questions and ${writes} writes over ${run} worlds`)
  await recordFigure(`the answers of §10.2 against the model (${ENGINE})`, `${questions} questions and ${writes} writes over ${run} random worlds, ${disagreements.length} disagreements`, '0 disagreements')
})

/** The permissions a fixed level implies (DESIGN §4's table), written out for the model's rows. */
const IMPLIED: Record<Exclude<Level, 'custom'>, Permissions> = {
  read: { runs: 'read', variables: 'read', 'state-versions': 'read', 'sentinel-mocks': 'none', 'workspace-locking': false, 'run-tasks': false, 'policy-overrides': false },
  plan: { runs: 'plan', variables: 'read', 'state-versions': 'read', 'sentinel-mocks': 'none', 'workspace-locking': false, 'run-tasks': false, 'policy-overrides': false },
  write: { runs: 'apply', variables: 'write', 'state-versions': 'write', 'sentinel-mocks': 'read', 'workspace-locking': true, 'run-tasks': false, 'policy-overrides': false },
  admin: { runs: 'apply', variables: 'write', 'state-versions': 'write', 'sentinel-mocks': 'read', 'workspace-locking': true, 'run-tasks': true, 'policy-overrides': false }
}
