import type { TeamWorkspaceResource } from '../../schemas/team-workspaces.js'
import { permissionsOf } from '../access/permission-columns.js'
import { resource, segment } from '../jsonapi/document.js'
import type { TeamWorkspaceView } from './team-workspaces-repository.js'

/** A team-workspace row as its resource (DESIGN §4); `prefix` is where the API is mounted. */
export function toResource (row: TeamWorkspaceView, prefix: string): TeamWorkspaceResource {
  return resource('team-workspaces', row.id, { access: row.access, ...permissionsOf(row) }, {
    team: {
      data: { id: row.team_id, type: 'teams' as const },
      links: { related: `${prefix}/teams/${segment(row.team_id)}` }
    },
    workspace: {
      data: { id: row.workspace_id, type: 'workspaces' as const },
      links: { related: `${prefix}/organizations/${segment(row.organization_name)}/workspaces/${segment(row.workspace_name)}` }
    }
  }, `${prefix}/team-workspaces/${segment(row.id)}`)
}
