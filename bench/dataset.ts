/**
 * The benchmark's world, in the seed format: 10,500 teams, 2,000 users with 6,000 memberships,
 * 204 workspaces and 21,000 team-workspace rows — one workspace with 10,000, one with 1,000,
 * 200 with 50 — plus an empty workspace for the add/remove cycle and the workspace `large`;
 * 10 projects holding the workspaces, with 1,002 team-project rows (BENCH_PROJECTS=0 leaves the
 * projects out, to compare a world without them); and the workspace `large`,
 * which the seed leaves empty: `largeWorkspaceSql` fills it on PostgreSQL with 100,000 rows
 * (89,500 more teams), by INSERT … SELECT generate_series after the seed. A 100,000-row seed
 * file goes through the seed writer entry by entry and would take minutes; the bulk statements
 * take seconds and fire the same triggers (row visibility, row counts) as any other insert.
 */
export const TEAMS = 10_500
export const USERS = 2_000
export const HUGE = 10_000
export const MID = 1_000
export const LARGE = 100_000
export const SMALL_WORKSPACES = 200
export const SMALL = 50

export const ORGANIZATION = { id: 'org-bench', name: 'bench' }
export const ORG_TOKEN = 'bench-organization-token'
export const userToken = (i: number) => `bench-user-${i}-token`

const LEVELS = ['read', 'plan', 'write', 'custom'] as const
const PROJECT_LEVELS = ['read', 'write', 'maintain', 'admin', 'custom'] as const
/** Projects in the world: 10, or none with BENCH_PROJECTS=0 (a world without them, to compare). */
export const PROJECTS = process.env.BENCH_PROJECTS === '0' ? 0 : 10
/** The project of workspace `name` among `projects`: the four big ones in project0, small workspace k in 1 + k mod (projects - 1). */
const projectOf = (name: string, projects: number): string | undefined => {
  if (projects === 0) return undefined
  const small = /^small(\d+)$/.exec(name)
  return small === null ? 'project0' : `project${1 + Number(small[1]) % (projects - 1)}`
}

/** The world, with `projects` projects (0: none, no project rows). */
export function dataset (projects = PROJECTS) {
  const users = Array.from({ length: USERS }, (_, i) => ({ id: `user-${i}`, username: `user${i}`, tokens: [userToken(i)] }))
  // user i belongs to teams i, i + 2000 and i + 4000; every fifth team is secret
  const members = new Map<number, string[]>()
  for (let i = 0; i < USERS; i++) for (const team of [i, i + 2000, i + 4000]) members.set(team, [`user${i}`])
  const teams = Array.from({ length: TEAMS }, (_, i) => ({
    id: `team-${i}`,
    name: `team${i}`,
    visibility: i % 5 === 4 ? 'secret' as const : 'organization' as const,
    ...(members.has(i) ? { members: members.get(i)! } : {})
  }))
  const workspaces = [
    { id: 'ws-huge', name: 'huge' },
    { id: 'ws-mid', name: 'mid' },
    { id: 'ws-add', name: 'add' },
    { id: 'ws-large', name: 'large' },
    ...Array.from({ length: SMALL_WORKSPACES }, (_, k) => ({ id: `ws-small-${k}`, name: `small${k}` }))
  ].map((workspace) => {
    const project = projectOf(workspace.name, projects)
    return { ...workspace, ...(project === undefined ? {} : { project }) }
  })
  const projectList = Array.from({ length: projects }, (_, p) => ({ id: `prj-bench-${p}`, name: `project${p}` }))
  // teams 1000 … 1999 on the projects in turn, every level; the member's (user 7's) teams 2007 (write
  // on project1, where ws-small-0 is) and 4007 (read on project0, where ws-huge is)
  const projectAccess = projects === 0
    ? []
    : [
        ...Array.from({ length: 1000 }, (_, i) => {
          const access = PROJECT_LEVELS[i % PROJECT_LEVELS.length]!
          return { id: `tprj-b-${i}`, team: `team${1000 + i}`, project: `project${i % projects}`, access, ...(access === 'custom' ? { 'workspace-access': { runs: 'plan' as const } } : {}) }
        }),
        { id: 'tprj-member-1', team: 'team2007', project: 'project1', access: 'write' as const },
        { id: 'tprj-member-0', team: 'team4007', project: 'project0', access: 'read' as const }
      ]
  const row = (id: string, team: number, workspace: string, i: number) => {
    const access = LEVELS[i % LEVELS.length]!
    return { id, team: `team${team}`, workspace, access, ...(access === 'custom' ? { runs: 'plan' as const, variables: 'read' as const } : {}) }
  }
  const access = [
    ...Array.from({ length: HUGE }, (_, i) => row(`tws-h-${i}`, i, 'huge', i)),
    ...Array.from({ length: MID }, (_, i) => row(`tws-m-${i}`, i, 'mid', i)),
    ...Array.from({ length: SMALL_WORKSPACES * SMALL }, (_, i) => {
      const k = Math.floor(i / SMALL)
      return row(`tws-s${k}-${i % SMALL}`, i, `small${k}`, i + 3) // +3: the first row of each small workspace is custom
    })
  ]
  return {
    users,
    organizations: [{
      id: ORGANIZATION.id,
      name: ORGANIZATION.name,
      tokens: [ORG_TOKEN],
      teams,
      workspaces,
      'team-access': access,
      ...(projects === 0 ? {} : { projects: projectList, 'project-access': projectAccess })
    }]
  }
}

