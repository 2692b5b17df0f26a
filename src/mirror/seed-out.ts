import type { SeedDocument } from '../../schemas/seed.js'
import type { MirrorSnapshot } from '../directory/mirror-snapshot.js'

/**
 * `team-access mirror --seed-out FILE` (DESIGN §13.1): an organization read from HCP Terraform as a
 * seed document (DESIGN §6), for people moving off it — its users, teams with their
 * organization-access flags, visibility and members, projects, workspaces and their placements,
 * `team-access` and `project-access` entries, HCP Terraform's ids kept where the seed's id shapes
 * (`user-…`, `team-…`, `ws-…`, `prj-…`, `tws-…`, `tprj-…`, `org-…`) take them. No tokens: they
 * cannot be read. What a seed cannot hold is left out and said in the notes (seedOutNotes): an
 * invited person (no username yet), a member in no team, an id of another shape, a renamed
 * default project's place.
 */

/** The name of the project a fresh organization here starts with; a seed takes it over by that name. */
const DEFAULT_PROJECT = 'Default Project'
const EMAIL = /^[^@\s]+@[^@\s]+$/

export function snapshotToSeed (snapshot: MirrorSnapshot): SeedDocument {
  return seedOf(snapshot).document
}

/** What a seed of this snapshot leaves out, in words (said by the command beside the file). */
export function seedOutNotes (snapshot: MirrorSnapshot): string[] {
  return seedOf(snapshot).notes
}

function seedOf (snapshot: MirrorSnapshot): { document: SeedDocument, notes: string[] } {
  const dropped = new Map<string, number>()
  /** `{ id }` when HCP Terraform's id fits the seed's shape for `prefix` (idOf in schemas/common.ts); else nothing, counted. */
  const idIf = (prefix: string, id: string | undefined): { id?: string } => {
    if (id === undefined) return {}
    if (new RegExp(`^${prefix}-[A-Za-z0-9_-]+$`).test(id) && id.length <= 64) return { id }
    dropped.set(prefix, (dropped.get(prefix) ?? 0) + 1)
    return {}
  }
  const people = snapshot.users.filter((u) => u.username !== null)
  const usernames = new Map(people.map((u) => [u.id, u.username!]))
  const teamNames = new Map(snapshot.teams.map((t) => [t.id, t.name]))
  const workspaceNames = new Map(snapshot.workspaces.map((w) => [w.id, w.name]))
  const projects = new Map(snapshot.projects.map((p) => [p.id, p]))
  const defaultProject = snapshot.projects.find((p) => p.isDefault)
  // the default project is the fresh organization's "Default Project": declared by that name, it is taken over
  const takenOver = (id: string) => projects.get(id)?.isDefault === true && projects.get(id)?.name === DEFAULT_PROJECT

  const badEmails = people.filter((u) => u.email !== null && !EMAIL.test(u.email)).length
  const document: SeedDocument = {
    users: people.map((u) => ({
      ...idIf('user', u.id),
      username: u.username!,
      ...(u.email === null || !EMAIL.test(u.email) ? {} : { email: u.email })
    })),
    organizations: [{
      ...idIf('org', snapshot.organization.externalId),
      name: snapshot.organization.name,
      teams: snapshot.teams.map((team) => {
        const flags = Object.fromEntries(Object.entries(team.organizationAccess).filter(([, on]) => on === true))
        return {
          ...idIf('team', team.id),
          name: team.name,
          visibility: team.visibility,
          ...(team.isOwners ? { owners: true } : {}),
          ...(Object.keys(flags).length === 0 ? {} : { 'organization-access': flags }),
          members: team.userIds.flatMap((id) => usernames.has(id) ? [usernames.get(id)!] : [])
        }
      }),
      projects: snapshot.projects.filter((p) => !takenOver(p.id)).map((p) => ({
        ...(p.isDefault ? {} : idIf('prj', p.id)),
        name: p.name,
        ...(p.description === null || p.description === '' ? {} : { description: p.description })
      })),
      workspaces: snapshot.workspaces.map((w) => ({
        ...idIf('ws', w.id),
        name: w.name,
        ...(takenOver(w.projectId) || !projects.has(w.projectId) ? {} : { project: projects.get(w.projectId)!.name })
      })),
      'team-access': snapshot.teamWorkspaces.flatMap((row) => {
        const [team, workspace] = [teamNames.get(row.teamId), workspaceNames.get(row.workspaceId)]
        if (team === undefined || workspace === undefined) return []
        return [{
          ...idIf('tws', row.id),
          team,
          workspace,
          access: row.access,
          ...(row.access === 'custom'
            ? {
                runs: row.runs,
                variables: row.variables,
                'state-versions': row.stateVersions,
                'sentinel-mocks': row.sentinelMocks,
                'workspace-locking': row.workspaceLocking,
                'run-tasks': row.runTasks,
                ...(row.policyOverrides === true ? { 'policy-overrides': true } : {})
              }
            : {})
        }]
      }),
      'project-access': snapshot.teamProjects.flatMap((row) => {
        const [team, project] = [teamNames.get(row.teamId), projects.get(row.projectId)?.name]
        if (team === undefined || project === undefined) return []
        const w = row.workspaceAccess
        return [{
          ...idIf('tprj', row.id),
          team,
          project,
          access: row.access,
          ...(row.access === 'custom'
            ? {
                'project-access': { settings: row.projectAccess.settings, teams: row.projectAccess.teams, 'variable-sets': row.projectAccess.variableSets },
                'workspace-access': { runs: w.runs, variables: w.variables, 'state-versions': w.stateVersions, 'sentinel-mocks': w.sentinelMocks, create: w.create, locking: w.locking, delete: w.delete, move: w.move, 'run-tasks': w.runTasks }
              }
            : {})
        }]
      })
    }]
  }

  const notes: string[] = []
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`
  const invited = snapshot.users.length - people.length
  if (invited > 0) notes.push(`${count(invited, 'invited person', 'invited people')} left out: a seed holds people with usernames (invite them again where you move to)`)
  const inTeams = new Set(snapshot.teams.flatMap((t) => t.userIds))
  const teamless = snapshot.memberships.filter((m) => m.status === 'active' && usernames.has(m.userId) && !inTeams.has(m.userId)).length
  if (teamless > 0) notes.push(`${count(teamless, 'member', 'members')} in no team: a seed's user, but no member of the organization (a seed makes members by teams)`)
  if (badEmails > 0) notes.push(`${count(badEmails, 'email', 'emails')} of no address's shape left out`)
  if (defaultProject !== undefined && defaultProject.name !== DEFAULT_PROJECT) {
    notes.push(`the default project "${defaultProject.name}" is declared as a project of its own: a seed's organization keeps its own "${DEFAULT_PROJECT}" as the default (where a workspace with no project goes)`)
  }
  for (const [prefix, n] of dropped) notes.push(`${count(n, 'id', 'ids')} of HCP Terraform not of the seed's shape ${prefix}-… (letters, digits, - and _, at most 64) left out: generated where the seed is applied`)
  return { document, notes }
}
