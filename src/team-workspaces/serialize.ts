import type { TeamWorkspaceResource } from '../../schemas/team-workspaces.js'
import type { Permissions } from '../access/permissions.js'
import type { TeamWorkspaceView } from './team-workspaces-repository.js'

/** The one place where Postgres' snake_case becomes the wire's kebab-case. `prefix` is where the API is mounted. */
export function toResource (row: TeamWorkspaceView, prefix: string): TeamWorkspaceResource {
  return {
    id: row.id,
    type: 'team-workspaces',
    attributes: { access: row.access, ...permissionsOf(row) },
    relationships: {
      team: {
        data: { id: row.team_id, type: 'teams' },
        links: { related: `${prefix}/teams/${encodeURIComponent(row.team_id)}` }
      },
      workspace: {
        data: { id: row.workspace_id, type: 'workspaces' },
        links: { related: `${prefix}/organizations/${encodeURIComponent(row.organization_name)}/workspaces/${encodeURIComponent(row.workspace_name)}` }
      }
    },
    links: { self: `${prefix}/team-workspaces/${encodeURIComponent(row.id)}` }
  }
}

export function permissionsOf (row: Pick<TeamWorkspaceView, 'runs' | 'variables' | 'state_versions' | 'sentinel_mocks' | 'workspace_locking' | 'run_tasks'>): Permissions {
  return {
    runs: row.runs,
    variables: row.variables,
    'state-versions': row.state_versions,
    'sentinel-mocks': row.sentinel_mocks,
    'workspace-locking': row.workspace_locking,
    'run-tasks': row.run_tasks
  }
}
