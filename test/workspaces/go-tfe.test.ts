import t from 'tap'
import type { Test } from 'tap'
import { applySeedFile } from '../../src/directory/seed-file.js'
import { DEMO_SEED } from '../../src/app.js'
import { build, ENGINE } from '../helper.js'
import { validateResponse, type Operation } from '../openapi.js'

/**
 * DESIGN §14.1: the exact requests HashiCorp's go-tfe sends for `Workspaces` — Create, Read,
 * ReadByID (and ReadByIDWithOptions with `include=effective_tag_bindings`), Update, UpdateByID
 * (with a project: a move), RemoveVCSConnection(ByID), AddTags, RemoveTags, Delete, DeleteByID, SafeDelete, SafeDeleteByID
 * — at v0.10.2 (what provider 0.22.0 uses) and v1.110.0 (the newest provider's), byte for byte:
 * `jsonapi.MarshalPayloadWithoutIncluded` writes `type` (no `id`), then the attributes with their
 * keys sorted, a nil pointer left out (a pointer to false or "" sent), a non-nil empty slice sent as
 * `[]`; the nested option structs (`vcs-repo`, `setting-overwrites`) are plain `json` structs, their
 * keys in struct order; relationships sorted, each related object shallow (`{"type","id"}`, or its
 * attributes when it has no id: a tag by name); a trailing newline; POST, PATCH and DELETE carry
 * `Content-Type: application/vnd.api+json`, DELETE and safe-delete without a body. Each answer is
 * decoded as jsonapi decodes it into that version's `Workspace` (`data.type` its primary type, each
 * attribute of its tag's type — iso8601 times ending in Z, `[]string` of strings, null as the zero
 * value —, nested structs by their tags, and in v1 every relationship's linkage type checked).
 * @see https://github.com/hashicorp/go-tfe/blob/v1.110.0/v1.go (workspaces)
 * @see https://github.com/hashicorp/go-tfe/blob/v0.10.2/workspace.go
 */
type GoField = 'string' | 'bool' | 'int' | 'number' | 'time' | 'strings' | 'ptrbool' | 'nullable' | { object: Record<string, GoField> }
interface GoStruct { primary: string, attributes: Record<string, GoField>, relations: Record<string, string> }

const PERMISSIONS_OLD = Object.fromEntries(['can-destroy', 'can-force-unlock', 'can-lock', 'can-queue-apply', 'can-queue-destroy', 'can-queue-run', 'can-read-settings', 'can-unlock', 'can-update', 'can-update-variable']
  .map((name) => [name, 'bool' as const]))

/** go-tfe v0.10.2's `Workspace` (workspace.go): its attributes and relations. */
const WORKSPACE_OLD: GoStruct = {
  primary: 'workspaces',
  attributes: {
    actions: { object: { 'is-destroyable': 'bool' } },
    'auto-apply': 'bool',
    'can-queue-destroy-plan': 'bool',
    'created-at': 'time',
    environment: 'string',
    'file-triggers-enabled': 'bool',
    locked: 'bool',
    'migration-environment': 'string',
    name: 'string',
    operations: 'bool',
    permissions: { object: PERMISSIONS_OLD },
    'queue-all-runs': 'bool',
    'speculative-enabled': 'bool',
    'terraform-version': 'string',
    'trigger-prefixes': 'strings',
    'vcs-repo': { object: { branch: 'string', 'display-identifier': 'string', identifier: 'string', 'ingress-submodules': 'bool', 'oauth-token-id': 'string' } },
    'working-directory': 'string'
  },
  relations: { 'current-run': 'runs', organization: 'organizations', 'ssh-key': 'ssh-keys' }
}

