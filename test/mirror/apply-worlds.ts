import { IMPLICIT_PERMISSIONS } from '../../src/access/permissions.js'
import { IMPLIED_PROJECT_PERMISSIONS } from '../../src/access/project-permissions.js'
import { ORGANIZATION_ACCESS_FLAGS } from '../../src/access/organization-access.js'
import type { MirrorSnapshot, MirrorTeamProject, MirrorTeamWorkspace } from '../../src/directory/mirror-snapshot.js'

/**
 * Snapshots for the mirror's apply tests (test/mirror/apply.test.ts), built in code as the reader
 * would return them: a small organization, a random one with every level, custom permissions,
 * organization-access flags, project grants and invitations — and the seed document of the same
 * world (ids kept), whose access review the mirror's must equal.
 */

export const HOST = 'app.terraform.io'

type Level = MirrorTeamWorkspace['access']
type ProjectLevel = MirrorTeamProject['access']

/** A team-workspace row of a fixed level: its permissions as the level implies them (HCP Terraform answers them so). */
export function grant (id: string, teamId: string, workspaceId: string, access: Exclude<Level, 'custom'>): MirrorTeamWorkspace {
  const p = IMPLICIT_PERMISSIONS[access]
  return {
    id,
    teamId,
    workspaceId,
    access,
    runs: p.runs,
    variables: p.variables,
    stateVersions: p['state-versions'],
    sentinelMocks: p['sentinel-mocks'],
    workspaceLocking: p['workspace-locking'],
    runTasks: p['run-tasks']
  }
}

/** A team-project row of a level: its permissions as the level implies them. */
export function projectGrant (id: string, teamId: string, projectId: string, access: ProjectLevel): MirrorTeamProject {
  const p = IMPLIED_PROJECT_PERMISSIONS[access]
  const w = p['workspace-access']
  return {
    id,
    teamId,
    projectId,
    access,
    projectAccess: { settings: p['project-access'].settings, teams: p['project-access'].teams, variableSets: p['project-access']['variable-sets'] },
    workspaceAccess: { runs: w.runs, variables: w.variables, stateVersions: w['state-versions'], sentinelMocks: w['sentinel-mocks'], create: w.create, locking: w.locking, delete: w.delete, move: w.move, runTasks: w['run-tasks'] }
  }
}

/** acme: owners, devs (visible), ops (secret, manage-workspaces); a person invited into devs; two projects, three workspaces, rows of every kind. */
export function smallSnapshot (): MirrorSnapshot {
  return {
    host: HOST,
    organization: { name: 'acme', externalId: 'org-acme', defaultProjectId: 'prj-default' },
    users: [
      { id: 'user-owner', username: 'owner', email: 'owner@acme.test' },
      { id: 'user-alice', username: 'alice', email: 'alice@acme.test' },
      { id: 'user-bob', username: 'bob', email: null },
      { id: 'user-carol', username: null, email: 'carol@acme.test' }
    ],
    teams: [
      { id: 'team-owners', name: 'owners', visibility: 'organization', isOwners: true, organizationAccess: {}, userIds: ['user-owner'] },
      { id: 'team-devs', name: 'devs', visibility: 'organization', isOwners: false, organizationAccess: { 'read-workspaces': true }, userIds: ['user-alice', 'user-bob'] },
      { id: 'team-ops', name: 'ops', visibility: 'secret', isOwners: false, organizationAccess: { 'manage-workspaces': true, 'manage-projects': true }, userIds: ['user-bob'] }
    ],
    memberships: [
      { id: 'ou-owner', userId: 'user-owner', status: 'active', teamIds: ['team-owners'] },
      { id: 'ou-alice', userId: 'user-alice', status: 'active', teamIds: ['team-devs'] },
      { id: 'ou-bob', userId: 'user-bob', status: 'active', teamIds: ['team-devs', 'team-ops'] },
      { id: 'ou-carol', userId: 'user-carol', status: 'invited', teamIds: ['team-devs'] }
    ],
    projects: [
      { id: 'prj-default', name: 'Default Project', description: null, isDefault: true },
      { id: 'prj-platform', name: 'platform', description: 'the platform', isDefault: false }
    ],
    workspaces: [
      { id: 'ws-prod', name: 'prod', projectId: 'prj-platform', description: 'production' },
      { id: 'ws-dev', name: 'dev', projectId: 'prj-default', description: null },
      { id: 'ws-scratch', name: 'scratch', projectId: 'prj-default', description: null }
    ],
    teamWorkspaces: [
      grant('tws-devs-prod', 'team-devs', 'ws-prod', 'plan'),
      { ...grant('tws-devs-dev', 'team-devs', 'ws-dev', 'read'), access: 'custom', runs: 'apply', variables: 'none', stateVersions: 'read-outputs', workspaceLocking: true }
    ],
    teamProjects: [projectGrant('tprj-ops-platform', 'team-ops', 'prj-platform', 'maintain')],
    notes: ['team devs: organization-access flag "manage-everything" has no place here'],
    requests: 17
  }
}

