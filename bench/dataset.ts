/**
 * The benchmark's world, in the seed format: 10,500 teams, 2,000 users with 6,000 memberships,
 * 203 workspaces and 21,000 team-workspace rows — one workspace with 10,000, one with 1,000,
 * 200 with 50 — plus an empty workspace for the add/remove cycle.
 */
export const TEAMS = 10_500
export const USERS = 2_000
export const HUGE = 10_000
export const MID = 1_000
export const SMALL_WORKSPACES = 200
export const SMALL = 50

export const ORG_TOKEN = 'bench-organization-token'
export const userToken = (i: number) => `bench-user-${i}-token`

const LEVELS = ['read', 'plan', 'write', 'custom'] as const

export function dataset () {
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
    ...Array.from({ length: SMALL_WORKSPACES }, (_, k) => ({ id: `ws-small-${k}`, name: `small${k}` }))
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
  return { users, organizations: [{ id: 'org-bench', name: 'bench', tokens: [ORG_TOKEN], teams, workspaces, 'team-access': access }] }
}