/** go-tfe v1.110.0's `Workspace` (v1.go): its attributes and relations. */
const WORKSPACE_NEW: GoStruct = {
  primary: 'workspaces',
  attributes: {
    actions: { object: { 'is-destroyable': 'bool' } },
    ...Object.fromEntries(['allow-destroy-plan', 'assessments-enabled', 'auto-apply', 'auto-apply-run-trigger', 'can-queue-destroy-plan', 'file-triggers-enabled', 'global-remote-state',
      'project-remote-state', 'inherits-project-auto-destroy', 'locked', 'no-code-upgrade-available', 'operations', 'queue-all-runs', 'speculative-enabled', 'structured-run-output-enabled']
      .map((name) => [name, 'bool' as const])),
    ...Object.fromEntries(['description', 'environment', 'execution-mode', 'migration-environment', 'name', 'source', 'source-name', 'source-url', 'source-module-id', 'terraform-version', 'working-directory']
      .map((name) => [name, 'string' as const])),
    'auto-destroy-at': 'nullable',
    'auto-destroy-activity-duration': 'nullable',
    'created-at': 'time',
    'updated-at': 'time',
    'resource-count': 'int',
    'policy-check-failures': 'int',
    'run-failures': 'int',
    'workspace-kpis-runs-count': 'int',
    'apply-duration-average': 'number',
    'plan-duration-average': 'number',
    'trigger-prefixes': 'strings',
    'trigger-patterns': 'strings',
    'tag-names': 'strings',
    'hyok-enabled': 'ptrbool',
    permissions: {
      object: {
        ...PERMISSIONS_OLD,
        'can-manage-run-tasks': 'bool',
        'can-manage-hyok': 'bool',
        'can-read-state-versions': 'bool',
        'can-read-variable': 'bool',
        'can-force-delete': 'ptrbool'
      }
    },
    'vcs-repo': {
      object: Object.fromEntries(['branch', 'display-identifier', 'identifier', 'oauth-token-id', 'github-app-installation-id', 'repository-http-url', 'service-provider', 'tags-regex', 'webhook-url', 'source-directory', 'tag-prefix']
        .map((name) => [name, 'string' as GoField]).concat([['ingress-submodules', 'bool'], ['tags', 'bool']]))
    },
    'setting-overwrites': { object: { 'execution-mode': 'ptrbool', 'agent-pool': 'ptrbool' } }
  },
  relations: {
    'agent-pool': 'agent-pools',
    'current-run': 'runs',
    'current-state-version': 'state-versions',
    organization: 'organizations',
    'ssh-key': 'ssh-keys',
    project: 'projects',
    'current-configuration-version': 'configuration-versions'
  }
}

/** One attribute as jsonapi decodes it: null or absent is Go's zero value (nil for a pointer, unspecified for a NullableAttr). */
function decodeField (value: unknown, type: GoField, path: string, errors: string[]): unknown {
  if (value === null || value === undefined) {
    return type === 'string' ? '' : type === 'bool' ? false : type === 'int' || type === 'number' ? 0 : type === 'strings' ? [] : type === 'nullable' ? 'unspecified' : null
  }
  if (type === 'string' && typeof value === 'string') return value
  if ((type === 'bool' || type === 'ptrbool') && typeof value === 'boolean') return value
  if (type === 'int' && typeof value === 'number' && Number.isSafeInteger(value)) return value
  if (type === 'number' && typeof value === 'number') return value
  if (type === 'time' && typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(value)) return value
  if (type === 'nullable' && typeof value === 'string') return value
  if (type === 'strings' && Array.isArray(value) && value.every((item) => typeof item === 'string')) return value
  if (typeof type === 'object' && typeof value === 'object' && !Array.isArray(value)) {
    return Object.fromEntries(Object.entries(type.object).map(([name, field]) => [name, decodeField((value as Record<string, unknown>)[name], field, `${path}.${name}`, errors)]))
  }
  errors.push(`${path}: ${JSON.stringify(value)} does not decode into a Go ${typeof type === 'string' ? type : 'struct'}`)
  return undefined
}

