import type { SeedDocument } from '../src/index.js'

/**
 * A random organization for the access review's page (DESIGN §12.2), as a seed document: the
 * owners team, teams of each visibility with members, organization access flags on a few,
 * projects holding the workspaces (some stay in the default project), team-access rows of every
 * level and team-project rows. The same `seed` gives the same world. Used by the page's browser
 * test (a small world) and its bench (200 teams × 500 workspaces).
 */
export interface ReviewWorld {
  document: SeedDocument
  organization: string
  tokens: { owner: string, organization: string, member: string }
  member: string
}

/**
 * `memberTeams`: how many teams the member (user001) is in — the first ones, team-001 on (2 unless
 * said; the page's rate-limit test makes a member of 40).
 */
export function reviewWorld ({ teams, workspaces, projects, users, rowsPerTeam, seed, memberTeams = 2 }: { teams: number, workspaces: number, projects: number, users: number, rowsPerTeam: number, seed: number, memberTeams?: number }): ReviewWorld {
  const random = mulberry32(seed)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
  const sample = <T>(items: readonly T[], n: number): T[] => {
    const copy = [...items]
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [copy[i], copy[j]] = [copy[j]!, copy[i]!]
    }
    return copy.slice(0, n)
  }
  const pad = (n: number) => String(n).padStart(3, '0')

  const usernames = Array.from({ length: users }, (_, i) => `user${pad(i)}`)
  const projectNames = Array.from({ length: projects }, (_, i) => `project-${pad(i)}`)
  const workspaceList = Array.from({ length: workspaces }, (_, i) => ({
    id: `ws-review-${pad(i)}`,
    name: `workspace-${pad(i)}`,
    // one in five stays in the default project
    ...(projects === 0 || random() < 0.2 ? {} : { project: pick(projectNames) })
  }))
  // user000 is the owner; user001 the member whose reach the page shows: teams of their own (memberTeams)
  const teamList = [{ id: 'team-review-owners', name: 'owners', owners: true, members: [usernames[0]!] }]
  for (let i = 1; i < teams; i++) {
    const flags = i % 37 === 11 ? { 'read-workspaces': true } : i % 53 === 13 ? { 'manage-workspaces': true } : i % 41 === 17 ? { 'read-workspaces': true, 'read-projects': true } : undefined
    const members = new Set(sample(usernames.slice(2), Math.floor(random() * 5)))
    if (i <= memberTeams) members.add(usernames[1]!)
    teamList.push({
      id: `team-review-${pad(i)}`,
      name: `team-${pad(i)}`,
      ...(i % 4 === 0 ? { visibility: 'secret' } : { visibility: 'organization' }),
      ...(flags === undefined ? {} : { 'organization-access': flags }),
      members: [...members].sort()
    } as any)
  }
  const levels = ['read', 'plan', 'write', 'admin', 'custom'] as const
  const teamAccess = teamList.slice(1).flatMap((team) => sample(workspaceList, rowsPerTeam).map((workspace) => {
    const access = pick(levels)
    return {
      id: `tws-${team.id.slice('team-'.length)}-${workspace.id.slice('ws-'.length)}`,
      team: team.name,
      workspace: workspace.name,
      access,
      ...(access === 'custom' ? { runs: pick(['read', 'plan', 'apply'] as const), variables: pick(['none', 'read', 'write'] as const), 'workspace-locking': random() < 0.5 } : {})
    }
  }))
  const projectAccess = projects === 0
    ? []
    : teamList.slice(1).filter((_, i) => i % 7 === 2).map((team) => {
      const project = pick(projectNames)
      return { id: `tprj-${team.id.slice('team-'.length)}`, team: team.name, project, access: pick(['read', 'write', 'maintain', 'admin'] as const) }
    })

  const organization = 'review'
  const tokens = { owner: 'review-owner-token', organization: 'review-organization-token', member: 'review-member-token' }
  const document = {
    users: usernames.map((username, i) => ({
      id: `user-review-${pad(i)}`,
      username,
      ...(i === 0 ? { tokens: [tokens.owner] } : i === 1 ? { tokens: [tokens.member] } : {})
    })),
    organizations: [{
      id: 'org-review',
      name: organization,
      tokens: [tokens.organization],
      teams: teamList,
      projects: projectNames.map((name, i) => ({ id: `prj-review-${pad(i)}`, name })),
      workspaces: workspaceList,
      'team-access': teamAccess,
      'project-access': projectAccess
    }]
  } as unknown as SeedDocument
  return { document, organization, tokens, member: usernames[1]! }
}

/** A small, fast, seeded PRNG (public domain): the same seed, the same world. */
function mulberry32 (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