/** A small, repeatable random source (mulberry32). */
export function random (seed: number) {
  let a = seed >>> 0
  const next = (): number => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!
  return { next, pick, chance: (p: number) => next() < p, int: (n: number) => Math.floor(next() * n) }
}

/**
 * A random organization of `size` teams and workspaces: every workspace level (custom with random
 * permissions), every project level (custom with random objects), random organization-access flags
 * (a prerequisite with each flag that needs one), secret and visible teams, invitations with teams.
 */
export function randomSnapshot (seed: number, size = 8, name = 'acme'): MirrorSnapshot {
  const r = random(seed)
  const users = Array.from({ length: size * 2 }, (_, i) => ({ id: `user-${name}-${i}`, username: `${name}-${i}`, email: r.chance(0.5) ? `${name}-${i}@${name}.test` : null }))
  const invited = Array.from({ length: 2 }, (_, i) => ({ id: `user-${name}-invited-${i}`, username: null, email: `invited-${i}@${name}.test` }))
  const teams: MirrorSnapshot['teams'] = Array.from({ length: size }, (_, i) => {
    const flags = Object.fromEntries(ORGANIZATION_ACCESS_FLAGS.filter(() => r.chance(0.15)).map((flag) => [flag, true]))
    if (flags['manage-projects'] === true) flags['manage-workspaces'] = true
    if (flags['read-projects'] === true) flags['read-workspaces'] = true
    return {
      id: `team-${name}-${i}`,
      name: i === 0 ? 'owners' : `team-${i}`,
      visibility: i === 0 || r.chance(0.5) ? 'organization' : 'secret',
      isOwners: i === 0,
      organizationAccess: i === 0 ? {} : flags,
      userIds: i === 0 ? [users[0]!.id] : users.filter(() => r.chance(0.3)).map((u) => u.id)
    }
  })
  const projects = [{ id: `prj-${name}-default`, name: 'Default Project', description: null, isDefault: true },
    ...Array.from({ length: Math.max(1, size / 4) }, (_, i) => ({ id: `prj-${name}-${i}`, name: `project-${i}`, description: r.chance(0.5) ? `project ${i}` : null, isDefault: false }))]
  const workspaces = Array.from({ length: size }, (_, i) => ({ id: `ws-${name}-${i}`, name: `workspace-${i}`, projectId: r.pick(projects).id, description: r.chance(0.3) ? `workspace ${i}` : null }))
  const teamWorkspaces: MirrorTeamWorkspace[] = []
  for (const team of teams.slice(1)) {
    for (const ws of workspaces) {
      if (!r.chance(0.3)) continue
      const level = r.pick(['read', 'plan', 'write', 'admin', 'custom'] as const)
      const row = grant(`tws-${team.id}-${ws.id}`, team.id, ws.id, level === 'custom' ? 'read' : level)
      teamWorkspaces.push(level !== 'custom'
        ? row
        : {
            ...row,
            access: 'custom',
            runs: r.pick(['read', 'plan', 'apply']),
            variables: r.pick(['none', 'read', 'write']),
            stateVersions: r.pick(['none', 'read-outputs', 'read', 'write']),
            sentinelMocks: r.pick(['none', 'read']),
            workspaceLocking: r.chance(0.5),
            runTasks: r.chance(0.5)
          })
    }
  }
  const teamProjects: MirrorTeamProject[] = []
  for (const team of teams.slice(1)) {
    for (const project of projects) {
      if (!r.chance(0.2)) continue
      const level = r.pick(['read', 'write', 'maintain', 'admin', 'custom'] as const)
      const row = projectGrant(`tprj-${team.id}-${project.id}`, team.id, project.id, level)
      if (level === 'custom') {
        row.projectAccess = { settings: r.pick(['read', 'update', 'delete']), teams: r.pick(['none', 'read', 'manage']), variableSets: r.pick(['none', 'read', 'write']) }
        row.workspaceAccess = {
          runs: r.pick(['read', 'plan', 'apply']),
          variables: r.pick(['none', 'read', 'write']),
          stateVersions: r.pick(['none', 'read-outputs', 'read', 'write']),
          sentinelMocks: r.pick(['none', 'read']),
          create: r.chance(0.5),
          locking: r.chance(0.5),
          delete: r.chance(0.5),
          move: r.chance(0.5),
          runTasks: r.chance(0.5)
        }
      }
      teamProjects.push(row)
    }
  }
  const inTeams = new Set(teams.flatMap((t) => t.userIds))
  const memberships: MirrorSnapshot['memberships'] = [
    ...users.filter((u) => inTeams.has(u.id) || r.chance(0.5)).map((u) => ({
      id: `ou-${u.id}`, userId: u.id, status: 'active' as const, teamIds: teams.filter((t) => t.userIds.includes(u.id)).map((t) => t.id)
    })),
    ...invited.map((u) => ({ id: `ou-${u.id}`, userId: u.id, status: 'invited' as const, teamIds: teams.slice(1).filter(() => r.chance(0.3)).map((t) => t.id) }))
  ]
  return {
    host: HOST,
    organization: { name, externalId: `org-${name}`, defaultProjectId: projects[0]!.id },
    users: [...users, ...invited],
    teams,
    memberships,
    projects,
    workspaces,
    teamWorkspaces,
    teamProjects,
    notes: [],
    requests: 100 + size
  }
}

