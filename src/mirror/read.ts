import type { MirrorMembership, MirrorProject, MirrorSnapshot, MirrorTeam, MirrorTeamProject, MirrorTeamWorkspace, MirrorUser, MirrorWorkspace } from '../directory/mirror-snapshot.js'
import { HcpClient, MirrorError, type Asked, type ClientOptions } from './client.js'
import { decodeMembership, decodeTeam, decodeTeamProject, decodeTeamWorkspace, Notes, relatedId, text, type Resource } from './decode.js'
import type { ReadProgress } from './progress.js'

/**
 * An HCP Terraform organization read whole (DESIGN §13.2): the organization, its projects,
 * workspaces, teams with their members (`include=users`), organization memberships
 * (`include=user`), and the team access of every workspace and every project — every list to its
 * last page, a page at a time, keeping only what the snapshot holds. The token must read the whole
 * organization (the organization's `can-update`, an owner's): HCP Terraform leaves out silently
 * what a lesser token may not see, and a partial read must never look like a clean organization,
 * so anything less stops the run before it reads on.
 */
export interface ReadOptions extends ClientOptions {
  organization: string
  onProgress?: (progress: ReadProgress) => void
}

/** A list's page as the mirror reads it: its resources, the included ones, and what `meta.pagination` says. */
interface Page { data: Resource[], included: Resource[], next: number | undefined, total: number | undefined }

const PAGE_SIZE = 100
/** The name HCP Terraform gives an organization's first project; the default one where the organization names none (an older Terraform Enterprise). */
const DEFAULT_PROJECT = 'Default Project'
const TOKEN_ADVICE = 'use an owners team token, an owner\'s user token or the organization token'

export async function readOrganization (options: ReadOptions): Promise<MirrorSnapshot> {
  const client = new HcpClient(options)
  const notes = new Notes()
  const name = options.organization
  const org = encodeURIComponent(name)
  const say = (reading: string, done?: number, total?: number) => options.onProgress?.({
    reading, requests: client.requests, rate: client.rate(), ...(done === undefined ? {} : { done }), ...(total === undefined ? {} : { total })
  })

  say('the organization')
  const asked = { what: `organization "${name}"`, refused: 'no such organization, or the token may not read it' }
  const organization = single(await client.get(`organizations/${org}`, asked), asked.what)
  if (organization.attributes?.permissions?.['can-update'] !== true) {
    throw new MirrorError(`organization "${name}": this token does not read the whole organization (its permissions there lack can-update, an owner's), and HCP Terraform would leave out what it may not see — nothing was read further: ${TOKEN_ADVICE}`)
  }

  /** Every page of a list, one at a time, each handed to `take` as it comes: nothing kept but what it keeps. */
  const list = async (path: string, asked: Asked, take: (page: Page) => void, progress?: string): Promise<void> => {
    let done = 0
    for (let page = 1; ;) {
      const separator = path.includes('?') ? '&' : '?'
      const read = listPage(await client.get(`${path}${separator}page%5Bnumber%5D=${page}&page%5Bsize%5D=${PAGE_SIZE}`, asked), asked.what, notes)
      take(read)
      done += read.data.length
      if (progress !== undefined) say(progress, done, read.total)
      if (read.next === undefined || read.next <= page) return
      page = read.next
    }
  }

  const users = new Map<string, MirrorUser>()
  const serviceAccounts = new Set<string>()
  const meet = (user: Resource, email: string | null = null) => {
    if (user.type !== 'users') return
    if (user.attributes?.['is-service-account'] === true) { serviceAccounts.add(user.id); return }
    const known = users.get(user.id)
    const username = text(user.attributes?.username)
    users.set(user.id, {
      id: user.id,
      username: username !== null && username !== '' ? username : known?.username ?? null,
      email: email ?? text(user.attributes?.email) ?? known?.email ?? null
    })
  }

  const projects: MirrorProject[] = []
  const workspaces: MirrorWorkspace[] = []
  const teams: MirrorTeam[] = []
  const memberships: MirrorMembership[] = []
  await Promise.all([
    list(`organizations/${org}/projects`, { what: `the projects of "${name}"` }, ({ data }) => {
      for (const p of data) projects.push({ id: p.id, name: String(p.attributes?.name ?? p.id), description: text(p.attributes?.description), isDefault: false })
    }, 'projects'),
    list(`organizations/${org}/workspaces`, { what: `the workspaces of "${name}"` }, ({ data }) => {
      for (const w of data) workspaces.push({ id: w.id, name: String(w.attributes?.name ?? w.id), projectId: relatedId(w, 'project') ?? '', description: text(w.attributes?.description) })
    }, 'workspaces'),
    list(`organizations/${org}/teams?include=users`, { what: `the teams of "${name}"`, refused: 'the token may not list its teams, secret ones included' }, ({ data, included }) => {
      for (const user of included) meet(user)
      for (const team of data) teams.push(decodeTeam(team, notes))
    }, 'teams'),
    list(`organizations/${org}/organization-memberships?include=user`, { what: `the organization memberships of "${name}"`, refused: 'the token may not list its members and their emails' }, ({ data, included }) => {
      const byId = new Map(included.map((r) => [r.id, r]))
      for (const m of data) {
        const membership = decodeMembership(m, notes)
        if (membership === undefined) continue
        meet(byId.get(membership.userId) ?? { id: membership.userId, type: 'users' }, text(m.attributes?.email))
        memberships.push(membership)
      }
    }, 'organization memberships')
  ])

  // the default project: the organization's relationship; on an older Terraform Enterprise, the one named so
  const defaultProjectId = relatedId(organization, 'default-project')
  const defaultProject = projects.find((p) => p.id === defaultProjectId) ?? projects.find((p) => p.name === DEFAULT_PROJECT)
  if (defaultProject === undefined) throw new MirrorError(`organization "${name}": no default project among its ${projects.length} projects`)
  defaultProject.isDefault = true
  const consistent = new Consistency(notes)
  for (const w of workspaces) if (w.projectId === '') w.projectId = defaultProject.id
  const placed = consistent.keep(workspaces, 'workspace', (w) => projects.some((p) => p.id === w.projectId))

  const accounts = serviceAccounts.size
  if (accounts > 0) notes.add(`${accounts} HashiCorp API service account${accounts === 1 ? '' : 's'} (the users of team tokens) left out of the teams' members: tokens here are this service's own`)
  const userIds = new Set(users.keys())
  for (const team of teams) {
    team.userIds = team.userIds.filter((id) => !serviceAccounts.has(id))
    team.userIds = consistent.keep(team.userIds, `member of team "${team.name}"`, (id) => userIds.has(id))
  }
  const teamIds = new Set(teams.map((t) => t.id))
  for (const m of memberships) m.teamIds = consistent.keep(m.teamIds, 'team of an invitation', (id) => teamIds.has(id))

  // the team access of every workspace and project, as many lists at once as requests may be in flight
  const teamWorkspaces: MirrorTeamWorkspace[] = []
  const teamProjects: MirrorTeamProject[] = []
  const targets = [...placed.map((w) => ({ kind: 'workspace' as const, id: w.id })), ...projects.map((p) => ({ kind: 'project' as const, id: p.id }))]
  let [next, done] = [0, 0]
  say('team access of workspaces and projects', 0, targets.length)
  const work = async (): Promise<void> => {
    for (let target = targets[next++]; target !== undefined; target = targets[next++]) {
      const id = encodeURIComponent(target.id)
      if (target.kind === 'workspace') {
        await list(`team-workspaces?filter%5Bworkspace%5D%5Bid%5D=${id}`, { what: `the team access of workspace ${target.id}` }, ({ data }) => {
          for (const row of data) {
            const decoded = decodeTeamWorkspace(row, notes)
            if (decoded !== undefined) teamWorkspaces.push(decoded)
          }
        })
      } else {
        await list(`team-projects?filter%5Bproject%5D%5Bid%5D=${id}`, { what: `the team access of project ${target.id}` }, ({ data }) => {
          for (const row of data) {
            const decoded = decodeTeamProject(row, notes)
            if (decoded !== undefined) teamProjects.push(decoded)
          }
        })
      }
      say('team access of workspaces and projects', ++done, targets.length)
    }
  }
  await Promise.all(Array.from({ length: options.inFlight ?? 4 }, work))
  const workspaceIds = new Set(placed.map((w) => w.id))
  const projectIds = new Set(projects.map((p) => p.id))
  const byId = (a: { id: string }, b: { id: string }) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0

  return {
    host: client.host,
    organization: {
      name: String(organization.attributes?.name ?? organization.id),
      ...(typeof organization.attributes?.['external-id'] === 'string' ? { externalId: organization.attributes['external-id'] } : {}),
      defaultProjectId: defaultProject.id
    },
    users: [...users.values()].sort(byId),
    teams,
    memberships,
    projects,
    workspaces: placed,
    teamWorkspaces: consistent.keep(teamWorkspaces, 'team access row', (r) => teamIds.has(r.teamId) && workspaceIds.has(r.workspaceId)).sort(byId),
    teamProjects: consistent.keep(teamProjects, 'project team access row', (r) => teamIds.has(r.teamId) && projectIds.has(r.projectId)).sort(byId),
    notes: notes.all(),
    requests: client.requests
  }
}

