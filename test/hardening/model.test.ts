import t from 'tap'
import fc from 'fast-check'
import { build, ENGINE } from '../helper.js'
import { applySeed } from '../../src/directory/seed.js'
import { recordFigure } from './figures.js'

/**
 * Model-based authorization: random worlds (organizations, teams with visibility and
 * organization access, memberships, workspaces, rows, tokens of every kind) and random
 * sequences of the five operations by random callers. The reference model below is written
 * from DESIGN §3-§4 alone — it shares no code with the service — and predicts every status
 * and every listed set; the service must agree at every step.
 */
const RUNS = Number(process.env.MODEL_RUNS ?? 25)
const STEPS = 30
const LEVELS = ['read', 'plan', 'write', 'admin', 'custom'] as const
type Level = typeof LEVELS[number]

interface Team { id: string, org: number, owners: boolean, visibility: 'secret' | 'organization', manage: boolean, read: boolean }
interface Row { team: string, ws: string, access: Level }

const ORGS = 2
const USERS = 4
const worldArb = fc.record({
  teams: fc.array(fc.record({
    org: fc.integer({ min: 0, max: ORGS - 1 }),
    visibility: fc.constantFrom('secret' as const, 'organization' as const),
    // organization access now and then, not on most teams
    manage: fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
    read: fc.integer({ min: 0, max: 9 }).map((n) => n < 2)
  }), { minLength: 2, maxLength: 6 }),
  members: fc.array(fc.tuple(fc.integer({ min: 0, max: USERS - 1 }), fc.nat()), { maxLength: 10 }),
  workspaces: fc.array(fc.integer({ min: 0, max: ORGS - 1 }), { minLength: 1, maxLength: 4 }),
  rows: fc.array(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom(...LEVELS)), { maxLength: 10 })
})

const commandArb = fc.record({
  op: fc.constantFrom('list', 'show', 'add', 'update', 'remove', 'readWorkspace', 'readTeam', 'listTeams', 'listByTeam'),
  principal: fc.nat(),
  a: fc.nat(),
  b: fc.nat(),
  access: fc.constantFrom(...LEVELS),
  paged: fc.boolean()
})

