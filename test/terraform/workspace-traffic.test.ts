import t from 'tap'
import { applySeedFile } from '../../src/directory/seed-file.js'
import { DEMO_SEED } from '../../src/app.js'
import { build, ENGINE } from '../helper.js'

/**
 * DESIGN §14.1: the Terraform provider's traffic for `tfe_workspace` — create, refresh, rename,
 * move, import, destroy — at v0.22.0 (go-tfe v0.10.2: no project, no safe-delete) and at the newest
 * provider (go-tfe v1.110.0: a project, `include=effective_tag_bindings` on every read, the remote
 * state consumers read, DeleteAllTagBindings before every update, safe-delete), replayed step by step
 * against the demo data with bodies byte for byte as go-tfe writes them. After each step the state
 * the provider would keep is built from the answers as its Read builds it, and compared with what the
 * configuration says: a refresh that finds no difference is a plan with no drift. Only a 404 tells
 * the provider a resource is gone; the consumers read's 404 is one it tolerates (it then keeps
 * global_remote_state true, an attribute it computes).
 */
const TOKEN = 'acme-owners-demo-token'
const WORKSPACE_ID = /^ws-[a-zA-Z0-9]{16}$/ // the provider's workspaceIDRegexp
const NOT_FOUND = { errors: [{ status: '404', title: 'not found' }] }

