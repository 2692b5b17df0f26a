import t from 'tap'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import { build, ENGINE } from '../helper.js'
import { applySeed } from '../../src/directory/seed.js'
import { answerOf, ORDERS, type Answer, type RowRecord, type TeamRecord } from '../model/rules.js'
import type { Permissions } from '../../src/access/permissions.js'
import { tokenDigest } from '../../src/auth/token-digest.js'
import { recordFigure } from './figures.js'

/**
 * Nobody hands out more than they hold, as a property: random worlds (teams with every kind of
 * flag, members, tokens, team-access rows of every level) and random sequences of directory and
 * access calls by callers who are not owners — members added and removed, teams created, changed
 * and deleted, tokens made and revoked, rows added, changed and removed, and now and then the
 * operator's seed, which adopts a team the API made by its name. After each step every caller's
 * effective access on every workspace is computed from the tables by the reference model
 * (test/model/rules.ts, which shares no code with the service) and compared with before: a caller
 * may hold more only where the acting caller already held it (a workspace admin may grant
 * anything there); after a seed, only what the seed itself declares.
 */
const RUNS = Number(process.env.ESCALATION_RUNS ?? 12)
/**
 * The random worlds come from one seed, so a run is repeatable and the check that the calls did things
 * (below) cannot fail by the draw; `ESCALATION_SEED=random` (or a number) walks other worlds.
 */
const SEED = process.env.ESCALATION_SEED === 'random' ? Date.now() % 2 ** 31 : Number(process.env.ESCALATION_SEED ?? 20261127)
const STEPS = 30
const LEVELS = ['read', 'plan', 'write', 'admin', 'custom'] as const
const RANK: Record<string, number> = { custom: 0, read: 1, plan: 2, write: 3, admin: 4 }
const PERMISSIONS = Object.keys(ORDERS) as Array<keyof Permissions>
const USERS = 5
const WORKSPACES = 3

const flagsArb = fc.record({
  'manage-workspaces': fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
  'read-workspaces': fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
  'manage-teams': fc.integer({ min: 0, max: 9 }).map((n) => n < 5),
  'manage-membership': fc.integer({ min: 0, max: 9 }).map((n) => n < 4)
})
const customArb = fc.record({
  runs: fc.constantFrom('read', 'plan', 'apply'),
  variables: fc.constantFrom('none', 'read', 'write'),
  'state-versions': fc.constantFrom('none', 'read-outputs', 'read', 'write'),
  'workspace-locking': fc.boolean(),
  'run-tasks': fc.boolean()
})
const worldArb = fc.record({
  teams: fc.array(fc.record({ visibility: fc.constantFrom('secret' as const, 'organization' as const), flags: flagsArb }), { minLength: 3, maxLength: 6 }),
  members: fc.array(fc.tuple(fc.integer({ min: 0, max: USERS - 1 }), fc.nat()), { minLength: 3, maxLength: 12 }),
  rows: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: WORKSPACES - 1 }), fc.constantFrom(...LEVELS), customArb), { maxLength: 8 })
})
const OPS = ['addMember', 'addMember', 'removeMember', 'mintToken', 'mintToken', 'createTeam', 'updateTeam', 'deleteTeam',
  'addRow', 'addRow', 'updateRow', 'removeRow', 'revokeToken', 'seed'] as const
const stepArb = fc.record({
  op: fc.constantFrom(...OPS),
  actor: fc.nat(),
  a: fc.nat(),
  b: fc.nat(),
  level: fc.constantFrom(...LEVELS),
  custom: customArb,
  flags: flagsArb,
  description: fc.boolean()
})

interface State {
  teams: TeamRecord[]
  /** Each team's name and source. */
  named: Map<string, { name: string, managedBy: string }>
  rows: RowRecord[]
  memberships: Array<{ teamId: string, userId: string, managedBy: string }>
  tokens: Array<{ id: string, kind: string, teamId: string | null, userId: string | null, organizationId: string | null }>
}

/** The teams each caller — a user (any of its tokens), a team or organization token — acts through. */
function callersOf (state: State): Map<string, TeamRecord[]> {
  const byId = new Map(state.teams.map((team) => [team.id, team]))
  const callers = new Map<string, TeamRecord[]>()
  for (const userId of new Set(state.tokens.filter((tk) => tk.kind === 'user').map((tk) => tk.userId!))) {
    callers.set(`user ${userId}`, state.memberships.filter((m) => m.userId === userId).map((m) => byId.get(m.teamId)!))
  }
  for (const tk of state.tokens) {
    if (tk.kind === 'team') callers.set(`token ${tk.id}`, [byId.get(tk.teamId!)!])
    if (tk.kind === 'organization') callers.set(`token ${tk.id}`, [{ id: `owner-of-${tk.organizationId!}`, organizationId: tk.organizationId!, isOwners: true, manageWorkspaces: false, readWorkspaces: false }])
  }
  return callers
}