t.test(`the service agrees with a reference model of DESIGN §3-§4 on ${ENGINE}`, async (t) => {
  const app = await build(t)
  let run = 0
  let steps = 0
  const disagreements: string[] = []

  await fc.assert(fc.asyncProperty(worldArb, fc.array(commandArb, { minLength: STEPS, maxLength: STEPS }), async (raw, commands) => {
    const r = `m${run++}`
    // the world, made concrete: organization 0 of each run has an owners team first
    const teams: Team[] = [
      ...Array.from({ length: ORGS }, (_, org) => ({ id: `team-${r}-owners${org}`, org, owners: true, visibility: 'secret' as const, manage: false, read: false })),
      ...raw.teams.map((x, i) => ({ id: `team-${r}-t${i}`, owners: false, ...x }))
    ]
    const members = raw.members.map(([u, ti]) => [u, ti % teams.length] as [number, number])
      .filter(([u, ti], i, all) => all.findIndex(([u2, t2]) => u2 === u && t2 === ti) === i)
    const workspaces = raw.workspaces.map((org, i) => ({ id: `ws-${r}-w${i}`, org }))
    const rows = new Map<string, Row>()
    raw.rows.forEach(([ti, wi, access], i) => {
      const team = teams[ti % teams.length]!
      const ws = workspaces[wi % workspaces.length]!
      if (team.org !== ws.org || [...rows.values()].some((x) => x.team === team.id && x.ws === ws.id)) return
      rows.set(`tws-${r}-r${i}`, { team: team.id, ws: ws.id, access })
    })

    const now = Date.now()
    await applySeed(app.db, {
      users: Array.from({ length: USERS }, (_, u) => ({
        id: `user-${r}-u${u}`,
        username: `${r}-u${u}`,
        tokens: [`${r}-user-token-${u}`, ...(u === 0 ? [{ token: `${r}-expired-token`, 'expires-at': new Date(now - 60_000).toISOString() }] : [])]
      })),
      organizations: Array.from({ length: ORGS }, (_, org) => ({
        id: `org-${r}-o${org}`,
        name: `${r}-o${org}`,
        tokens: [`${r}-org-token-${org}`],
        teams: teams.filter((x) => x.org === org).map((x) => ({
          id: x.id,
          name: x.id,
          owners: x.owners,
          visibility: x.visibility,
          'organization-access': { 'manage-workspaces': x.manage, 'read-workspaces': x.read },
          members: members.filter(([, ti]) => teams[ti] === x).map(([u]) => `${r}-u${u}`),
          tokens: [`${r}-team-token-${x.id}`]
        })),
        workspaces: workspaces.filter((w) => w.org === org).map((w) => ({ id: w.id, name: w.id })),
        'team-access': [...rows].filter(([, x]) => teams.find((tm) => tm.id === x.team)!.org === org)
          .map(([id, x]) => ({ id, team: x.team, workspace: x.ws, access: x.access, ...(x.access === 'custom' ? { runs: 'plan' as const } : {}) }))
      }))
    })

    // the callers: every token kind, an expired one, an unknown one, none
    type Grant = { org: number, team: string | null, owner: boolean, manage: boolean, read: boolean }
    const teamGrant = (x: Team): Grant => ({ org: x.org, team: x.id, owner: x.owners, manage: x.manage, read: x.read })
    const principals: Array<{ name: string, token: string | null, grants: Grant[] | null }> = [
      ...Array.from({ length: ORGS }, (_, org) => ({ name: `org token ${org}`, token: `${r}-org-token-${org}`, grants: [{ org, team: null, owner: true, manage: false, read: false }] })),
      ...teams.map((x) => ({ name: `team token ${x.id}`, token: `${r}-team-token-${x.id}`, grants: [teamGrant(x)] })),
      ...Array.from({ length: USERS }, (_, u) => ({ name: `user ${u}`, token: `${r}-user-token-${u}`, grants: members.filter(([mu]) => mu === u).map(([, ti]) => teamGrant(teams[ti]!)) })),
      { name: 'expired token', token: `${r}-expired-token`, grants: null },
      { name: 'unknown token', token: `${r}-no-such-token`, grants: null },
      { name: 'no token', token: null, grants: null }
    ]

    // the reference model (DESIGN §3)
    const orgOf = (wsId: string) => workspaces.find((w) => w.id === wsId)?.org
    const member = (g: Grant[], org: number) => g.some((x) => x.org === org)
    const admin = (g: Grant[], wsId: string) => {
      const org = orgOf(wsId)!
      if (g.some((x) => x.org === org && (x.owner || x.manage))) return true
      const mine = new Set(g.map((x) => x.team))
      return [...rows.values()].some((x) => x.ws === wsId && x.access === 'admin' && mine.has(x.team))
    }
    // DESIGN §7: a workspace is read with effective access ≥ read; a team by owners, or by members
    // when it is visible to the organization or their own
    const readsWorkspace = (g: Grant[], wsId: string) => {
      const org = orgOf(wsId)!
      if (g.some((x) => x.org === org && (x.owner || x.manage || x.read))) return true
      const mine = new Set(g.map((x) => x.team))
      return [...rows.values()].some((x) => x.ws === wsId && mine.has(x.team))
    }
    const readsTeam = (g: Grant[], team: Team) => member(g, team.org) &&
      (g.some((x) => x.org === team.org && x.owner) || team.visibility === 'organization' || g.some((x) => x.team === team.id))
    // DESIGN §3: a row is seen only by a reader of its workspace — every row by an admin, else the
    // rows of teams visible to the organization and of the caller's own teams
    const visible = (g: Grant[], row: Row) => {
      if (!readsWorkspace(g, row.ws)) return false
      const team = teams.find((x) => x.id === row.team)!
      return admin(g, row.ws) || team.visibility === 'organization' || g.some((x) => x.team === row.team)
    }

    for (const c of commands) {
      steps++
      const p = principals[c.principal % principals.length]!
      const headers: Record<string, string> = { 'content-type': 'application/vnd.api+json' }
      if (p.token !== null) headers.authorization = `Bearer ${p.token}`
      const ids = [...rows.keys()]
      const rowId = c.a % (ids.length + 1) === ids.length ? `tws-${r}-missing` : ids[c.a % (ids.length + 1)]!
      const wsId = c.a % (workspaces.length + 1) === workspaces.length ? `ws-${r}-missing` : workspaces[c.a % (workspaces.length + 1)]!.id
      const g = p.grants
      // lists are asked for whole or as one page of up to 100 (which holds every row of a world)
      const paged = c.paged ? '&page%5Bsize%5D=100' : ''
      let expected: { status: number, ids?: string[], access?: string }
      let res
      switch (c.op) {
        case 'list': {
          res = await app.inject({ url: `/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=${wsId}${paged}`, headers })
          expected = g === null
            ? { status: 401 }
            : orgOf(wsId) === undefined || !readsWorkspace(g, wsId)
              ? { status: 404 }
              : { status: 200, ids: [...rows].filter(([, x]) => x.ws === wsId && visible(g, x)).map(([id]) => id).sort() }
          break
        }
        case 'show': {
          res = await app.inject({ url: `/api/v2/team-workspaces/${rowId}`, headers })
          const row = rows.get(rowId)
          expected = g === null ? { status: 401 } : row === undefined || !visible(g, row) ? { status: 404 } : { status: 200, access: row.access }
          break
        }
        case 'add': {
          const team = teams[c.b % teams.length]!
          const body = { data: { type: 'team-workspaces', attributes: { access: c.access }, relationships: { team: { data: { type: 'teams', id: team.id } }, workspace: { data: { type: 'workspaces', id: wsId } } } } }
          res = await app.inject({ method: 'POST', url: '/api/v2/team-workspaces', headers, payload: JSON.stringify(body) })
          const org = orgOf(wsId)
          if (g === null) expected = { status: 401 }
          else if (org === undefined || !admin(g, wsId) || team.org !== org) expected = { status: 404 }
          else if ([...rows.values()].some((x) => x.team === team.id && x.ws === wsId)) expected = { status: 422 }
          else expected = { status: 200, access: c.access }
          if (res.statusCode === 200) rows.set(res.json().data.id, { team: team.id, ws: wsId, access: c.access })
          break
        }
        case 'update': {
          res = await app.inject({ method: 'PATCH', url: `/api/v2/team-workspaces/${rowId}`, headers, payload: JSON.stringify({ data: { attributes: { access: c.access } } }) })
          const row = rows.get(rowId)
          expected = g === null ? { status: 401 } : row === undefined || !admin(g, row.ws) ? { status: 404 } : { status: 200, access: c.access }
          if (expected.status === 200 && row !== undefined) row.access = c.access
          break
        }
        case 'remove': {
          res = await app.inject({ method: 'DELETE', url: `/api/v2/team-workspaces/${rowId}`, headers })
          const row = rows.get(rowId)
          expected = g === null ? { status: 401 } : row === undefined || !admin(g, row.ws) ? { status: 404 } : { status: 204 }
          if (expected.status === 204) rows.delete(rowId)
          break
        }
        case 'readWorkspace': {
          res = await app.inject({ url: `/api/v2/workspaces/${wsId}`, headers })
          expected = g === null ? { status: 401 } : orgOf(wsId) === undefined || !readsWorkspace(g, wsId) ? { status: 404 } : { status: 200 }
          break
        }
        case 'readTeam': {
          const team = c.b % (teams.length + 1) === teams.length ? undefined : teams[c.b % (teams.length + 1)]!
          res = await app.inject({ url: `/api/v2/teams/${team?.id ?? `team-${r}-missing`}`, headers })
          expected = g === null ? { status: 401 } : team === undefined || !readsTeam(g, team) ? { status: 404 } : { status: 200 }
          break
        }
        case 'listTeams': {
          const org = c.b % ORGS
          res = await app.inject({ url: `/api/v2/organizations/${r}-o${org}/teams?page%5Bsize%5D=100`, headers })
          expected = g === null
            ? { status: 401 }
            : !member(g, org) ? { status: 404 } : { status: 200, ids: teams.filter((x) => x.org === org && readsTeam(g, x)).map((x) => x.id).sort() }
          break
        }
        case 'listByTeam': {
          const team = teams[c.b % teams.length]!
          res = await app.inject({ url: `/api/v2/team-workspaces?filter%5Bteam%5D%5Bid%5D=${team.id}${paged}`, headers })
          // the team's rows on the workspaces the caller reads (and, on top, that it sees there)
          expected = g === null
            ? { status: 401 }
            : !readsTeam(g, team) ? { status: 404 } : { status: 200, ids: [...rows].filter(([, x]) => x.team === team.id && visible(g, x)).map(([id]) => id).sort() }
          break
        }
      }
      const actual: { status: number, ids?: string[], access?: string } = { status: res!.statusCode }
      if (expected.ids !== undefined && res!.statusCode === 200) {
        const ids: string[] = res!.json().data.map((x: { id: string }) => x.id).sort()
        // a page's count is the count of what the caller may see, never more
        const count = res!.json().meta?.pagination?.['total-count']
        actual.ids = count === undefined || count === ids.length ? ids : [...ids, `total-count ${String(count)}`]
      }
      if (expected.access !== undefined && res!.statusCode === 200) actual.access = res!.json().data.attributes.access
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        disagreements.push(`${r}: ${p.name} ${c.op} ${c.op === 'list' || c.op === 'add' ? wsId : rowId}: model ${JSON.stringify(expected)}, service ${JSON.stringify(actual)}`)
        return false
      }
    }

    // the host's check (DESIGN §3's effective access) after the run, for every caller on every
    // workspace (and one that does not exist), one at a time and all at once
    const RANK: Record<Level, number> = { custom: 0, read: 1, plan: 2, write: 3, admin: 4 }
    const modelAccess = (g: Grant[], wsId: string): Level | null => {
      const org = orgOf(wsId)
      if (org === undefined) return null
      const levels: Level[] = g.filter((x) => x.org === org).flatMap((x): Level[] => x.owner || x.manage ? ['admin'] : x.read ? ['read'] : [])
      const mine = new Set(g.map((x) => x.team))
      for (const x of rows.values()) if (x.ws === wsId && mine.has(x.team)) levels.push(x.access)
      return levels.reduce<Level | null>((best, l) => best === null || RANK[l] > RANK[best] ? l : best, null)
    }
    const callers = [
      ...Array.from({ length: ORGS }, (_, org) => ({ name: `org token ${org}`, caller: { kind: 'organization' as const, organizationId: `org-${r}-o${org}` }, grants: [{ org, team: null, owner: true, manage: false, read: false }] })),
      ...teams.map((x) => ({ name: `team token ${x.id}`, caller: { kind: 'team' as const, teamId: x.id }, grants: [teamGrant(x)] })),
      ...Array.from({ length: USERS }, (_, u) => ({ name: `user ${u}`, caller: { kind: 'user' as const, userId: `user-${r}-u${u}` }, grants: members.filter(([mu]) => mu === u).map(([, ti]) => teamGrant(teams[ti]!)) }))
    ]
    const workspaceIds = [...workspaces.map((w) => w.id), `ws-${r}-missing`]
    for (const { name, caller, grants } of callers) {
      const many = await app.teamAccess.effectiveAccessMany({ caller, workspaceIds })
      for (const wsId of workspaceIds) {
        const expected = modelAccess(grants, wsId)
        const one = (await app.teamAccess.effectiveAccess({ caller, workspaceId: wsId })).access
        if (one !== expected || many.get(wsId)?.access !== expected) {
          disagreements.push(`${r}: effective access of ${name} on ${wsId}: model ${String(expected)}, effectiveAccess ${String(one)}, effectiveAccessMany ${String(many.get(wsId)?.access)}`)
          return false
        }
      }
    }
    return true
  }), { numRuns: RUNS, endOnFailure: true }).catch((err: Error) => { disagreements.push(err.message.split('\n').slice(0, 3).join(' ')) })

  t.same(disagreements, [], `${steps} steps over ${run} worlds`)
  await recordFigure(`model-based authorization (${ENGINE})`, `${steps} steps over ${run} random worlds, ${disagreements.length} disagreements`, '0 disagreements')
})