t.test(`the Terraform provider's workspace traffic (${ENGINE})`, async (t) => {
  const app = await build(t)
  await applySeedFile(app.db, DEMO_SEED)
  /** A request as go-tfe sends it: a Content-Type on POST, PATCH and DELETE (bodiless or not), `raw` the body byte for byte. */
  const send = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, raw?: string) => {
    const res = await app.inject({
      method,
      url: `/api/v2/${path}`,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        accept: 'application/vnd.api+json',
        'user-agent': 'go-tfe',
        ...(method === 'GET' ? {} : { 'content-type': 'application/vnd.api+json' })
      },
      ...(raw === undefined ? {} : { payload: raw })
    })
    if (res.statusCode !== 204 && res.statusCode < 500) t.match(res.headers['content-type'], /^application\/vnd\.api\+json/, `${method} ${path}: a JSON:API answer`)
    return { status: res.statusCode, body: res.body === '' ? undefined : res.json() }
  }

  /** What provider 0.22.0's Read keeps from `GET /workspaces/:id`. */
  const oldState = (data: any) => {
    const a = data.attributes
    const vcs = a['vcs-repo']
    return {
      id: data.id,
      external_id: data.id,
      name: a.name,
      organization: data.relationships.organization.data.id,
      auto_apply: a['auto-apply'] ?? false,
      file_triggers_enabled: a['file-triggers-enabled'] ?? false,
      operations: a.operations ?? false,
      queue_all_runs: a['queue-all-runs'] ?? false,
      speculative_enabled: a['speculative-enabled'] ?? false,
      terraform_version: a['terraform-version'] ?? '',
      trigger_prefixes: a['trigger-prefixes'] ?? [],
      working_directory: a['working-directory'] ?? '',
      ssh_key_id: data.relationships['ssh-key']?.data?.id ?? '',
      vcs_repo: vcs === null || vcs === undefined ? [] : [{ identifier: vcs.identifier ?? '', branch: vcs.branch ?? '', ingress_submodules: vcs['ingress-submodules'] ?? false, oauth_token_id: vcs['oauth-token-id'] ?? '' }]
    }
  }

  t.test('v0.22.0: create, refresh with no drift, rename, import by id, destroy', async (t) => {
    t.equal((await send('GET', 'ping')).status, 204)
    const created = await send('POST', 'organizations/acme/workspaces',
      '{"data":{"type":"workspaces","attributes":{"auto-apply":false,"file-triggers-enabled":true,"name":"svc","operations":true,"queue-all-runs":true,"speculative-enabled":true,"working-directory":""}}}\n')
    t.equal(created.status, 201)
    const id = created.body.data.id as string
    t.match(id, WORKSPACE_ID)
    // resource "tfe_workspace" "svc" { name = "svc", organization = "acme" }: every argument at its schema default
    const config = { name: 'svc', organization: 'acme', auto_apply: false, file_triggers_enabled: true, operations: true, queue_all_runs: true, speculative_enabled: true, trigger_prefixes: [], working_directory: '', ssh_key_id: '', vcs_repo: [] }
    const read = await send('GET', `workspaces/${id}`)
    t.equal(read.status, 200)
    const state = oldState(read.body.data)
    t.match(state, config, 'the state after create: what the configuration says')
    t.ok(state.terraform_version !== '', 'terraform_version: computed, any value')
    t.same(oldState((await send('GET', `workspaces/${id}`)).body.data), state, 'refresh: the same state, no drift')

    // name = "svc2": the configured values again, terraform-version from state, trigger-prefixes [] when none
    const renamed = await send('PATCH', `workspaces/${id}`,
      `{"data":{"type":"workspaces","attributes":{"auto-apply":false,"file-triggers-enabled":true,"name":"svc2","operations":true,"queue-all-runs":true,"speculative-enabled":true,"terraform-version":"${state.terraform_version}","trigger-prefixes":[],"working-directory":""}}}\n`)
    t.equal(renamed.status, 200)
    const after = oldState((await send('GET', `workspaces/${id}`)).body.data)
    t.same(after, { ...state, name: 'svc2' }, 'renamed, nothing else changed')

    // terraform import tfe_workspace.svc ws-…: a read
    t.same(oldState((await send('GET', `workspaces/${id}`)).body.data), after, 'import by id')
    t.equal((await send('GET', 'workspaces/ws-doesnotexist0001')).status, 404, 'import of what is not there: the 404 it reports')

    t.equal((await send('DELETE', `workspaces/${id}`)).status, 204)
    t.equal((await send('GET', `workspaces/${id}`)).status, 404, 'refresh: gone, dropped from state')
    t.same((await send('DELETE', `workspaces/${id}`)).body, NOT_FOUND, 'a second destroy: 404, done')
  })

  /** What the newest provider's Read keeps: `GET /workspaces/:id?include=effective_tag_bindings`, then the consumers when global-remote-state is false. */
  const newRead = async (id: string) => {
    const read = await send('GET', `workspaces/${id}?include=effective_tag_bindings`)
    if (read.status === 404) return undefined
    t.equal(read.status, 200)
    const data = read.body.data
    const a = data.attributes
    let globalRemoteState = a['global-remote-state']
    if (globalRemoteState !== true) {
      const consumers = await send('GET', `workspaces/${id}/relationships/remote-state-consumers?page%5Bsize%5D=100`)
      if (consumers.status === 404) globalRemoteState = true // the provider's fallback, before remote state consumers
      else t.fail('the consumers read: a 404 this service answers')
    }
    const vcs = a['vcs-repo']
    return {
      id: data.id,
      name: a.name,
      organization: data.relationships.organization.data.id,
      project_id: data.relationships.project.data.id,
      description: a.description ?? '',
      allow_destroy_plan: a['allow-destroy-plan'],
      assessments_enabled: a['assessments-enabled'],
      auto_apply: a['auto-apply'],
      auto_apply_run_trigger: a['auto-apply-run-trigger'],
      file_triggers_enabled: a['file-triggers-enabled'],
      operations: a.operations,
      execution_mode: a['execution-mode'],
      queue_all_runs: a['queue-all-runs'],
      source_name: a['source-name'] ?? '',
      source_url: a['source-url'] ?? '',
      speculative_enabled: a['speculative-enabled'],
      structured_run_output_enabled: a['structured-run-output-enabled'],
      terraform_version: a['terraform-version'],
      trigger_prefixes: a['trigger-prefixes'] ?? [],
      trigger_patterns: a['trigger-patterns'] ?? [],
      working_directory: a['working-directory'] ?? '',
      resource_count: a['resource-count'] ?? 0,
      inherits_project_auto_destroy: a['inherits-project-auto-destroy'],
      ssh_key_id: data.relationships['ssh-key']?.data?.id ?? '',
      agent_pool_id: data.relationships['agent-pool']?.data?.id ?? '',
      auto_destroy_at: a['auto-destroy-at'] ?? null,
      auto_destroy_activity_duration: a['auto-destroy-activity-duration'] ?? null,
      tag_names: [...(a['tag-names'] ?? [])].sort(),
      global_remote_state: globalRemoteState,
      vcs_repo: vcs === null || vcs === undefined
        ? []
        : [{ identifier: vcs.identifier ?? '', branch: vcs.branch ?? '', ingress_submodules: vcs['ingress-submodules'] ?? false, oauth_token_id: vcs['oauth-token-id'] ?? '', github_app_installation_id: vcs['github-app-installation-id'] ?? '', tags_regex: vcs['tags-regex'] ?? '' }]
    }
  }
  /** The arguments of a configuration that a refresh must find as configured (the schema's defaults included); the computed ones take any value. */
  const newConfig = (over: Record<string, unknown>) => ({
    allow_destroy_plan: true,
    auto_apply_run_trigger: false,
    file_triggers_enabled: true,
    queue_all_runs: true,
    speculative_enabled: true,
    structured_run_output_enabled: true,
    working_directory: '',
    ssh_key_id: '',
    source_name: '',
    source_url: '',
    trigger_prefixes: [],
    trigger_patterns: [],
    vcs_repo: [],
    auto_destroy_at: null,
    auto_destroy_activity_duration: null,
    organization: 'acme',
    ...over
  })

  t.test('newest: create in a project, refresh with no drift, rename, move, import by id and by name, destroy by safe-delete', async (t) => {
    const defaultProject = (await send('GET', 'organizations/acme')).body.data.relationships['default-project'].data.id as string
    const platform = (await send('POST', 'organizations/acme/projects', '{"data":{"type":"projects","attributes":{"description":"","name":"platform"}}}\n')).body.data.id as string
    t.equal((await send('GET', 'ping')).status, 204)
    // resource "tfe_workspace" "svc" { name = "svc", organization = "acme", project_id = tfe_project.platform.id }
    const created = await send('POST', 'organizations/acme/workspaces',
      `{"data":{"type":"workspaces","attributes":{"allow-destroy-plan":true,"auto-apply-run-trigger":false,"file-triggers-enabled":true,"name":"svc","queue-all-runs":true,"setting-overwrites":{"execution-mode":false,"agent-pool":false},"speculative-enabled":true,"structured-run-output-enabled":true,"working-directory":""},"relationships":{"project":{"data":{"type":"projects","id":"${platform}"}}}}}\n`)
    t.equal(created.status, 201)
    const id = created.body.data.id as string
    t.match(id, WORKSPACE_ID)
    const config = newConfig({ name: 'svc', project_id: platform })
    const state = await newRead(id)
    t.match(state, config, 'the state after create: what the configuration says')
    t.same(await newRead(id), state, 'refresh: the same state, no drift')

    // name = "svc2": DeleteAllTagBindings (no tags configured), then the update with the values from state, then a read
    t.equal((await send('PATCH', `workspaces/${id}`, '{"data":{"type":"workspaces","relationships":{"tag-bindings":{"data":[]}}}}\n')).status, 200)
    const renamed = await send('PATCH', `workspaces/${id}`,
      `{"data":{"type":"workspaces","attributes":{"allow-destroy-plan":true,"auto-apply-run-trigger":false,"file-triggers-enabled":true,"global-remote-state":${String(state!.global_remote_state)},"name":"svc2","queue-all-runs":true,"speculative-enabled":true,"structured-run-output-enabled":true,"terraform-version":"${state!.terraform_version as string}","trigger-prefixes":[],"working-directory":""}}}\n`)
    t.equal(renamed.status, 200)
    const afterRename = await newRead(id)
    t.same(afterRename, { ...state, name: 'svc2' }, 'renamed; refresh: no drift')

    // project_id = the default project: the update carries the relationship
    t.equal((await send('PATCH', `workspaces/${id}`, '{"data":{"type":"workspaces","relationships":{"tag-bindings":{"data":[]}}}}\n')).status, 200)
    const moved = await send('PATCH', `workspaces/${id}`,
      `{"data":{"type":"workspaces","attributes":{"allow-destroy-plan":true,"auto-apply-run-trigger":false,"file-triggers-enabled":true,"global-remote-state":true,"name":"svc2","queue-all-runs":true,"speculative-enabled":true,"structured-run-output-enabled":true,"terraform-version":"${state!.terraform_version as string}","trigger-prefixes":[],"working-directory":""},"relationships":{"project":{"data":{"type":"projects","id":"${defaultProject}"}}}}}\n`)
    t.equal(moved.status, 200)
    const afterMove = await newRead(id)
    t.same(afterMove, { ...afterRename, project_id: defaultProject }, 'moved; refresh: no drift')

    // terraform import: by id (a read), by <org>/<name> (the workspace by name, then a read)
    t.same(await newRead(id), afterMove, 'import by id')
    const byName = await send('GET', 'organizations/acme/workspaces/svc2')
    t.equal(byName.body.data.id, id, 'import acme/svc2: the id, then a read')

    // destroy (force_delete = false): a read of permissions and resource count, then safe-delete
    const before = await send('GET', `workspaces/${id}`)
    t.equal(before.body.data.attributes.permissions['can-force-delete'], true, 'safe-delete is supported (can-force-delete present)')
    t.equal(before.body.data.attributes['resource-count'], 0, 'no resources under management')
    t.equal((await send('POST', `workspaces/${id}/actions/safe-delete`)).status, 204)
    t.equal(await newRead(id), undefined, 'refresh: gone, dropped from state')
    t.same((await send('GET', `workspaces/${id}`)).body, NOT_FOUND, "destroy's read of what is gone: 404, done")
  })

  t.test('newest: a configuration with the settings people write reads back with no drift; force_delete deletes', async (t) => {
    // description, auto_apply, execution_mode "local", tag_names, trigger_patterns, vcs_repo, assessments
    const created = await send('POST', 'organizations/acme/workspaces',
      '{"data":{"type":"workspaces","attributes":{"allow-destroy-plan":false,"assessments-enabled":true,"auto-apply":true,"auto-apply-run-trigger":false,"description":"payments service","execution-mode":"local","file-triggers-enabled":true,"name":"payments","queue-all-runs":true,"setting-overwrites":{"execution-mode":true,"agent-pool":true},"speculative-enabled":false,"structured-run-output-enabled":true,"terraform-version":"~\\u003e 1.9.0","trigger-patterns":["modules/**/*.tf","*.tf"],"vcs-repo":{"branch":"release","identifier":"acme/payments","ingress-submodules":true,"oauth-token-id":"ot-123","tags-regex":""},"working-directory":"infra"},' +
      '"relationships":{"tags":{"data":[{"type":"tags","attributes":{"name":"team-pay"}},{"type":"tags","attributes":{"name":"prod"}}]}}}}\n')
    t.equal(created.status, 201)
    const id = created.body.data.id as string
    const state = await newRead(id)
    t.match(state, newConfig({
      name: 'payments',
      description: 'payments service',
      allow_destroy_plan: false,
      assessments_enabled: true,
      auto_apply: true,
      execution_mode: 'local',
      operations: false,
      speculative_enabled: false,
      terraform_version: '~> 1.9.0',
      trigger_patterns: ['modules/**/*.tf', '*.tf'],
      working_directory: 'infra',
      tag_names: ['prod', 'team-pay'],
      vcs_repo: [{ identifier: 'acme/payments', branch: 'release', ingress_submodules: true, oauth_token_id: 'ot-123', github_app_installation_id: '', tags_regex: '' }]
    }), 'every configured argument as configured')
    t.same(await newRead(id), state, 'refresh: no drift')

    // tag_names = ["prod", "team-payments"]: AddTags of the new, then RemoveTags of the old, then the read
    t.equal((await send('POST', `workspaces/${id}/relationships/tags`, '{"data":[{"type":"tags","attributes":{"name":"team-payments"}}]}\n')).status, 204)
    t.equal((await send('DELETE', `workspaces/${id}/relationships/tags`, '{"data":[{"type":"tags","attributes":{"name":"team-pay"}}]}\n')).status, 204)
    const retagged = await newRead(id)
    t.same(retagged, { ...state, tag_names: ['prod', 'team-payments'] }, 'tag_names as configured, nothing else changed')

    // vcs_repo removed from the configuration: the update without it, then RemoveVCSConnectionByID
    t.equal((await send('PATCH', `workspaces/${id}`, '{"data":{"type":"workspaces","attributes":{"vcs-repo":null}}}\n')).status, 200)
    t.same((await newRead(id))!.vcs_repo, [], 'no repository')

    // force_delete = true: the read, then DELETE
    t.equal((await send('GET', `workspaces/${id}`)).body.data.attributes.permissions['can-force-delete'], true)
    t.equal((await send('DELETE', `workspaces/${id}`)).status, 204)
    t.equal(await newRead(id), undefined)
  })

  t.test("newest: the demo seed's workspace, imported, refuses the provider's changes (422), as §9.1 says", async (t) => {
    const state = await newRead('ws-DemoProduction01')
    // HCP Terraform's API default for queue-all-runs is false, the provider's true: an import plans that change, here as there
    t.match(state, newConfig({ name: 'prod', queue_all_runs: false }), "it reads HCP Terraform's defaults")
    const refused = await send('PATCH', 'workspaces/ws-DemoProduction01', '{"data":{"type":"workspaces","attributes":{"name":"production"}}}\n')
    t.equal(refused.status, 422)
    t.match(refused.body.errors[0].detail, /managed by the demo seed/)
    const destroy = await send('POST', 'workspaces/ws-DemoProduction01/actions/safe-delete')
    t.equal(destroy.status, 422, 'nor deleted')
  })
})
