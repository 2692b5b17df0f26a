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
 * operator's seed, which adopts a team the API made by its name. Projects too (DESIGN §11): a
 * project made through the API (by a manage-projects team, or by an owner who gives a team admin
 * on it), a row given on one, a project renamed by its admin — to a name a later seed declares
 * among others — and seeds that declare project and team names, without ids (adopting what holds
 * the name) and with ids (renaming it out of the way), placing the seed's workspace in the project.
 * Workspaces and people through the API (DESIGN §14): workspaces made in a project, moved between
 * projects, deleted; people invited by email into a team, and memberships ended — a workspace made
 * or moved gives each caller no more than it already held on every workspace of its project.
 * After each step every caller's effective access on every workspace is computed from the tables
 * by the reference model (test/model/rules.ts, which shares no code with the service; a
 * team-project row counts on each workspace of its project as DESIGN §11.2 maps it) and compared
 * with before: a caller may hold more only where the acting caller already held it (a workspace
 * admin may grant anything there); after a seed, only what the seed itself declares — no API-made
 * team-project row survives on a project the seed adopted, and nobody reaches the seed's workspace
 * through a project whose name they took.
 */
const RUNS = Number(process.env.ESCALATION_RUNS ?? 14)
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
const PROJECT_LEVELS = ['read', 'write', 'maintain', 'admin', 'custom'] as const
// written out from DESIGN §11.2: a project level on each workspace of the project
const ON_WORKSPACE: Record<string, typeof LEVELS[number]> = { read: 'read', write: 'write', maintain: 'admin', admin: 'admin', custom: 'custom' }
/** The names projects are made and renamed to, and seeds declare (`PAYMENTS` holds `payments`: names are unique case-insensitively). */
const PROJECT_NAMES = ['payments', 'PAYMENTS', 'ledger', 'sandbox'] as const

const flagsArb = fc.record({
  'manage-workspaces': fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
  'read-workspaces': fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
  'manage-teams': fc.integer({ min: 0, max: 9 }).map((n) => n < 5),
  'manage-membership': fc.integer({ min: 0, max: 9 }).map((n) => n < 4),
  projects: fc.boolean()
  // manage-projects needs manage-workspaces (DESIGN §11.3)
}).map(({ projects, ...flags }) => ({ ...flags, 'manage-projects': projects && flags['manage-workspaces'] }))
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
  rows: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: WORKSPACES - 1 }), fc.constantFrom(...LEVELS), customArb), { maxLength: 8 }),
  // the seed's project "core" (w1 sits in it) and its project-access entries
  projectRows: fc.array(fc.tuple(fc.nat(), fc.constantFrom(...PROJECT_LEVELS)), { maxLength: 3 })
})
const OPS = ['addMember', 'addMember', 'removeMember', 'mintToken', 'mintToken', 'createTeam', 'updateTeam', 'deleteTeam',
  'addRow', 'addRow', 'updateRow', 'removeRow', 'revokeToken', 'seed',
  'createProject', 'ownerProject', 'giveProjectRow', 'renameProject', 'renameProject', 'seed',
  'createWorkspace', 'createWorkspace', 'moveWorkspace', 'moveWorkspace', 'moveWorkspace', 'deleteWorkspace', 'invite', 'invite', 'leave', 'leave', 'removeMember'] as const
const stepArb = fc.record({
  op: fc.constantFrom(...OPS),
  actor: fc.nat(),
  a: fc.nat(),
  b: fc.nat(),
  level: fc.constantFrom(...LEVELS),
  custom: customArb,
  flags: flagsArb,
  description: fc.boolean(),
  projectLevel: fc.constantFrom(...PROJECT_LEVELS),
  // a custom project row's workspace-access booleans: who may create, move and delete workspaces there (DESIGN §14.1)
  workspaceFlags: fc.record({ create: fc.boolean(), move: fc.boolean(), delete: fc.boolean() }),
  withIds: fc.boolean()
})

/** The name of PROJECT_NAMES a world's scripted squat takes. */
const step0 = (run: number): number => run % PROJECT_NAMES.length