/**
 * The seed document of the snapshot's world (ids kept; the default project named, as a seed adopts
 * it; invited people, who have no username, left out: they reach nothing), with an organization
 * token: what the access review of a mirrored organization must equal.
 */
export function seedOf (snapshot: MirrorSnapshot, token: string): unknown {
  const names = new Map([...snapshot.teams, ...snapshot.projects, ...snapshot.workspaces].map((row) => [row.id, row.name]))
  const usernames = new Map(snapshot.users.map((u) => [u.id, u.username]))
  const defaultProject = snapshot.projects.find((p) => p.isDefault)!
  return {
    users: snapshot.users.filter((u) => u.username !== null).map((u) => ({ id: u.id, username: u.username, ...(u.email === null ? {} : { email: u.email }) })),
    organizations: [{
      id: snapshot.organization.externalId,
      name: snapshot.organization.name,
      tokens: [token],
      teams: snapshot.teams.map((t) => ({
        id: t.id, name: t.name, visibility: t.visibility, owners: t.isOwners, 'organization-access': t.organizationAccess, members: t.userIds.map((id) => usernames.get(id))
      })),
      projects: snapshot.projects.map((p) => p.isDefault ? { name: p.name } : { id: p.id, name: p.name, description: p.description }),
      workspaces: snapshot.workspaces.map((w) => ({ id: w.id, name: w.name, ...(w.projectId === defaultProject.id ? {} : { project: names.get(w.projectId) }) })),
      'team-access': snapshot.teamWorkspaces.map((row) => ({
        id: row.id,
        team: names.get(row.teamId),
        workspace: names.get(row.workspaceId),
        access: row.access,
        ...(row.access !== 'custom'
          ? {}
          : { runs: row.runs, variables: row.variables, 'state-versions': row.stateVersions, 'sentinel-mocks': row.sentinelMocks, 'workspace-locking': row.workspaceLocking, 'run-tasks': row.runTasks })
      })),
      'project-access': snapshot.teamProjects.map((row) => ({
        id: row.id,
        team: names.get(row.teamId),
        project: names.get(row.projectId),
        access: row.access,
        ...(row.access !== 'custom'
          ? {}
          : {
              'project-access': { settings: row.projectAccess.settings, teams: row.projectAccess.teams, 'variable-sets': row.projectAccess.variableSets },
              'workspace-access': {
                runs: row.workspaceAccess.runs,
                variables: row.workspaceAccess.variables,
                'state-versions': row.workspaceAccess.stateVersions,
                'sentinel-mocks': row.workspaceAccess.sentinelMocks,
                create: row.workspaceAccess.create,
                locking: row.workspaceAccess.locking,
                delete: row.workspaceAccess.delete,
                move: row.workspaceAccess.move,
                'run-tasks': row.workspaceAccess.runTasks
              }
            })
      }))
    }]
  }
}