/** What `jsonapi.UnmarshalPayload` into a `*Workspace` gives: its fields by tag (relations as ids), and the errors it would raise. */
function decode (node: any, struct: GoStruct): { errors: string[], value: Record<string, any> } {
  const errors: string[] = []
  if (node?.type !== struct.primary) errors.push(`Trying to Unmarshal an object of type "${String(node?.type)}", but "${struct.primary}" does not match`)
  if (typeof node?.id !== 'string') errors.push('data.id: not a string')
  const value: Record<string, any> = { id: node?.id }
  for (const [name, type] of Object.entries(struct.attributes)) value[name] = decodeField(node?.attributes?.[name], type, `attributes.${name}`, errors)
  for (const [name, type] of Object.entries(struct.relations)) {
    const data = node?.relationships?.[name]?.data
    if (data === undefined || data === null) value[name] = null
    else {
      if (data.type !== type) errors.push(`relationships.${name}: type "${String(data.type)}", not "${type}"`)
      value[name] = data.id
    }
  }
  return { errors, value }
}

t.test(`go-tfe's Workspaces, replayed, on ${ENGINE}`, async (t) => {
  const app = await build(t)
  await applySeedFile(app.db, DEMO_SEED)

  /** A request as go-tfe's client makes it; every 2xx answer with a body is checked against the OpenAPI description too. */
  const goTfe = async (t: Test, operation: Operation | null, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: string) => {
    const res = await app.inject({
      method,
      url: `/api/v2/${path}`,
      headers: {
        authorization: 'Bearer acme-owners-demo-token',
        accept: 'application/vnd.api+json',
        'user-agent': 'go-tfe',
        ...(method === 'GET' ? {} : { 'content-type': 'application/vnd.api+json' })
      },
      ...(body === undefined ? {} : { payload: body })
    })
    const json = res.body === '' ? undefined : res.json()
    if (res.statusCode < 300 && res.statusCode !== 204) {
      t.match(res.headers['content-type'], /^application\/vnd\.api\+json/, `${method} ${path}: a JSON:API answer`)
      if (operation !== null) t.same(validateResponse(operation, json).errors ?? null, null, `${method} ${path}: as schemas/openapi.json says`)
    }
    return { status: res.statusCode, json }
  }
  const platform = (await goTfe(t, null, 'POST', 'organizations/acme/projects', '{"data":{"type":"projects","attributes":{"name":"platform"}}}\n')).json.data.id as string
  const defaultProject = (await goTfe(t, null, 'GET', 'organizations/acme')).json.data.relationships['default-project'].data.id as string

  t.test('v0.10.2: Create (the options provider 0.22.0 sends), ReadByID, Read, UpdateByID, Update, RemoveVCSConnectionByID, DeleteByID, Delete', async (t) => {
    const created = await goTfe(t, 'createWorkspace', 'POST', 'organizations/acme/workspaces',
      '{"data":{"type":"workspaces","attributes":{"auto-apply":false,"file-triggers-enabled":true,"name":"legacy","operations":true,"queue-all-runs":true,"speculative-enabled":true,"trigger-prefixes":["modules/"],"vcs-repo":{"identifier":"acme/legacy","ingress-submodules":false,"oauth-token-id":"ot-legacy"},"working-directory":""}}}\n')
    t.equal(created.status, 201)
    const decoded = decode(created.json.data, WORKSPACE_OLD)
    t.same(decoded.errors, [], 'decodes into Workspace')
    const id = decoded.value.id as string
    t.match(id, /^ws-[a-zA-Z0-9]{16}$/, 'an id the provider validates')
    t.match(decoded.value, {
      name: 'legacy',
      'auto-apply': false,
      'file-triggers-enabled': true,
      operations: true,
      'queue-all-runs': true,
      'speculative-enabled': true,
      'trigger-prefixes': ['modules/'],
      'working-directory': '',
      'vcs-repo': { identifier: 'acme/legacy', branch: '', 'ingress-submodules': false, 'oauth-token-id': 'ot-legacy', 'display-identifier': 'acme/legacy' },
      organization: 'acme',
      'ssh-key': null,
      permissions: { 'can-update': true, 'can-destroy': true, 'can-queue-run': false }
    })
    const byId = await goTfe(t, 'showWorkspace', 'GET', `workspaces/${id}`)
    t.same(decode(byId.json.data, WORKSPACE_OLD), decoded, 'ReadByID: the same workspace')
    const byName = await goTfe(t, 'showWorkspaceByName', 'GET', 'organizations/acme/workspaces/legacy')
    t.same(decode(byName.json.data, WORKSPACE_OLD), decoded, 'Read: the same')

    const updated = await goTfe(t, 'updateWorkspace', 'PATCH', `workspaces/${id}`,
      '{"data":{"type":"workspaces","attributes":{"auto-apply":true,"file-triggers-enabled":true,"name":"legacy2","operations":true,"queue-all-runs":true,"speculative-enabled":true,"terraform-version":"0.12.29","trigger-prefixes":[],"vcs-repo":{"branch":"","identifier":"acme/legacy","ingress-submodules":false,"oauth-token-id":"ot-legacy"},"working-directory":""}}}\n')
    t.equal(updated.status, 200)
    t.match(decode(updated.json.data, WORKSPACE_OLD).value, { name: 'legacy2', 'auto-apply': true, 'terraform-version': '0.12.29', 'trigger-prefixes': [] })
    const byNameUpdate = await goTfe(t, 'updateWorkspaceByName', 'PATCH', 'organizations/acme/workspaces/legacy2', '{"data":{"type":"workspaces","attributes":{"working-directory":"infra"}}}\n')
    t.match(decode(byNameUpdate.json.data, WORKSPACE_OLD).value, { name: 'legacy2', 'working-directory': 'infra', 'auto-apply': true })
    const unlinked = await goTfe(t, 'updateWorkspace', 'PATCH', `workspaces/${id}`, '{"data":{"type":"workspaces","attributes":{"vcs-repo":null}}}\n')
    t.equal(decode(unlinked.json.data, WORKSPACE_OLD).value['vcs-repo'], null, 'RemoveVCSConnectionByID: no repository')

    t.equal((await goTfe(t, null, 'DELETE', `workspaces/${id}`)).status, 204, 'DeleteByID')
    t.equal((await goTfe(t, null, 'GET', `workspaces/${id}`)).status, 404)
    t.equal((await goTfe(t, null, 'DELETE', `workspaces/${id}`)).status, 404, 'a second delete: ErrResourceNotFound')
    t.equal((await goTfe(t, null, 'POST', 'organizations/acme/workspaces', '{"data":{"type":"workspaces","attributes":{"name":"legacy3"}}}\n')).status, 201)
    t.equal((await goTfe(t, null, 'DELETE', 'organizations/acme/workspaces/legacy3')).status, 204, 'Delete by name')
  })

  t.test('v1.110.0: Create with a project, tags and every kind of attribute; ReadByIDWithOptions; Read', async (t) => {
    const created = await goTfe(t, 'createWorkspace', 'POST', 'organizations/acme/workspaces',
      '{"data":{"type":"workspaces","attributes":{"allow-destroy-plan":true,"assessments-enabled":false,"auto-apply":true,"auto-apply-run-trigger":false,"auto-destroy-activity-duration":"14d",' +
      '"description":"the service \\u003c\\u0026\\u003e","execution-mode":"remote","file-triggers-enabled":false,"global-remote-state":false,"name":"svc","queue-all-runs":true,' +
      '"setting-overwrites":{"execution-mode":true,"agent-pool":true},"source-name":"portal","source-url":"https://portal.example/svc","speculative-enabled":true,"structured-run-output-enabled":true,' +
      '"terraform-version":"1.9.5","trigger-patterns":["modules/**/*.tf"],"vcs-repo":{"branch":"main","identifier":"acme/svc","ingress-submodules":false,"oauth-token-id":"ot-svc","tags-regex":""},"working-directory":"svc"},' +
      `"relationships":{"project":{"data":{"type":"projects","id":"${platform}"}},"tag-bindings":{"data":[{"type":"tag-bindings","attributes":{"key":"env","value":"prod"}}]},"tags":{"data":[{"type":"tags","attributes":{"name":"svc"}},{"type":"tags","attributes":{"name":"team-a"}}]}}}}\n`)
    t.equal(created.status, 201)
    const decoded = decode(created.json.data, WORKSPACE_NEW)
    t.same(decoded.errors, [], 'decodes into Workspace')
    const id = decoded.value.id as string
    t.match(decoded.value, {
      name: 'svc',
      description: 'the service <&>',
      'allow-destroy-plan': true,
      'assessments-enabled': false,
      'auto-apply': true,
      'auto-apply-run-trigger': false,
      'auto-destroy-at': 'unspecified',
      'auto-destroy-activity-duration': '14d',
      'execution-mode': 'remote',
      operations: true,
      'file-triggers-enabled': false,
      'global-remote-state': false,
      'queue-all-runs': true,
      'source-name': 'portal',
      'source-url': 'https://portal.example/svc',
      'speculative-enabled': true,
      'structured-run-output-enabled': true,
      'terraform-version': '1.9.5',
      'trigger-prefixes': [],
      'trigger-patterns': ['modules/**/*.tf'],
      'tag-names': ['svc', 'team-a'],
      'working-directory': 'svc',
      'vcs-repo': { identifier: 'acme/svc', branch: 'main', 'ingress-submodules': false, 'oauth-token-id': 'ot-svc', 'tags-regex': '', 'github-app-installation-id': '' },
      'setting-overwrites': { 'execution-mode': true, 'agent-pool': true },
      'resource-count': 0,
      'hyok-enabled': false,
      permissions: { 'can-update': true, 'can-destroy': true, 'can-force-delete': true, 'can-queue-run': false, 'can-read-settings': true },
      actions: { 'is-destroyable': true },
      organization: 'acme',
      project: platform,
      'agent-pool': null,
      'ssh-key': null
    })
    const withTags = await goTfe(t, 'showWorkspace', 'GET', `workspaces/${id}?include=effective_tag_bindings`)
    t.equal(withTags.status, 200, 'ReadByIDWithOptions(effective_tag_bindings): accepted, nothing included')
    t.same(decode(withTags.json.data, WORKSPACE_NEW), decoded, 'the same workspace')
    t.same(decode((await goTfe(t, 'showWorkspace', 'GET', `workspaces/${id}`)).json.data, WORKSPACE_NEW), decoded, 'ReadByID')
    t.same(decode((await goTfe(t, 'showWorkspaceByName', 'GET', 'organizations/acme/workspaces/svc')).json.data, WORKSPACE_NEW), decoded, 'Read')
    const bad = await goTfe(t, null, 'GET', `workspaces/${id}?include=current_run`)
    t.equal(bad.status, 400, 'an include this service cannot honour: 400')
  })

  t.test('v1.110.0: UpdateByID moves with a project; Update by name; DeleteAllTagBindings; RemoveVCSConnection', async (t) => {
    const id = (await goTfe(t, null, 'GET', 'organizations/acme/workspaces/svc')).json.data.id as string
    const moved = await goTfe(t, 'updateWorkspace', 'PATCH', `workspaces/${id}`, `{"data":{"type":"workspaces","relationships":{"project":{"data":{"type":"projects","id":"${defaultProject}"}}}}}\n`)
    t.equal(moved.status, 200)
    t.match(decode(moved.json.data, WORKSPACE_NEW).value, { project: defaultProject, name: 'svc', 'auto-apply': true }, 'moved, nothing else changed')
    const both = await goTfe(t, 'updateWorkspaceByName', 'PATCH', 'organizations/acme/workspaces/svc',
      `{"data":{"type":"workspaces","attributes":{"auto-destroy-activity-duration":null,"description":"moved back","name":"svc-2","trigger-patterns":[]},"relationships":{"project":{"data":{"type":"projects","id":"${platform}"}}}}}\n`)
    t.equal(both.status, 200)
    t.match(decode(both.json.data, WORKSPACE_NEW).value, { project: platform, name: 'svc-2', description: 'moved back', 'auto-destroy-activity-duration': 'unspecified', 'trigger-patterns': [] })
    t.equal((await goTfe(t, null, 'PATCH', `workspaces/${id}`, '{"data":{"type":"workspaces","relationships":{"tag-bindings":{"data":[]}}}}\n')).status, 200, 'DeleteAllTagBindings: accepted, nothing to delete')
    const tagNames = async () => decode((await goTfe(t, 'showWorkspace', 'GET', `workspaces/${id}`)).json.data, WORKSPACE_NEW).value['tag-names']
    t.equal((await goTfe(t, null, 'POST', `workspaces/${id}/relationships/tags`, '{"data":[{"type":"tags","attributes":{"name":"prod"}},{"type":"tags","attributes":{"name":"svc"}}]}\n')).status, 204, 'AddTags')
    t.same(await tagNames(), ['svc', 'team-a', 'prod'], 'added, each name once')
    t.equal((await goTfe(t, null, 'DELETE', `workspaces/${id}/relationships/tags`, '{"data":[{"type":"tags","attributes":{"name":"team-a"}},{"type":"tags","attributes":{"name":"gone"}}]}\n')).status, 204, 'RemoveTags')
    t.same(await tagNames(), ['svc', 'prod'], 'removed; an absent one is no error')
    t.equal((await goTfe(t, null, 'POST', `workspaces/${id}/relationships/tags`, '{"data":[{"type":"tags","id":"tag-abc"}]}\n')).status, 422, 'a tag by id only: 422, tags are kept by name')
    const unlinked = await goTfe(t, 'updateWorkspaceByName', 'PATCH', 'organizations/acme/workspaces/svc-2', '{"data":{"type":"workspaces","attributes":{"vcs-repo":null}}}\n')
    t.equal(decode(unlinked.json.data, WORKSPACE_NEW).value['vcs-repo'], null, 'RemoveVCSConnection')
    t.equal((await goTfe(t, null, 'PATCH', 'workspaces/ws-DemoProduction01', '{"data":{"type":"workspaces","attributes":{"name":"renamed"}}}\n')).status, 422, "the demo seed's workspace: 422, which go-tfe reports")
  })

  t.test('v1.110.0: SafeDeleteByID, SafeDelete, DeleteByID, Delete', async (t) => {
    const make = async (name: string) => (await goTfe(t, null, 'POST', 'organizations/acme/workspaces', `{"data":{"type":"workspaces","attributes":{"name":"${name}"}}}\n`)).json.data.id as string
    const a = await make('safe-a')
    const read = decode((await goTfe(t, 'showWorkspace', 'GET', `workspaces/${a}`)).json.data, WORKSPACE_NEW).value
    t.match(read, { permissions: { 'can-force-delete': true }, 'resource-count': 0 }, 'what the provider reads before it deletes: safe-delete is supported, nothing under management')
    t.equal((await goTfe(t, null, 'POST', `workspaces/${a}/actions/safe-delete`)).status, 204, 'SafeDeleteByID: no body')
    t.equal((await goTfe(t, null, 'GET', `workspaces/${a}`)).status, 404)
    t.equal((await goTfe(t, null, 'POST', `workspaces/${a}/actions/safe-delete`)).status, 404, 'again: ErrResourceNotFound')
    await make('safe-b')
    t.equal((await goTfe(t, null, 'POST', 'organizations/acme/workspaces/safe-b/actions/safe-delete')).status, 204, 'SafeDelete by name')
    const c = await make('force-c')
    t.equal((await goTfe(t, null, 'DELETE', `workspaces/${c}`)).status, 204, 'DeleteByID')
    await make('force-d')
    t.equal((await goTfe(t, null, 'DELETE', 'organizations/acme/workspaces/force-d')).status, 204, 'Delete')
    t.equal((await goTfe(t, null, 'GET', 'organizations/acme/workspaces/force-d')).status, 404)
  })
})