interface State {
  teams: TeamRecord[]
  /** Each team's name and source. */
  named: Map<string, { name: string, managedBy: string }>
  rows: RowRecord[]
  memberships: Array<{ teamId: string, userId: string, managedBy: string }>
  tokens: Array<{ id: string, kind: string, teamId: string | null, userId: string | null, organizationId: string | null }>
  projects: Array<{ id: string, name: string, managedBy: string }>
  /** Each workspace's project. */
  placed: Map<string, string>
  projectRows: Array<{ id: string, teamId: string, projectId: string, access: string, permissions: Permissions }>
  /** Each person's organization membership (DESIGN §14.2), by user id. */
  people: Map<string, string>
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

/**
 * What each caller holds on each workspace, by the reference model: its team-access rows, and the
 * team-project rows of the workspace's project as DESIGN §11.2 maps them. `ignored` leaves out, on
 * a workspace, the rows of one project (a seed's workspace moved into a project the seed already
 * managed, or into the default project: the rows there are grants the API may make, not a name taken).
 */
function holdings (state: State, workspaces: string[], ignored = new Map<string, string>()): Map<string, Map<string, Answer | null>> {
  const rowsOn = (ws: string): RowRecord[] => [...state.rows.filter((row) => row.workspaceId === ws),
    ...state.projectRows.filter((row) => row.projectId === state.placed.get(ws) && row.projectId !== ignored.get(ws))
      .map((row) => ({ id: row.id, teamId: row.teamId, workspaceId: ws, access: ON_WORKSPACE[row.access]!, permissions: row.permissions }))]
  return new Map([...callersOf(state)].map(([name, teams]) => [name, new Map(workspaces.map((ws) => [ws, answerOf(teams, { id: ws, organizationId: 'org-acme' }, rowsOn(ws))]))]))
}

/**
 * What each caller holds on any workspace of `projectId`, by its flags and the project's rows alone:
 * what a workspace made there, or moved there, may give it (DESIGN §14.1) — nothing beyond.
 */
function projectHoldings (state: State, projectId: string): Map<string, Answer | null> {
  const rows = state.projectRows.filter((row) => row.projectId === projectId)
    .map((row) => ({ id: row.id, teamId: row.teamId, workspaceId: 'ws-anywhere-there', access: ON_WORKSPACE[row.access]!, permissions: row.permissions }))
  return new Map([...callersOf(state)].map(([name, teams]) => [name, answerOf(teams, { id: 'ws-anywhere-there', organizationId: 'org-acme' }, rows)]))
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
  const [teams, rows, memberships, tokens, projects, workspaces, projectRows, people] = await Promise.all([
    app.db.selectFrom('teams').selectAll().where('organization_id', '=', 'org-acme').orderBy('name').execute(),
    app.db.selectFrom('team_workspaces').selectAll().execute(),
    app.db.selectFrom('team_memberships').select(['team_id', 'user_id', 'managed_by']).orderBy('user_id').execute(),
    app.db.selectFrom('tokens').select(['id', 'kind', 'team_id', 'user_id', 'organization_id']).execute(),
    app.db.selectFrom('projects').select(['id', 'name', 'managed_by']).where('organization_id', '=', 'org-acme').orderBy('name').execute(),
    app.db.selectFrom('workspaces').select(['id', 'project_id']).where('organization_id', '=', 'org-acme').execute(),
    app.db.selectFrom('team_projects').selectAll().where('organization_id', '=', 'org-acme').orderBy('id').execute(),
    app.db.selectFrom('organization_memberships').select(['id', 'user_id']).where('organization_id', '=', 'org-acme').orderBy('user_id').execute()
  ])
  const acme = new Set(teams.map((team) => team.id))
  return {
    // manage-projects needs manage-workspaces, read-projects read-workspaces: on a workspace they add nothing (DESIGN §11.3)
    teams: teams.map((x) => ({ id: x.id, organizationId: x.organization_id, isOwners: x.is_owners, manageWorkspaces: x.manage_workspaces || x.manage_projects, readWorkspaces: x.read_workspaces || x.read_projects })),
    named: new Map(teams.map((x) => [x.id, { name: x.name, managedBy: x.managed_by }])),
    rows: rows.map((x) => ({
      id: x.id,
      teamId: x.team_id,
      workspaceId: x.workspace_id,
      access: x.access,
      permissions: { runs: x.runs, variables: x.variables, 'state-versions': x.state_versions, 'sentinel-mocks': x.sentinel_mocks, 'workspace-locking': x.workspace_locking, 'run-tasks': x.run_tasks, 'policy-overrides': x.policy_overrides } as Permissions
    })),
    memberships: memberships.filter((m) => acme.has(m.team_id)).map((m) => ({ teamId: m.team_id, userId: m.user_id, managedBy: m.managed_by })),
    tokens: tokens.filter((tk) => tk.kind !== 'team' || acme.has(tk.team_id!)).map((tk) => ({ id: tk.id, kind: tk.kind, teamId: tk.team_id, userId: tk.user_id, organizationId: tk.organization_id })),
    projects: projects.map((x) => ({ id: x.id, name: x.name, managedBy: x.managed_by })),
    placed: new Map(workspaces.map((x) => [x.id, x.project_id])),
    // a team-project row on a workspace: its workspace-access as DESIGN §11.2 names it (locking is workspace-locking)
    projectRows: projectRows.map((x) => ({
      id: x.id,
      teamId: x.team_id,
      projectId: x.project_id,
      access: x.access,
      permissions: { runs: x.runs, variables: x.variables, 'state-versions': x.state_versions, 'sentinel-mocks': x.sentinel_mocks, 'workspace-locking': x.workspace_locking, 'run-tasks': x.run_tasks, 'policy-overrides': false } as Permissions
    })),
    people: new Map(people.map((x) => [x.user_id, x.id]))
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
    const users = Array.from({ length: USERS }, (_, u) => ({ id: `user-${r}-u${u}`, username: `${r}-u${u}`, email: `${r}-u${u}@example.com`, tokens: [`${r}-user-token-${u}`] }))
    const teams = raw.teams.map((x, i) => ({ id: `team-${r}-t${i}`, name: `t${i}`, ...x }))
    const members = [...new Set(raw.members.map(([u, ti]) => `${u}:${ti % teams.length}`))].map((key) => key.split(':').map(Number) as [number, number])
    const workspaces = Array.from({ length: WORKSPACES }, (_, w) => `ws-${r}-w${w}`)
    const rows = new Map<string, { team: string, ws: number }>()
    raw.rows.forEach(([ti, w], i) => {
      const team = teams[ti % teams.length]!
      if (![...rows.values()].some((x) => x.team === team.name && x.ws === w)) rows.set(`tws-${r}-r${i}`, { team: team.name, ws: w })
    })
    const base = {
      users: [...users, { id: `user-${r}-outsider`, username: `${r}-outsider`, email: `${r}-outsider@example.com`, tokens: [`${r}-outsider-token`] }],
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
        projects: [{ id: `prj-${r}-core`, name: 'core' }],
        workspaces: workspaces.map((id, w) => ({ id, name: `w${w}`, ...(w === 1 ? { project: 'core' } : {}) })),
        'project-access': [...new Map(raw.projectRows.map(([ti, level]) => [teams[ti % teams.length]!.name, level]))]
          .map(([team, level]) => ({ team, project: 'core', access: level })),
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
    // the review's world: an owner made a sandbox and gave a team admin on it (its members are the sandbox's admins)
    const sandboxed = await app.inject({ method: 'POST', url: '/api/v2/organizations/acme/projects', headers: { authorization: `Bearer ${r}-org-token`, 'content-type': 'application/vnd.api+json' }, payload: JSON.stringify({ data: { type: 'projects', attributes: { name: 'the sandbox' } } }) })
    await app.inject({
      method: 'POST',
      url: '/api/v2/team-projects',
      headers: { authorization: `Bearer ${r}-org-token`, 'content-type': 'application/vnd.api+json' },
      payload: JSON.stringify({ data: { type: 'team-projects', attributes: { access: 'admin' }, relationships: { team: { data: { type: 'teams', id: teams[raw.members[0]![1] % teams.length]!.id } }, project: { data: { type: 'projects', id: sandboxed.json().data.id } } } } })
    })
    let state = await readState(app)
    let apiTeams = 0
    let apiProjects = 0
    let apiWorkspaces = 0
    const owner = { name: 'the organization token', token: `${r}-org-token`, key: `token ${tokenIds.get(tokenDigest(`${r}-org-token`))!}` }

    // and once a world, the review's squat: the sandbox's admin renames it to the name the next seed declares without an id
    plan.splice(STEPS / 2, 0, { ...plan[0]!, op: 'renameProject', withIds: true, description: true, b: step0(run) },
      { ...plan[1]!, op: 'seed', withIds: false, a: 1, b: step0(run) })
    for (const step of plan) {
      steps++
      // every workspace of acme, the seed's and those made through the API
      const everyWorkspace = (of: State) => [...of.placed.keys()].sort()
      const before = holdings(state, everyWorkspace(state))
      const previous = state
      // an owner's step is the owner's (it holds everything): the world an adversary then works in; a rename is as
      // often as not by a caller holding an admin row on a project the API made: its admin
      const administered = state.projects.filter((x) => x.managedBy === 'api' && state.projectRows.some((row) => row.projectId === x.id && row.access === 'admin'))
      const apiMade = administered.length > 0 ? administered : state.projects.filter((x) => x.managedBy === 'api')
      const project = step.op === 'renameProject' && step.withIds && apiMade.length > 0 ? apiMade[step.a % apiMade.length]! : state.projects[step.a % state.projects.length]!
      const holders = actors.filter((x) => callersOf(state).get(x.key)?.some((tm) => state.projectRows.some((row) => row.projectId === project.id && row.teamId === tm.id && row.access === 'admin')))
      const actor = step.op === 'ownerProject' ? owner : step.op === 'renameProject' && step.withIds && holders.length > 0 ? holders[step.actor % holders.length]! : actors[step.actor % actors.length]!
      const headers = { authorization: `Bearer ${actor.token}`, 'content-type': 'application/vnd.api+json' }
      const teamIds = state.teams.filter((x) => !x.isOwners).map((x) => x.id).concat(state.teams.filter((x) => x.isOwners).map((x) => x.id))
      const team = teamIds[step.a % teamIds.length]!
      const ws = everyWorkspace(state)[step.b % state.placed.size]!
      const apiMadeWorkspaces = everyWorkspace(state).filter((w) => !workspaces.includes(w))
      const apiWorkspace = apiMadeWorkspaces.length > 0 ? apiMadeWorkspaces[step.b % apiMadeWorkspaces.length]! : ws
      const user = step.b % (USERS + 1) === USERS ? `${r}-outsider` : `${r}-u${step.b % (USERS + 1)}`
      const send = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
        await app.inject({ method, url: `/api/v2${url}`, headers, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) })
      let status = 0
      let seeded: { team: string, members: string[], project: string } | undefined
      const projectName = `${PROJECT_NAMES[step.b % PROJECT_NAMES.length]!}`
      const giveRow = async (projectId: string, teamId: string, access: string = step.projectLevel) => await send('POST', '/team-projects', {
        data: { type: 'team-projects', attributes: { access, ...(access === 'custom' ? { 'workspace-access': { runs: step.custom.runs, variables: step.custom.variables, ...step.workspaceFlags } } : {}) }, relationships: { team: { data: { type: 'teams', id: teamId } }, project: { data: { type: 'projects', id: projectId } } } }
      })
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
        case 'createProject': {
          // a project made through the API: owners and manage-projects teams may (a name taken: 422)
          const res = await send('POST', '/organizations/acme/projects', { data: { type: 'projects', attributes: { name: step.description ? projectName : `made ${apiProjects++}` } } })
          status = res.statusCode
          if (status === 201 && step.withIds) await giveRow(res.json().data.id, team)
          break
        }
        case 'ownerProject': {
          // an owner makes a sandbox and gives one of the world's teams admin on it: its members and token become its project admins
          const res = await send('POST', '/organizations/acme/projects', { data: { type: 'projects', attributes: { name: `sandbox ${apiProjects++}` } } })
          status = res.statusCode
          if (status === 201) status = (await giveRow(res.json().data.id, teams[step.a % teams.length]!.id, 'admin')).statusCode
          break
        }
        case 'giveProjectRow':
          status = (await giveRow(project.id, team)).statusCode
          break
        case 'renameProject':
          // a project admin renames their project, mostly to a name a seed declares
          status = (await send('PATCH', `/projects/${project.id}`, { data: { type: 'projects', attributes: { name: step.description || step.withIds ? projectName : `renamed ${steps}` } } })).statusCode
          break
        case 'createWorkspace':
          // a workspace made in a project (DESIGN §14.1): owners, manage-workspaces, a project row with create there
          status = (await send('POST', '/organizations/acme/workspaces', { data: { type: 'workspaces', attributes: { name: `made-${apiWorkspaces++}`, 'auto-apply': step.description }, relationships: { project: { data: { type: 'projects', id: project.id } } } } })).statusCode
          break
        case 'moveWorkspace':
          // owners, manage-projects, or move on both projects: what the workspace then inherits is the target's (mostly
          // one the API made: the seed's refuse the API, 422)
          status = (await send('PATCH', `/workspaces/${step.a % 4 === 0 ? ws : apiWorkspace}`, { data: { type: 'workspaces', relationships: { project: { data: { type: 'projects', id: project.id } } } } })).statusCode
          break
        case 'deleteWorkspace':
          status = (await send('DELETE', `/workspaces/${step.a % 4 === 0 ? ws : apiWorkspace}`)).statusCode
          break
        case 'invite': {
          // an organization membership by email with a team (DESIGN §14.2), mostly of someone not yet a member (an email
          // already one: 422): the user exists, so it is active and in the team at once — or, now and then, an email no user has
          const outside = [...Array.from({ length: USERS }, (_, u) => `${r}-u${u}`), `${r}-outsider`].filter((name) => !state.people.has(`user-${name}`))
          const invited = step.a % 5 === 0 ? `${r}-newcomer-${steps}` : outside.length > 0 ? outside[step.b % outside.length]! : user
          status = (await send('POST', '/organizations/acme/organization-memberships', { data: { type: 'organization-memberships', attributes: { email: `${invited}@example.com` }, relationships: { teams: { data: [{ type: 'teams', id: team }] } } } })).statusCode
          break
        }
        case 'leave': {
          // mostly someone whose team memberships here the seed does not manage (a seed's: 422)
          const free = [...state.people].filter(([userId]) => state.memberships.every((m) => m.userId !== userId || m.managedBy !== 'seed'))
          const membership = free.length > 0 && step.a % 4 !== 0 ? free[step.b % free.length]![1] : state.people.get(`user-${user}`)
          status = membership === undefined ? 0 : (await send('DELETE', `/organization-memberships/${membership}`)).statusCode
          break
        }
        case 'seed': {
          // the operator declares, by name, a team the API may have made (adopting it), with flags and members of its own —
          // or under its own id (a team of that name is renamed out of the way); and a project by a name an API caller may
          // hold (adopted whole without an id, renamed out of the way with one), the seed's workspace w2 placed in it
          const name = `api${step.a % Math.max(1, apiTeams)}`
          // mostly the name an API caller took (the operator's next name, which the squatter guessed)
          const taken = state.projects.filter((x) => x.managedBy !== 'seed' && PROJECT_NAMES.some((n) => n.toLowerCase() === x.name.toLowerCase()))
          const declaring = taken.length > 0 && step.a % 4 !== 0 ? taken[step.b % taken.length]!.name : projectName
          seeded = { team: name, members: [`${r}-u${step.b % USERS}`], project: declaring }
          const document = structuredClone(base)
          const org = document.organizations[0]! as typeof document.organizations[0] & { projects: unknown[], 'project-access': unknown[] }
          org.teams.push({ ...(step.withIds ? { id: `team-${r}-seed-${name}` } : {}), name, 'organization-access': step.flags, members: seeded.members } as never)
          org.projects.push({ ...(step.withIds ? { id: `prj-${r}-seed-${declaring.toLowerCase()}` } : {}), name: declaring })
          org.workspaces[2] = { ...org.workspaces[2]!, project: declaring } as never
          if (step.description) org['project-access'].push({ team: name, project: declaring, access: step.projectLevel, ...(step.projectLevel === 'custom' ? { 'workspace-access': { runs: 'plan' } } : {}) })
          // a project the seed managed and no longer declares, which now holds a workspace the API made there, fails the
          // apply whole (DESIGN §11.5): nothing changes, which the comparison below sees as any refusal
          const summary = await applySeed(app.db, document).catch((err: Error) => { if (/no longer declared but still holds/.test(err.message)) return undefined; throw err })
          if (summary === undefined) {
            status = 422
            seeded = undefined
            break
          }
          status = 200
          if (summary.warnings.some((w) => /renamed "/.test(w))) done.set('seed renamed a squatter', (done.get('seed renamed a squatter') ?? 0) + 1)
          if (summary.warnings.some((w) => /^project .*now the seed's — [1-9]/.test(w))) done.set('seed adopted a project, rows removed', (done.get('seed adopted a project, rows removed') ?? 0) + 1)
          break
        }
      }
      const key = `${step.op} ${status}`
      done.set(key, (done.get(key) ?? 0) + 1)

      state = await readState(app)
      let ignored = new Map<string, string>()
      if (seeded !== undefined) {
        // no team-project row the document does not declare survives on a project the seed adopted now
        const declared = new Set(state.teams.filter((x) => state.named.get(x.id)!.name === seeded.team).map((x) => x.id))
        for (const p of state.projects.filter((x) => x.managedBy === 'seed' && previous.projects.some((y) => y.id === x.id && y.managedBy !== 'seed'))) {
          const kept = state.projectRows.filter((row) => row.projectId === p.id && !declared.has(row.teamId))
          if (kept.length > 0) {
            violations.push(`${r} step ${steps}: the seed adopted project ${p.name} (${p.id}) and kept rows it does not declare: ${JSON.stringify(kept)}`)
            return false
          }
        }
        // the seed's workspace lands in the project of the name it declares, the seed's
        const landed = state.projects.find((x) => x.id === state.placed.get(workspaces[2]!))
        if (landed?.name.toLowerCase() !== seeded.project.toLowerCase() || landed.managedBy !== 'seed') {
          violations.push(`${r} step ${steps}: the seed's workspace landed in ${JSON.stringify(landed)}, not the seed's "${seeded.project}"`)
          return false
        }
        // a workspace moved into a project the seed managed before, or the default project (absent: where a workspace
        // sits), gains what the API granted there: grants to make, not a name taken (DESIGN §6)
        const isDefault = new Set((await app.db.selectFrom('projects').select('id').where('organization_id', '=', 'org-acme').where('is_default', '=', true).execute()).map((x) => x.id))
        // (a project adopted now counts whole: what it keeps is only what the seed declares)
        ignored = new Map(workspaces.flatMap((w) => {
          const now = state.placed.get(w)!
          const before = previous.projects.find((x) => x.id === now)
          const adopted = before !== undefined && before.managedBy !== 'seed' && state.projects.some((x) => x.id === now && x.managedBy === 'seed')
          return now !== previous.placed.get(w) && !adopted && (before?.managedBy === 'seed' || isDefault.has(now)) ? [[w, now]] : []
        }))
      }
      const after = holdings(state, everyWorkspace(state), ignored)
      const callers = callersOf(state)
      const actorHeld = before.get(actor.key)
      for (const [caller, held] of after) {
        for (const w of everyWorkspace(state)) {
          const was = before.get(caller)?.get(w) ?? null
          const now = held.get(w) ?? null
          // a workspace made now, or moved now, gives what the caller already held on every workspace of its project there
          const made = !previous.placed.has(w)
          const moved = !made && previous.placed.get(w) !== state.placed.get(w) && seeded === undefined
          let allowed: boolean
          if (made || moved) {
            allowed = within(now, made ? null : was, projectHoldings(previous, state.placed.get(w)!).get(caller) ?? null)
          } else if (seeded !== undefined) {
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
            violations.push(`${r} step ${steps}: ${actor.name} ${key} (${team}, ${ws}, ${user}, ${project.id}): ${caller} on ${w} went from ${JSON.stringify(was)} to ${JSON.stringify(now)}; the actor held ${JSON.stringify(actorHeld?.get(w) ?? null)}`)
            return false
          }
        }
      }
    }
    return true
  }), { numRuns: RUNS, seed: SEED, endOnFailure: true }).catch((err: Error) => { if (violations.length === 0) violations.push(String((err.cause as Error | undefined)?.stack ?? err.message).split('\n').slice(0, 6).join(' ')) })

  t.same(violations, [], `${steps} steps over ${run} worlds (seed ${SEED})`)
  t.ok(steps >= 300, `at least 300 steps (${steps})`)
  // the calls did things: a property that only ever saw refusals would prove nothing
  for (const op of ['addMember 204', 'mintToken 201', 'addRow 200', 'removeMember 204', 'createTeam 201', 'createProject 201', 'ownerProject 201', 'renameProject 200', 'giveProjectRow 201', 'seed adopted a project, rows removed', 'seed renamed a squatter',
    'createWorkspace 201', 'moveWorkspace 200', 'deleteWorkspace 204', 'invite 201', 'leave 204']) {
    t.ok((done.get(op) ?? 0) > 0, `some ${op} (${done.get(op) ?? 0})`)
  }
  t.comment([...done].sort().map(([k, v]) => `${k}: ${v}`).join(', '))
  await recordFigure(`escalation model (${ENGINE})`, `${steps} steps over ${run} random worlds, ${violations.length} violations`, '0 violations')
})
