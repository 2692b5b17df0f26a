import type { WorkspaceResource } from '../../schemas/workspaces.js'
import { resource, segment } from '../jsonapi/document.js'
import type { WorkspaceView } from './workspaces-repository.js'

/** A workspace as its resource (DESIGN §7); `prefix` is where the API is mounted. */
export function toWorkspaceResource (row: WorkspaceView, prefix: string): WorkspaceResource {
  return resource('workspaces', row.id, { name: row.name, 'created-at': new Date(row.created_at).toISOString() }, {
    organization: { data: { id: row.organization_name, type: 'organizations' as const } },
    project: { data: { id: row.project_id, type: 'projects' as const } }
  }, `${prefix}/organizations/${segment(row.organization_name)}/workspaces/${segment(row.name)}`)
}
