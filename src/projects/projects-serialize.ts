import type { ProjectResource, TeamProjectResource } from '../../schemas/projects.js'
import { projectPermissionsOf, type ProjectPermissionColumns } from '../access/project-permissions.js'
import { resource, segment } from '../jsonapi/document.js'
import type { ProjectView } from './projects-repository.js'
import type { TeamProjectView } from './team-projects-repository.js'

/** A project as its resource (DESIGN §11.4) for the caller it was read for; `prefix` is where the API is mounted. */
export function toProjectResource (row: ProjectView, prefix: string): ProjectResource {
  const [canUpdate, canDestroy, canReadTeams, canManageTeams] = row.permissions
  return resource('projects', row.id, {
    name: row.name,
    description: row.description,
    'created-at': new Date(row.created_at).toISOString(),
    'workspace-count': row.workspace_count,
    'team-count': row.team_count,
    permissions: { 'can-read': true, 'can-update': canUpdate, 'can-destroy': canDestroy, 'can-read-teams': canReadTeams, 'can-manage-teams': canManageTeams }
  }, {
    organization: { data: { id: row.organization_name, type: 'organizations' as const } }
  }, `${prefix}/projects/${segment(row.id)}`)
}

/** A team-project row as its resource (DESIGN §11.2): both objects always there. */
export function toTeamProjectResource (row: TeamProjectView, prefix: string): TeamProjectResource {
  return resource('team-projects', row.id, {
    access: row.access,
    ...projectPermissionsOf(row as ProjectPermissionColumns)
  }, {
    team: { data: { id: row.team_id, type: 'teams' as const }, links: { related: `${prefix}/teams/${segment(row.team_id)}` } },
    project: { data: { id: row.project_id, type: 'projects' as const }, links: { related: `${prefix}/projects/${segment(row.project_id)}` } }
  }, `${prefix}/team-projects/${segment(row.id)}`)
}