/**
 * The 100,000 rows of workspace `large`, run on PostgreSQL after the seed, each statement on its
 * own (autocommit): teams team-10500 … team-99999 (every fifth secret, as in the seed), then one
 * row per team 0 … 99,999, in team order, each a copy of the permissions of row
 * `tws-h-(i mod 10,000)` of the seed (the same level cycle read, plan, write, custom), then
 * VACUUM ANALYZE so that every run starts from the same settled tables rather than from wherever
 * autovacuum has got to.
 *
 * The rows go in 1,000 per statement: every row's trigger updates the workspace's one row count,
 * and 100,000 updates of one row in one transaction cost time quadratic in their number (each
 * walks the versions the transaction left before it) — minutes instead of seconds. Only columns
 * of the first migration are named, so that an older checkout's schema (BENCH_BASELINE) takes
 * them too; later columns take their defaults and triggers. Idempotent: a second run adds nothing.
 */
export function largeWorkspaceSql (): string[] {
  const CHUNK = 1_000
  const rows = Array.from({ length: LARGE / CHUNK }, (_, c) => `
    insert into team_workspaces (id, organization_id, team_id, workspace_id, access, runs, variables, state_versions, sentinel_mocks, workspace_locking, run_tasks)
    select 'tws-l-' || i, h.organization_id, 'team-' || i, 'ws-large', h.access, h.runs, h.variables, h.state_versions, h.sentinel_mocks, h.workspace_locking, h.run_tasks
    from generate_series(${c * CHUNK}, ${(c + 1) * CHUNK - 1}) as i
    join team_workspaces h on h.id = 'tws-h-' || (i % ${HUGE})
    order by i
    on conflict do nothing`)
  return [
    `insert into teams (id, organization_id, name, visibility)
     select 'team-' || i, '${ORGANIZATION.id}', 'team' || i, case when i % 5 = 4 then 'secret' else 'organization' end
     from generate_series(${TEAMS}, ${LARGE - 1}) as i
     on conflict do nothing`,
    ...rows,
    'vacuum analyze',
    // the dirty pages written now, not by the checkpointer during the first measured row (whose
    // PostgreSQL CPU per request would carry them)
    'checkpoint'
  ]
}

/**
 * The part of the dataset the host's check path reads (bench/host-check.ts), for PGlite in
 * process, where the whole dataset takes about two minutes to seed: the first 50 small
 * workspaces, their 2,500 rows, the teams those rows name (team-0 … team-2499) with their
 * members, and the users. User 7 is in teams 7, 2007 and 4007 of the whole; team 7's row on
 * ws-small-0 is here, as in the whole.
 */
export function hostCheckDataset (workspaces = 50, projects = PROJECTS) {
  const whole = dataset(projects)
  const [organization] = whole.organizations
  const names = new Set(Array.from({ length: workspaces }, (_, k) => `small${k}`))
  const access = organization!['team-access'].filter((row) => names.has(row.workspace))
  const teams = new Set(access.map((row) => row.team))
  return {
    users: whole.users,
    organizations: [{
      ...organization!,
      teams: organization!.teams.filter((team) => teams.has(team.name)),
      workspaces: organization!.workspaces.filter((workspace) => names.has(workspace.name)),
      'team-access': access,
      ...(organization!['project-access'] === undefined ? {} : { 'project-access': organization!['project-access'].filter((row) => teams.has(row.team)) })
    }]
  }
}
