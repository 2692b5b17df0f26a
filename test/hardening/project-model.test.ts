import t from 'tap'
import fc from 'fast-check'
import { build, ENGINE } from '../helper.js'
import { applySeed } from '../../src/directory/seed.js'
import { recordFigure } from './figures.js'

/**
 * Effective access through projects, model-based (DESIGN §11.3): random worlds — organizations with
 * projects, workspaces placed in them, teams with every flag that grants (manage-/read-workspaces,
 * manage-/read-projects), members, team-access rows and team-project rows of every level — and
 * random sequences of reads, writes and changes of the world: reading a workspace and its rows,
 * adding a row (a workspace admin may), reading and listing projects, and, between them, a
 * team-project row given or removed, a workspace moved to another project (the host), a project
 * deleted. The reference model below is written from DESIGN §3 and §11 alone — it shares no code
 * with the service — and predicts every status and listed set; after each run the host's check
 * (`effectiveAccess`, `effectiveAccessMany`) is compared for every caller on every workspace. A
 * change counts from the very next request.
 */
const RUNS = Number(process.env.PROJECT_MODEL_RUNS ?? 20)
const STEPS = 30
const ORGS = 2
const USERS = 4
const LEVELS = ['read', 'plan', 'write', 'admin', 'custom'] as const
const PROJECT_LEVELS = ['read', 'write', 'maintain', 'admin', 'custom'] as const
type Level = typeof LEVELS[number]
type ProjectLevel = typeof PROJECT_LEVELS[number]
// written out from DESIGN §11.2: what a project level is on each workspace of the project
const ON_WORKSPACE: Record<ProjectLevel, Level> = { read: 'read', write: 'write', maintain: 'admin', admin: 'admin', custom: 'custom' }
const RANK: Record<Level, number> = { custom: 0, read: 1, plan: 2, write: 3, admin: 4 }

interface Team { id: string, org: number, owners: boolean, visibility: 'secret' | 'organization', manageWs: boolean, readWs: boolean, manageProjects: boolean, readProjects: boolean }
interface Project { id: string, name: string, org: number, isDefault: boolean, seeded: boolean }
interface Row { team: string, ws: string, access: Level }
interface ProjectRow { team: string, project: string, access: ProjectLevel }
type Grant = { org: number, team: string | null, owner: boolean, manageWs: boolean, readWs: boolean, manageProjects: boolean, readProjects: boolean }

const rarely = (under: number) => fc.integer({ min: 0, max: 9 }).map((n) => n < under)
const worldArb = fc.record({
  teams: fc.array(fc.record({
    org: fc.integer({ min: 0, max: ORGS - 1 }),
    visibility: fc.constantFrom('secret' as const, 'organization' as const),
    manageWs: rarely(1),
    readWs: rarely(2),
    manageProjects: rarely(5),
    readProjects: rarely(5)
  }), { minLength: 2, maxLength: 6 }),
  members: fc.array(fc.tuple(fc.integer({ min: 0, max: USERS - 1 }), fc.nat()), { maxLength: 10 }),
  projects: fc.array(fc.integer({ min: 0, max: ORGS - 1 }), { maxLength: 3 }),
  workspaces: fc.array(fc.tuple(fc.integer({ min: 0, max: ORGS - 1 }), fc.nat()), { minLength: 1, maxLength: 4 }),
  rows: fc.array(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom(...LEVELS)), { maxLength: 5 }),
  projectRows: fc.array(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom(...PROJECT_LEVELS)), { maxLength: 6 })
})

const commandArb = fc.record({
  op: fc.constantFrom('readWorkspace', 'readWorkspace', 'listRows', 'addRow', 'showProject', 'listProjects', 'createProject', 'giveProjectRow', 'removeProjectRow', 'moveWorkspace', 'deleteProject', 'hostCheck'),
  principal: fc.nat(),
  a: fc.nat(),
  b: fc.nat(),
  access: fc.constantFrom(...LEVELS),
  projectAccess: fc.constantFrom(...PROJECT_LEVELS)
})