/** What each caller holds on each workspace, by the reference model. */
function holdings (state: State, workspaces: string[]): Map<string, Map<string, Answer | null>> {
  return new Map([...callersOf(state)].map(([name, teams]) => [name, new Map(workspaces.map((ws) => [ws, answerOf(teams, { id: ws, organizationId: 'org-acme' }, state.rows)]))]))
}

/** `answer` holds nothing beyond `limit`: its level and each permission at most the stronger of the two limits'. An admin limit holds everything (an admin may grant any row). */
function within (answer: Answer | null, ...limits: Array<Answer | null>): boolean {
  if (answer === null) return true
  const held = limits.filter((l): l is Answer => l !== null)
  if (held.some((l) => l.access === 'admin')) return true
  if (RANK[answer.access]! > Math.max(-1, ...held.map((l) => RANK[l.access]!))) return false
  return PERMISSIONS.every((name) => {
    const order = ORDERS[name] as readonly unknown[]
    return order.indexOf(answer.permissions[name]) <= Math.max(0, ...held.map((l) => order.indexOf(l.permissions[name])))
  })
}

async function readState (app: FastifyInstance): Promise<State> {
  const [teams, rows, memberships, tokens] = await Promise.all([
    app.db.selectFrom('teams').selectAll().where('organization_id', '=', 'org-acme').orderBy('name').execute(),
    app.db.selectFrom('team_workspaces').selectAll().execute(),
    app.db.selectFrom('team_memberships').select(['team_id', 'user_id', 'managed_by']).orderBy('user_id').execute(),
    app.db.selectFrom('tokens').select(['id', 'kind', 'team_id', 'user_id', 'organization_id']).execute()
  ])
  const acme = new Set(teams.map((team) => team.id))
  return {
    teams: teams.map((x) => ({ id: x.id, organizationId: x.organization_id, isOwners: x.is_owners, manageWorkspaces: x.manage_workspaces, readWorkspaces: x.read_workspaces })),
    named: new Map(teams.map((x) => [x.id, { name: x.name, managedBy: x.managed_by }])),
    rows: rows.map((x) => ({
      id: x.id,
      teamId: x.team_id,
      workspaceId: x.workspace_id,
      access: x.access,
      permissions: { runs: x.runs, variables: x.variables, 'state-versions': x.state_versions, 'sentinel-mocks': x.sentinel_mocks, 'workspace-locking': x.workspace_locking, 'run-tasks': x.run_tasks, 'policy-overrides': x.policy_overrides } as Permissions
    })),
    memberships: memberships.filter((m) => acme.has(m.team_id)).map((m) => ({ teamId: m.team_id, userId: m.user_id, managedBy: m.managed_by })),
    tokens: tokens.filter((tk) => tk.kind !== 'team' || acme.has(tk.team_id!)).map((tk) => ({ id: tk.id, kind: tk.kind, teamId: tk.team_id, userId: tk.user_id, organizationId: tk.organization_id }))
  }
}

