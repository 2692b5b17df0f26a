// What the page shows, as the API answers it to this token (DESIGN §12.2): the organization's
// teams × workspaces, each cell a team's effective access on a workspace; the projects the token
// reads, by name; and who the token is (a user, a team, the organization).
import { ApiError, all, json, org, request, type List, type Resource } from './api.js'
import type { Mirror } from './mirror.js'

export type Level = 'admin' | 'write' | 'plan' | 'read' | 'custom'
export const LETTER: Record<Level, string> = { admin: 'A', write: 'W', plan: 'P', read: 'R', custom: 'C' }

export interface Grant { kind: string, access: string, team: string, 'team-workspace'?: string, 'team-project'?: string, project?: string, 'project-access'?: string }
export interface Cell { access: Level, attributes: Record<string, unknown>, grants: Grant[] }
export interface Team { id: string, name: string, visibility: string, members: string[] }
export interface Workspace { id: string, name: string, project: string }
/** Who the token is: a user's, a team's, or the organization's own. */
export type Identity = { kind: 'user', username: string } | { kind: 'team', team: string } | { kind: 'organization' }
export interface World {
  owner: boolean
  organization: string
  identity: Identity
  teams: Team[]
  workspaces: Workspace[]
  /** The projects this token reads, by id: their names. A workspace's project may be missing here (DESIGN §11.3). */
  projects: Map<string, string>
  cells: Map<string, Map<string, Cell>>
  /** A mirrored organization's origin (DESIGN §13); null for any other. */
  mirror: Mirror | null
}

/** The group of the workspaces whose projects this token does not read: one column group, one filter option. */
export const UNREADABLE = ''

/** The column group a workspace is drawn in: its project, or UNREADABLE. */
export const groupOf = (w: World, ws: Workspace): string => w.projects.has(ws.project) ? ws.project : UNREADABLE

/** A group's name: the project's, or what stands for the projects this token does not read. */
export const groupName = (w: World, group: string): string => group === UNREADABLE ? 'projects you cannot read' : w.projects.get(group) ?? group

/** A project's name in a sentence (a grant's): its name, or that it is one this token does not read. */
export const projectName = (w: World, id: string): string => w.projects.get(id) ?? 'a project you cannot read'

/** The teams of a list with `include=users`: their members by username. */
function teamsOf (list: List): Team[] {
  const usernames = new Map(list.included.filter((r) => r.type === 'users').map((r) => [r.id, String(r.attributes.username)]))
  return list.data.map((t) => ({
    id: t.id,
    name: String(t.attributes.name),
    visibility: String(t.attributes.visibility),
    members: ((t.relationships?.users?.data ?? []) as Array<{ id: string }>).map((u) => usernames.get(u.id) ?? u.id).sort()
  }))
}

function setCell (cells: World['cells'], teamId: string, workspaceId: string, attributes: Record<string, any>): void {
  if (!Object.hasOwn(LETTER, attributes.access)) return // a level this page does not know is not drawn
  let row = cells.get(teamId)
  if (row === undefined) cells.set(teamId, row = new Map())
  row.set(workspaceId, { access: attributes.access as Level, attributes, grants: attributes.grants as Grant[] })
}

/** undefined when the API answers 404 (`what` is not there for this token); any other failure is thrown. */
async function unless404<T> (what: Promise<T>): Promise<T | undefined> {
  try {
    return await what
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return undefined
    throw err
  }
}

/**
 * The world as this token may read it. An owner: the access review (every team's effective
 * access), every team and workspace. Anyone else (the access review answers 404): the teams the
 * token acts through, each team's effective access, and the workspaces the token reads. Every
 * request goes through the scheduler: queued at once, sent at the pace the rate limit allows.
 */
export async function load (organization: string): Promise<World> {
  const cells: World['cells'] = new Map()
  const path = org(organization)
  // the workspaces, projects and account load beside the access review; the teams once it says who is asking
  const others = Promise.all([
    all(`${path}/workspaces`),
    all(`${path}/projects`).catch(() => ({ data: [], included: [] })),
    unless404(json<{ data: Resource }>('/account/details')),
    json<{ data: Resource }>(path)
  ])
  others.catch(() => undefined) // a failure is the review's to report first; it is awaited below
  // no page parameter: every entry in one streamed document; its status says who is asking, and
  // the teams are asked for while its body streams in
  const answer = await unless404(request(`${path}/access-review`))
  const owner = answer !== undefined
  const [teamList, review, [workspaceList, projectList, account, organizationDocument]] = await Promise.all([
    all(`${path}/teams?include=users${owner ? '' : '&filter%5Bown%5D=true'}`),
    answer?.json() as Promise<{ data: Resource[] }> | undefined,
    others
  ])
  const teams = teamsOf(teamList)
  if (review !== undefined) {
    for (const entry of review.data) setCell(cells, entry.relationships!.team.data.id, entry.relationships!.workspace.data.id, entry.attributes)
  } else {
    const reaches = await Promise.all(teams.map(async (team) => await all(`/teams/${encodeURIComponent(team.id)}/effective-access`)))
    teams.forEach((team, i) => {
      for (const entry of reaches[i]!.data) setCell(cells, team.id, entry.relationships!.workspace.data.id, entry.attributes)
    })
  }
  const identity = account !== undefined
    ? { kind: 'user' as const, username: String(account.data.attributes.username) }
    : await tokenOf(path, owner ? undefined : teams)
  const projects = new Map(projectList.data.map((p) => [p.id, String(p.attributes.name)]))
  const workspaces = workspaceList.data.map((w) => ({ id: w.id, name: String(w.attributes.name), project: String(w.relationships?.project?.data?.id ?? '') }))
  const mirrored = organizationDocument.data.attributes.mirror as { host: string, 'succeeded-at': string } | null | undefined
  const mirror = mirrored == null ? null : { host: mirrored.host, succeededAt: mirrored['succeeded-at'] }
  return { owner, organization, identity, teams, workspaces, projects, cells, mirror }
}

/**
 * A token that is no user's (GET /account/details answered 404): a team's, which acts through its
 * one team, or the organization's, which acts through none — as the teams list's `filter[own]=true`
 * answers (`own`: that list, when the page loaded it already).
 */
async function tokenOf (path: string, own: Team[] | undefined): Promise<Identity> {
  const names = own?.map((team) => team.name) ?? (await all(`${path}/teams?filter%5Bown%5D=true`)).data.map((team) => String(team.attributes.name))
  return names.length === 1 ? { kind: 'team', team: names[0]! } : { kind: 'organization' }
}