t.test(`effective access through projects agrees with a reference model of DESIGN §11 on ${ENGINE}`, async (t) => {
  const app = await build(t)
  let run = 0
  let steps = 0
  const disagreements: string[] = []

  await fc.assert(fc.asyncProperty(worldArb, fc.array(commandArb, { minLength: STEPS, maxLength: STEPS }), async (raw, commands) => {
    const r = `p${run++}`
    // flags need their prerequisites (§11.3): a world that draws manage-projects draws manage-workspaces too
    const teams: Team[] = [
      ...Array.from({ length: ORGS }, (_, org) => ({ id: `team-${r}-owners${org}`, org, owners: true, visibility: 'secret' as const, manageWs: false, readWs: false, manageProjects: false, readProjects: false })),
      ...raw.teams.map((x, i) => ({ id: `team-${r}-t${i}`, owners: false, ...x, manageWs: x.manageWs || x.manageProjects, readWs: x.readWs || (x.readProjects && !x.manageWs && !x.manageProjects) }))
    ]
    const members = raw.members.map(([u, ti]) => [u, ti % teams.length] as [number, number])
      .filter(([u, ti], i, all) => all.findIndex(([u2, t2]) => u2 === u && t2 === ti) === i)
    const projects: Project[] = raw.projects.map((org, i) => ({ id: `prj-${r}-p${i}`, name: `project ${i}`, org, isDefault: false, seeded: true }))
    const projectsOf = (org: number) => projects.filter((p) => p.org === org)
    const workspaces = raw.workspaces.map(([org, pi], i) => ({ id: `ws-${r}-w${i}`, org, projectName: pi % (projectsOf(org).length + 1) === 0 ? undefined : projectsOf(org)[pi % (projectsOf(org).length + 1) - 1]!.name }))
    const rows = new Map<string, Row>()
    raw.rows.forEach(([ti, wi, access], i) => {
      const team = teams[ti % teams.length]!
      const ws = workspaces[wi % workspaces.length]!
      if (team.org !== ws.org || [...rows.values()].some((x) => x.team === team.id && x.ws === ws.id)) return
      rows.set(`tws-${r}-r${i}`, { team: team.id, ws: ws.id, access })
    })
    const planned: Array<ProjectRow & { name: string }> = []
    raw.projectRows.forEach(([ti, pi, access]) => {
      const team = teams[ti % teams.length]!
      const candidates = projectsOf(team.org)
      if (candidates.length === 0) return
      const project = candidates[pi % candidates.length]!
      if (planned.some((x) => x.team === team.id && x.project === project.id)) return
      planned.push({ team: team.id, project: project.id, name: project.name, access })
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
          owners: x.owners,
          visibility: x.visibility,
          'organization-access': { 'manage-workspaces': x.manageWs, 'read-workspaces': x.readWs, 'manage-projects': x.manageProjects, 'read-projects': x.readProjects },
          members: members.filter(([, ti]) => teams[ti] === x).map(([u]) => `${r}-u${u}`),
          tokens: [`${r}-team-token-${x.id}`]
        })),
        projects: projectsOf(org).map((p) => ({ id: p.id, name: p.name })),
        workspaces: workspaces.filter((w) => w.org === org).map((w) => ({ id: w.id, name: w.id, ...(w.projectName === undefined ? {} : { project: w.projectName }) })),
        'team-access': [...rows].filter(([, x]) => teams.find((tm) => tm.id === x.team)!.org === org)
          .map(([id, x]) => ({ id, team: x.team, workspace: x.ws, access: x.access, ...(x.access === 'custom' ? { runs: 'plan' as const } : {}) })),
        'project-access': planned.filter((x) => teams.find((tm) => tm.id === x.team)!.org === org)
          .map((x) => ({ team: x.team, project: x.name, access: x.access, ...(x.access === 'custom' ? { 'workspace-access': { runs: 'plan' as const } } : {}) }))
      }))
    })
    // the default projects and the rows' ids, as the service made them
    for (let org = 0; org < ORGS; org++) {
      const found = await app.db.selectFrom('projects').select(['id', 'name']).where('organization_id', '=', `org-${r}-o${org}`).where('is_default', '=', true).executeTakeFirstOrThrow()
      projects.push({ id: found.id, name: found.name, org, isDefault: true, seeded: true })
    }
    const projectRows = new Map<string, ProjectRow>()
    for (const row of await app.db.selectFrom('team_projects').select(['id', 'team_id', 'project_id', 'access']).where('organization_id', 'like', `org-${r}-%`).execute()) {
      projectRows.set(row.id, { team: row.team_id, project: row.project_id, access: row.access })
    }
    const placedIn = new Map<string, string>()
    for (const w of workspaces) {
      placedIn.set(w.id, (w.projectName === undefined ? projects.find((p) => p.org === w.org && p.isDefault) : projects.find((p) => p.org === w.org && p.name === w.projectName))!.id)
    }

    const teamGrant = (x: Team): Grant => ({ org: x.org, team: x.id, owner: x.owners, manageWs: x.manageWs, readWs: x.readWs, manageProjects: x.manageProjects, readProjects: x.readProjects })
    const ownerGrant = (org: number): Grant => ({ org, team: null, owner: true, manageWs: false, readWs: false, manageProjects: false, readProjects: false })
    const principals = [
      ...Array.from({ length: ORGS }, (_, org) => ({ name: `org token ${org}`, token: `${r}-org-token-${org}`, caller: { kind: 'organization' as const, organizationId: `org-${r}-o${org}` }, grants: [ownerGrant(org)] })),
      ...teams.map((x) => ({ name: `team token ${x.id}`, token: `${r}-team-token-${x.id}`, caller: { kind: 'team' as const, teamId: x.id }, grants: [teamGrant(x)] })),
      ...Array.from({ length: USERS }, (_, u) => ({ name: `user ${u}`, token: `${r}-user-token-${u}`, caller: { kind: 'user' as const, userId: `user-${r}-u${u}` }, grants: members.filter(([mu]) => mu === u).map(([, ti]) => teamGrant(teams[ti]!)) }))
    ]

    // the reference model (DESIGN §3, §11.3)
    const orgOf = (wsId: string) => workspaces.find((w) => w.id === wsId)?.org
    const access = (g: Grant[], wsId: string): Level | null => {
      const org = orgOf(wsId)
      if (org === undefined) return null
      const levels: Level[] = g.filter((x) => x.org === org).flatMap((x): Level[] => x.owner || x.manageWs || x.manageProjects ? ['admin'] : x.readWs || x.readProjects ? ['read'] : [])
      const mine = new Set(g.map((x) => x.team))
      for (const x of rows.values()) if (x.ws === wsId && mine.has(x.team)) levels.push(x.access)
      for (const x of projectRows.values()) if (x.project === placedIn.get(wsId) && mine.has(x.team)) levels.push(ON_WORKSPACE[x.access])
      return levels.reduce<Level | null>((best, l) => best === null || RANK[l] > RANK[best] ? l : best, null)
    }
    const visible = (g: Grant[], row: Row) => {
      const level = access(g, row.ws)
      if (level === null) return false
      const team = teams.find((x) => x.id === row.team)!
      return level === 'admin' || team.visibility === 'organization' || g.some((x) => x.team === row.team)
    }
    const readsProject = (g: Grant[], project: Project) => g.some((x) => x.org === project.org && (x.owner || x.manageProjects || x.readProjects)) ||
      [...projectRows.values()].some((x) => x.project === project.id && g.some((y) => y.team === x.team))

    for (const c of commands) {
      steps++
      const p = principals[c.principal % principals.length]!
      const headers = { 'content-type': 'application/vnd.api+json', authorization: `Bearer ${p.token}` }
      const g = p.grants
      const ws = workspaces[c.a % workspaces.length]!
      const project = projects[c.b % projects.length]!
      let expected: { status: number, ids?: string[], access?: string | null }
      let actual: { status: number, ids?: string[], access?: string | null }
      const statusOf = async (request: Record<string, unknown>) => {
        const res = await app.inject(request as never)
        return { res, status: res.statusCode }
      }
      switch (c.op) {
        case 'readWorkspace': {
          expected = { status: access(g, ws.id) === null ? 404 : 200 }
          actual = { status: (await statusOf({ url: `/api/v2/workspaces/${ws.id}`, headers })).status }
          break
        }
        case 'listRows': {
          expected = access(g, ws.id) === null ? { status: 404 } : { status: 200, ids: [...rows].filter(([, x]) => x.ws === ws.id && visible(g, x)).map(([id]) => id).sort() }
          const { res, status } = await statusOf({ url: `/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=${ws.id}`, headers })
          actual = status === 200 ? { status, ids: res.json().data.map((x: { id: string }) => x.id).sort() } : { status }
          break
        }
        case 'addRow': {
          const team = teams[c.b % teams.length]!
          const body = { data: { type: 'team-workspaces', attributes: { access: c.access }, relationships: { team: { data: { type: 'teams', id: team.id } }, workspace: { data: { type: 'workspaces', id: ws.id } } } } }
          expected = access(g, ws.id) !== 'admin' || team.org !== ws.org
            ? { status: 404 }
            : [...rows.values()].some((x) => x.team === team.id && x.ws === ws.id) ? { status: 422 } : { status: 200 }
          const { res, status } = await statusOf({ method: 'POST', url: '/api/v2/team-workspaces', headers, payload: JSON.stringify(body) })
          actual = { status }
          if (status === 200) rows.set(res.json().data.id, { team: team.id, ws: ws.id, access: c.access })
          break
        }
        case 'showProject': {
          expected = { status: readsProject(g, project) ? 200 : 404 }
          actual = { status: (await statusOf({ url: `/api/v2/projects/${project.id}`, headers })).status }
          break
        }
        case 'listProjects': {
          const org = c.b % ORGS
          expected = !g.some((x) => x.org === org) ? { status: 404 } : { status: 200, ids: projects.filter((x) => x.org === org && readsProject(g, x)).map((x) => x.id).sort() }
          const { res, status } = await statusOf({ url: `/api/v2/organizations/${r}-o${org}/projects?page%5Bsize%5D=100`, headers })
          actual = status === 200 ? { status, ids: res.json().data.map((x: { id: string }) => x.id).sort() } : { status }
          break
        }
        case 'giveProjectRow': {
          // the organization's token gives a team access to a project: the world changes
          const team = teams.filter((x) => x.org === project.org)[c.a % teams.filter((x) => x.org === project.org).length]!
          const body = { data: { type: 'team-projects', attributes: { access: c.projectAccess }, relationships: { team: { data: { type: 'teams', id: team.id } }, project: { data: { type: 'projects', id: project.id } } } } }
          expected = { status: [...projectRows.values()].some((x) => x.team === team.id && x.project === project.id) ? 422 : 201 }
          const { res, status } = await statusOf({ method: 'POST', url: '/api/v2/team-projects', headers: { ...headers, authorization: `Bearer ${r}-org-token-${project.org}` }, payload: JSON.stringify(body) })
          actual = { status }
          if (status === 201) projectRows.set(res.json().data.id, { team: team.id, project: project.id, access: c.projectAccess })
          break
        }
        case 'removeProjectRow': {
          const ids = [...projectRows.keys()]
          if (ids.length === 0) continue
          const id = ids[c.a % ids.length]!
          const org = projects.find((x) => x.id === projectRows.get(id)!.project)!.org
          expected = { status: 204 }
          actual = { status: (await statusOf({ method: 'DELETE', url: `/api/v2/team-projects/${id}`, headers: { ...headers, authorization: `Bearer ${r}-org-token-${org}` } })).status }
          if (actual.status === 204) projectRows.delete(id)
          break
        }
        case 'moveWorkspace': {
          // the host moves a workspace to a project of its organization
          const target = projects.filter((x) => x.org === ws.org)[c.b % projects.filter((x) => x.org === ws.org).length]!
          await app.teamAccess.directory.changeWorkspace(ws.id, { projectId: target.id })
          placedIn.set(ws.id, target.id)
          expected = { status: 200, access: access(g, ws.id) }
          actual = { status: 200, access: (await app.teamAccess.effectiveAccess({ caller: p.caller, workspaceId: ws.id })).access }
          break
        }
        case 'createProject': {
          // the organization's token makes a project (the API's: deletable through the API, where the seed's are not)
          const org = c.b % ORGS
          const { res, status } = await statusOf({ method: 'POST', url: `/api/v2/organizations/${r}-o${org}/projects`, headers: { ...headers, authorization: `Bearer ${r}-org-token-${org}` }, payload: JSON.stringify({ data: { type: 'projects', attributes: { name: `made ${steps}` } } }) })
          expected = { status: 201 }
          actual = { status }
          if (status === 201) projects.push({ id: res.json().data.id, name: `made ${steps}`, org, isDefault: false, seeded: false })
          break
        }
        case 'deleteProject': {
          // the default project, one that holds a workspace and one the seed manages are refused
          const holds = [...placedIn.values()].includes(project.id)
          expected = { status: project.isDefault || holds || project.seeded ? 422 : 204 }
          actual = { status: (await statusOf({ method: 'DELETE', url: `/api/v2/projects/${project.id}`, headers: { ...headers, authorization: `Bearer ${r}-org-token-${project.org}` } })).status }
          if (actual.status === 204) {
            projects.splice(projects.indexOf(project), 1)
            for (const [id, x] of projectRows) if (x.project === project.id) projectRows.delete(id)
          }
          break
        }
        case 'hostCheck': {
          expected = { status: 200, access: access(g, ws.id) }
          actual = { status: 200, access: (await app.teamAccess.effectiveAccess({ caller: p.caller, workspaceId: ws.id })).access }
          break
        }
      }
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        disagreements.push(`${r}: ${p.name} ${c.op} ${ws.id} ${project.id}: model ${JSON.stringify(expected)}, service ${JSON.stringify(actual)}`)
        return false
      }
    }

    // the host's check after the run, for every caller on every workspace, one at a time and all at once
    const workspaceIds = [...workspaces.map((w) => w.id), `ws-${r}-missing`]
    for (const { name, caller, grants } of principals) {
      const many = await app.teamAccess.effectiveAccessMany({ caller, workspaceIds })
      for (const wsId of workspaceIds) {
        const expected = access(grants, wsId)
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
  t.ok(steps >= 600 || RUNS < 20, `${steps} steps`)
  await recordFigure(`model-based effective access through projects (${ENGINE})`, `${steps} steps over ${run} random worlds, ${disagreements.length} disagreements`, '0 disagreements')
})
