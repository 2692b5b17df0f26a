import type { TeamResource } from '../../schemas/teams.js'
import { resource, segment } from '../jsonapi/document.js'
import type { TeamView } from './teams-repository.js'

/** A team as its resource (DESIGN §7); `prefix` is where the API is mounted. */
export function toTeamResource (row: TeamView, prefix: string): TeamResource {
  return resource('teams', row.id, {
    name: row.name,
    visibility: row.visibility,
    'users-count': Number(row.users_count),
    'organization-access': { 'manage-workspaces': row.manage_workspaces, 'read-workspaces': row.read_workspaces }
  }, {
    organization: { data: { id: row.organization_name, type: 'organizations' as const } }
  }, `${prefix}/teams/${segment(row.id)}`)
}