/**
 * What changed in HCP Terraform while it was read — a workspace in a project made after the
 * projects were listed, a team access row of a team made after the teams were — left out and said
 * once, so that the snapshot is whole in itself; the next run reads it.
 */
class Consistency {
  constructor (private readonly notes: Notes) {}
  keep<T> (items: T[], what: string, known: (item: T) => boolean): T[] {
    const kept = items.filter(known)
    const left = items.length - kept.length
    if (left > 0) this.notes.add(`changed while it was read: ${left} ${what}${left === 1 ? '' : 's'} naming what the other lists did not hold, left out (the next run reads ${left === 1 ? 'it' : 'them'})`)
    return kept
  }
}

/** A single resource's document (`data` an object with an id), or a MirrorError naming it. */
function single (document: unknown, what: string): Resource {
  const data = (document as { data?: unknown } | null)?.data
  if (!isResource(data)) throw new MirrorError(`${what}: not a JSON:API document of one resource — is the address an HCP Terraform API?`)
  return data
}

/** A list's page (`data` an array of resources), or a MirrorError naming it; resources without an id are left out, said once. */
function listPage (document: unknown, what: string, notes: Notes): Page {
  const doc = document as { data?: unknown, included?: unknown, meta?: { pagination?: Record<string, unknown> } } | null
  if (!Array.isArray(doc?.data)) throw new MirrorError(`${what}: not a JSON:API list (no data array) — is the address an HCP Terraform API?`)
  const data = doc.data.filter(isResource)
  if (data.length < doc.data.length) notes.add(`${what}: a resource with no id, left out`)
  const pagination = doc.meta?.pagination
  const number = (value: unknown) => typeof value === 'number' && Number.isInteger(value) ? value : undefined
  return { data, included: Array.isArray(doc.included) ? doc.included.filter(isResource) : [], next: number(pagination?.['next-page']), total: number(pagination?.['total-count']) }
}

const isResource = (value: unknown): value is Resource =>
  typeof value === 'object' && value !== null && typeof (value as Resource).id === 'string' && (value as Resource).id !== '' && typeof (value as Resource).type === 'string'
