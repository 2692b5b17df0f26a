import { WORKSPACE_SETTINGS, type WorkspaceResource, type WorkspaceSettings } from '../../schemas/workspaces.js'
import { resource, segment } from '../jsonapi/document.js'
import type { WorkspaceView } from './workspaces-repository.js'

type Attributes = WorkspaceResource['attributes']
type Answered = Omit<Attributes, 'name' | 'description' | 'created-at' | 'locked' | 'resource-count' | 'permissions' | 'actions'>

/** The settings answered as they are kept, each with its default (schemas/workspaces.ts) when never sent. */
const PLAIN = (Object.keys(WORKSPACE_SETTINGS) as Array<keyof typeof WORKSPACE_SETTINGS>)
  .filter((name) => !['agent-pool-id', 'vcs-repo', 'setting-overwrites', 'execution-mode', 'operations'].includes(name))
  .map((name) => [name, (WORKSPACE_SETTINGS[name] as { default?: unknown }).default] as const)

/**
 * A workspace's settings as HCP Terraform answers them (DESIGN §14.1): what was sent, the default
 * for what was not; `execution-mode` and `operations` from whichever was sent (local exactly when
 * operations is false), `setting-overwrites` true for what the workspace set itself, and the VCS
 * repository with the keys HCP Terraform always answers.
 */
export function settingsAnswer (settings: WorkspaceSettings): Answered {
  const kept = settings as Record<string, unknown>
  const executionMode = settings['execution-mode'] ?? (settings.operations === false ? 'local' : 'remote')
  const vcs = settings['vcs-repo']
  return {
    ...Object.fromEntries(PLAIN.map(([name, fallback]) => [name, kept[name] ?? fallback])) as Omit<Answered, 'execution-mode' | 'operations' | 'vcs-repo' | 'setting-overwrites'>,
    'execution-mode': executionMode,
    operations: executionMode !== 'local',
    'setting-overwrites': {
      'execution-mode': settings['setting-overwrites']?.['execution-mode'] ?? ('execution-mode' in kept || 'operations' in kept),
      'agent-pool': settings['setting-overwrites']?.['agent-pool'] ?? 'agent-pool-id' in kept
    },
    'vcs-repo': vcs === undefined || vcs === null
      ? null
      : {
          identifier: vcs.identifier ?? '',
          'display-identifier': vcs.identifier ?? '',
          branch: vcs.branch ?? '',
          'ingress-submodules': vcs['ingress-submodules'] ?? false,
          'oauth-token-id': vcs['oauth-token-id'] ?? null,
          'tags-regex': vcs['tags-regex'] ?? null,
          'github-app-installation-id': vcs['github-app-installation-id'] ?? null
        }
  }
}

/**
 * A workspace as its resource (DESIGN §7, §14.1) for the caller it was read for; `prefix` is where
 * the API is mounted. What the caller may change or delete holds only for a workspace the API
 * manages (a seed's or the host's refuses the API's writes).
 */
export function toWorkspaceResource (row: WorkspaceView, prefix: string): WorkspaceResource {
  const settings = row.settings ?? {}
  const writable = row.managed_by === 'api'
  const [admin, destroys] = row.permissions
  const agentPool = settings['agent-pool-id']
  return resource('workspaces', row.id, {
    name: row.name,
    description: row.description,
    'created-at': new Date(row.created_at).toISOString(),
    ...settingsAnswer(settings),
    locked: false,
    'resource-count': 0,
    permissions: {
      'can-update': writable && admin,
      'can-destroy': writable && destroys,
      'can-force-delete': writable && destroys,
      'can-read-settings': true,
      'can-queue-run': false,
      'can-queue-apply': false,
      'can-queue-destroy': false,
      'can-lock': false,
      'can-unlock': false,
      'can-force-unlock': false,
      'can-read-state-versions': false,
      'can-read-variable': false,
      'can-update-variable': false,
      'can-manage-run-tasks': false,
      'can-manage-hyok': false
    },
    actions: { 'is-destroyable': writable }
  }, {
    organization: { data: { id: row.organization_name, type: 'organizations' as const } },
    project: { data: { id: row.project_id, type: 'projects' as const } },
    'agent-pool': { data: agentPool === undefined || agentPool === null ? null : { id: agentPool, type: 'agent-pools' as const } }
  }, `${prefix}/organizations/${segment(row.organization_name)}/workspaces/${segment(row.name)}`)
}