t.test(`no caller who is not an owner hands out more than it holds — random worlds and calls (${ENGINE})`, async (t) => {
  const app = await build(t)
  let run = 0
  let steps = 0
  const violations: string[] = []
  const done = new Map<string, number>()

  await fc.assert(fc.asyncProperty(worldArb, fc.array(stepArb, { minLength: STEPS, maxLength: STEPS }), async (raw, plan) => {
    const r = `e${run++}`
    // each run starts from its own acme: the previous run's is removed by the host first
    const existing = await app.db.selectFrom('organizations').select('id').where('id', '=', 'org-acme').executeTakeFirst()
    if (existing !== undefined) await app.teamAccess.directory.removeOrganization('org-acme')
    await app.db.deleteFrom('organizations').where('id', '=', 'org-other').execute()
    await app.db.deleteFrom('users').execute()
    const users = Array.from({ length: USERS }, (_, u) => ({ id: `user-${r}-u${u}`, username: `${r}-u${u}`, tokens: [`${r}-user-token-${u}`] }))
    const teams = raw.teams.map((x, i) => ({ id: `team-${r}-t${i}`, name: `t${i}`, ...x }))
    const members = [...new Set(raw.members.map(([u, ti]) => `${u}:${ti % teams.length}`))].map((key) => key.split(':').map(Number) as [number, number])
    const workspaces = Array.from({ length: WORKSPACES }, (_, w) => `ws-${r}-w${w}`)
    const rows = new Map<string, { team: string, ws: number }>()
    raw.rows.forEach(([ti, w], i) => {
      const team = teams[ti % teams.length]!
      if (![...rows.values()].some((x) => x.team === team.name && x.ws === w)) rows.set(`tws-${r}-r${i}`, { team: team.name, ws: w })
    })
    const base = {
      users: [...users, { id: `user-${r}-outsider`, username: `${r}-outsider`, tokens: [`${r}-outsider-token`] }],
      organizations: [{
        id: 'org-acme',
        name: 'acme',
        tokens: [`${r}-org-token`],
        teams: [
          { id: `team-${r}-owners`, name: 'owners', owners: true, members: [`${r}-u0`], tokens: [`${r}-owners-token`] },
          ...teams.map((x, i) => ({
            id: x.id,
            name: x.name,
            visibility: x.visibility,
            'organization-access': x.flags,
            tokens: [`${r}-team-token-${i}`],
            members: members.filter(([, ti]) => ti === i).map(([u]) => `${r}-u${u}`)
          }))
        ],
        workspaces: workspaces.map((id, w) => ({ id, name: `w${w}` })),
        'team-access': raw.rows.flatMap(([ti, w, level, custom], i) => rows.has(`tws-${r}-r${i}`)
          ? [{ id: `tws-${r}-r${i}`, team: teams[ti % teams.length]!.name, workspace: `w${w}`, access: level, ...(level === 'custom' ? custom : {}) }]
          : [])
      }, { id: 'org-other', name: 'other', teams: [{ id: `team-${r}-other`, name: 'everyone', owners: true, members: [`${r}-outsider`] }] }]
    }
    await applySeed(app.db, base)

    // the callers who act: users other than the owner, team tokens — and every token made on the way
    const tokenIds = new Map((await app.db.selectFrom('tokens').select(['id', 'digest']).execute()).map((tk) => [tk.digest, tk.id]))
    const actors: Array<{ name: string, token: string, key: string }> = [
      ...users.slice(1).map((u, i) => ({ name: u.username, token: `${r}-user-token-${i + 1}`, key: `user ${u.id}` })),
      ...teams.map((x, i) => ({ name: `token of ${x.name}`, token: `${r}-team-token-${i}`, key: `token ${tokenIds.get(tokenDigest(`${r}-team-token-${i}`))!}` }))
    ]
    let state = await readState(app)
    let apiTeams = 0

    for (const step of plan) {
      steps++
      const before = holdings(state, workspaces)
      const previous = state
      const actor = actors[step.actor % actors.length]!
      const headers = { authorization: `Bearer ${actor.token}`, 'content-type': 'application/vnd.api+json' }
      const teamIds = state.teams.filter((x) => !x.isOwners).map((x) => x.id).concat(state.teams.filter((x) => x.isOwners).map((x) => x.id))
      const team = teamIds[step.a % teamIds.length]!
      const ws = workspaces[step.b % workspaces.length]!
      const user = step.b % (USERS + 1) === USERS ? `${r}-outsider` : `${r}-u${step.b % (USERS + 1)}`
      const send = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
        await app.inject({ method, url: `/api/v2${url}`, headers, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) })
      let status = 0
      let seeded: { team: string, members: string[] } | undefined
      switch (step.op) {
        case 'addMember':
          status = (await send('POST', `/teams/${team}/relationships/users`, { data: [{ type: 'users', id: user }] })).statusCode
          break
        case 'removeMember': {
          // one of the members the API added to the team when it has any (the seed's are the seed's to remove: 422),
          // so that a refusal is the authorization's and not a stranger's
          const current = state.memberships.filter((m) => m.teamId === team && m.managedBy !== 'seed')
          const member = current.length === 0 ? user : current[step.b % current.length]!.userId.replace(/^user-/, '')
          status = (await send('DELETE', `/teams/${team}/relationships/users`, { data: [{ type: 'users', id: member }] })).statusCode
          break
        }
        case 'mintToken': {
          const res = step.description
            ? await send('POST', `/teams/${team}/authentication-tokens`, { data: { type: 'authentication-tokens', attributes: { description: `d${steps}` } } })
            : await send('POST', `/teams/${team}/authentication-token`)
          status = res.statusCode
          if (status === 201) actors.push({ name: `minted ${res.json().data.id as string}`, token: res.json().data.attributes.token, key: `token ${res.json().data.id as string}` })
          break
        }
        case 'createTeam':
          status = (await send('POST', '/organizations/acme/teams', { data: { type: 'teams', attributes: { name: `api${apiTeams++}`, visibility: step.description ? 'organization' : 'secret', ...(step.a % 3 === 0 ? { 'organization-access': step.flags } : {}) } } })).statusCode
          break
        case 'updateTeam':
          status = (await send('PATCH', `/teams/${team}`, { data: { type: 'teams', attributes: { 'organization-access': step.flags, visibility: step.description ? 'organization' : 'secret' } } })).statusCode
          break
        case 'deleteTeam':
          status = (await send('DELETE', `/teams/${team}`)).statusCode
          break
        case 'addRow':
          status = (await send('POST', '/team-workspaces', {
            data: { type: 'team-workspaces', attributes: { access: step.level, ...(step.level === 'custom' ? step.custom : {}) }, relationships: { team: { data: { type: 'teams', id: team } }, workspace: { data: { type: 'workspaces', id: ws } } } }
          })).statusCode
          break
        case 'updateRow': {
          const row = state.rows[step.a % Math.max(1, state.rows.length)]
          status = row === undefined ? 0 : (await send('PATCH', `/team-workspaces/${row.id}`, { data: { type: 'team-workspaces', attributes: { access: step.level, ...(step.level === 'custom' ? step.custom : {}) } } })).statusCode
          break
        }
        case 'removeRow': {
          const row = state.rows[step.a % Math.max(1, state.rows.length)]
          status = row === undefined ? 0 : (await send('DELETE', `/team-workspaces/${row.id}`)).statusCode
          break
        }
        case 'revokeToken': {
          const token = state.tokens[step.a % state.tokens.length]!
          status = (await send('DELETE', `/authentication-tokens/${token.id}`)).statusCode
          break
        }
        case 'seed': {
          // the operator declares, by name, a team the API may have made (adopting it), with flags and members of its own
          const name = `api${step.a % Math.max(1, apiTeams)}`
          seeded = { team: name, members: [`${r}-u${step.b % USERS}`] }
          const document = structuredClone(base)
          document.organizations[0]!.teams.push({ name, 'organization-access': step.flags, members: seeded.members } as never)
          await applySeed(app.db, document)
          status = 200
          break
        }
      }
      const key = `${step.op} ${status}`
      done.set(key, (done.get(key) ?? 0) + 1)

      state = await readState(app)
      const after = holdings(state, workspaces)
      const callers = callersOf(state)
      const actorHeld = before.get(actor.key)
      for (const [caller, held] of after) {
        for (const w of workspaces) {
          const was = before.get(caller)?.get(w) ?? null
          const now = held.get(w) ?? null
          let allowed: boolean
          if (seeded !== undefined) {
            // a seed grants only to what it declares: the declared members of the team it names — and, on a
            // team it already managed, to whoever the API added to it then (a seed team's API members
            // and tokens are the API's, made by callers who held the team's grants as they were)
            const name = seeded.team
            const managed = [...previous.named].some(([id, x]) => x.name === name && x.managedBy === 'seed' && callers.get(caller)?.some((tm) => tm.id === id))
            allowed = managed || seeded.members.some((m) => caller === `user user-${m}`) || within(now, was)
          } else {
            allowed = within(now, was, actorHeld?.get(w) ?? null)
          }
          if (!allowed) {
            violations.push(`${r} step ${steps}: ${actor.name} ${key} (${team}, ${ws}, ${user}): ${caller} on ${w} went from ${JSON.stringify(was)} to ${JSON.stringify(now)}; the actor held ${JSON.stringify(actorHeld?.get(w) ?? null)}`)
            return false
          }
        }
      }
    }
    return true
  }), { numRuns: RUNS, seed: SEED, endOnFailure: true }).catch((err: Error) => { if (violations.length === 0) violations.push(err.message.split('\n').slice(0, 3).join(' ')) })

  t.same(violations, [], `${steps} steps over ${run} worlds (seed ${SEED})`)
  t.ok(steps >= 300, `at least 300 steps (${steps})`)
  // the calls did things: a property that only ever saw refusals would prove nothing
  for (const op of ['addMember 204', 'mintToken 201', 'addRow 200', 'removeMember 204', 'createTeam 201']) {
    t.ok((done.get(op) ?? 0) > 0, `some ${op} (${done.get(op) ?? 0})`)
  }
  t.comment([...done].sort().map(([k, v]) => `${k}: ${v}`).join(', '))
  await recordFigure(`escalation model (${ENGINE})`, `${steps} steps over ${run} random worlds, ${violations.length} violations`, '0 violations')
})
