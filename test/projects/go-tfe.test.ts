import t from 'tap'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { validateResponse, type Operation } from '../openapi.js'

/**
 * DESIGN §11.6: the exact requests HashiCorp's go-tfe sends — read from its source as of v1.72
 * (project.go) and v1.74 (team_project_access.go), with what its changelog adds up to v1.90.0
 * (v1.75: `include=effective_tag_bindings` on project reads and lists; nothing on the wire after) — for `Projects` (List, Create,
 * Read, ReadWithOptions, Update, Delete) and `TeamProjectAccess` (List, Add, Read, Update, Remove),
 * byte for byte — `jsonapi.MarshalPayloadWithoutIncluded` writes `type` (no `id`: the options
 * structs' primary field is empty), then the attributes map with its keys sorted, then the
 * relationships as `{"type","id"}` only (sideloaded, then `included` cleared); the nested
 * permission objects are plain `json` structs, so their keys come in struct order with nil
 * pointers left out; the body ends with a newline; POST, PATCH and DELETE carry
 * `Content-Type: application/vnd.api+json`, DELETE without a body; query strings come from
 * go-querystring (keys sorted, brackets percent-encoded). Each answer is decoded as
 * `jsonapi.UnmarshalPayload`/`UnmarshalManyPayload` decodes it into go-tfe's structs (`data.type`
 * must be the struct's primary type, each attribute of the type its tag names, nested structs by
 * their own `jsonapi:"attr,…"` tags, relations by type and id, null as the zero value), and the
 * decoded values are what is asserted.
 * @see https://github.com/hashicorp/go-tfe/blob/v1.90.0/project.go
 * @see https://github.com/hashicorp/go-tfe/blob/v1.90.0/team_project_access.go
 */

type GoField = 'string' | 'bool' | 'int' | { object: Record<string, GoField> }
interface GoStruct { primary: string, attributes: Record<string, GoField>, relations: Record<string, { one: string } | { many: string }> }

/** go-tfe's `Project` (project.go): its attributes and relations. */
const PROJECT: GoStruct = {
  primary: 'projects',
  attributes: { 'is-unified': 'bool', name: 'string', description: 'string', 'auto-destroy-activity-duration': 'string' },
  relations: { organization: { one: 'organizations' }, 'effective-tag-bindings': { many: 'effective-tag-bindings' } }
}

/** go-tfe's `TeamProjectAccess` with `TeamProjectAccessProjectPermissions` and `TeamProjectAccessWorkspacePermissions` (team_project_access.go). */
const TEAM_PROJECT_ACCESS: GoStruct = {
  primary: 'team-projects',
  attributes: {
    access: 'string',
    'project-access': { object: { settings: 'string', teams: 'string', 'variable-sets': 'string' } },
    'workspace-access': {
      object: {
        runs: 'string',
        'sentinel-mocks': 'string',
        'state-versions': 'string',
        variables: 'string',
        create: 'bool',
        locking: 'bool',
        move: 'bool',
        delete: 'bool',
        'run-tasks': 'bool'
      }
    }
  },
  relations: { team: { one: 'teams' }, project: { one: 'projects' } }
}

/** go-tfe's `Pagination` (meta.pagination, decoded with encoding/json: ints, null leaves the zero). */
const PAGINATION = ['current-page', 'prev-page', 'next-page', 'total-pages', 'total-count']

/** One attribute as jsonapi decodes it: null or absent is Go's zero value (a nil pointer for a struct). */
function decodeField (value: unknown, type: GoField, path: string, errors: string[]): unknown {
  if (value === null || value === undefined) return type === 'string' ? '' : type === 'bool' ? false : type === 'int' ? 0 : null
  if (type === 'string') {
    if (typeof value === 'string') return value
  } else if (type === 'bool') {
    if (typeof value === 'boolean') return value
  } else if (type === 'int') {
    if (typeof value === 'number' && Number.isSafeInteger(value)) return value
  } else if (typeof value === 'object' && !Array.isArray(value)) {
    return Object.fromEntries(Object.entries(type.object).map(([name, field]) => [name, decodeField((value as Record<string, unknown>)[name], field, `${path}.${name}`, errors)]))
  }
  errors.push(`${path}: ${JSON.stringify(value)} does not decode into a Go ${typeof type === 'string' ? type : 'struct'}`)
  return undefined
}

/** A related node as jsonapi resolves it: the related struct's primary type must match; decoded here to its id. */
function decodeRelated (node: any, type: string, path: string, errors: string[]): string {
  if (node?.type !== type) errors.push(`${path}: Trying to Unmarshal an object of type "${String(node?.type)}", but "${type}" does not match`)
  if (typeof node?.id !== 'string') errors.push(`${path}.id: not a string`)
  return node?.id
}

/** What `jsonapi.UnmarshalPayload` into a pointer to the struct gives: its fields by tag (relations as ids), and the errors it would raise. */
function decode (node: any, struct: GoStruct): { errors: string[], value: Record<string, unknown> } {
  const errors: string[] = []
  if (node?.type !== struct.primary) errors.push(`Trying to Unmarshal an object of type "${String(node?.type)}", but "${struct.primary}" does not match`)
  if (typeof node?.id !== 'string') errors.push('data.id: not a string')
  const value: Record<string, unknown> = { id: node?.id }
  for (const [name, type] of Object.entries(struct.attributes)) value[name] = decodeField(node?.attributes?.[name], type, `attributes.${name}`, errors)
  for (const [name, relation] of Object.entries(struct.relations)) {
    const data = node?.relationships?.[name]?.data
    if ('one' in relation) value[name] = data === undefined || data === null ? null : decodeRelated(data, relation.one, `relationships.${name}`, errors)
    else if (data === undefined || data === null) value[name] = null
    else if (!Array.isArray(data)) errors.push(`relationships.${name}: not an array`)
    else value[name] = data.map((item: unknown, i: number) => decodeRelated(item, relation.many, `relationships.${name}[${i}]`, errors))
  }
  return { errors, value }
}

/** What `UnmarshalManyPayload` plus go-tfe's `parsePagination` give for a list: the items and the pagination (zeros when there is no meta). */
function decodeList (doc: any, struct: GoStruct): { errors: string[], items: Array<Record<string, unknown>>, pagination: Record<string, number> } {
  const errors: string[] = []
  if (!Array.isArray(doc?.data)) return { errors: ['data: not an array'], items: [], pagination: {} }
  const items = doc.data.map((node: unknown) => {
    const decoded = decode(node, struct)
    errors.push(...decoded.errors)
    return decoded.value
  })
  const pagination = Object.fromEntries(PAGINATION.map((name) => [name, decodeField(doc.meta?.pagination?.[name], 'int', `meta.pagination.${name}`, errors) as number]))
  return { errors, items, pagination }
}

t.test(`go-tfe's Projects and TeamProjectAccess, replayed, on ${ENGINE}`, async (t) => {
  const app: FastifyInstance = await build(t, { seed: world })

  /** A request as go-tfe's client makes it; every 2xx answer is checked against the OpenAPI description too. */
  const goTfe = async (t: Test, operation: Operation | null, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: string) => {
    const res = await app.inject({
      method,
      url: `/api/v2/${path}`,
      headers: {
        authorization: `Bearer ${TOKENS.owner}`,
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

  let platform = ''
  let minimal = ''

  t.test('Projects.Create: name and description, then a name only (Description nil: left out)', async (t) => {
    const created = await goTfe(t, 'createProject', 'POST', 'organizations/acme/projects',
      '{"data":{"type":"projects","attributes":{"description":"the platform team","name":"platform"}}}\n')
    t.equal(created.status, 201, 'any 2xx is success; HCP answers 201')
    const decoded = decode(created.json.data, PROJECT)
    t.same(decoded.errors, [], 'decodes into Project')
    platform = decoded.value.id as string
    t.match(platform, /^prj-[a-zA-Z0-9]{16}$/, 'an id the provider validates')
    t.same(decoded.value, { id: platform, 'is-unified': false, name: 'platform', description: 'the platform team', 'auto-destroy-activity-duration': '', organization: 'acme', 'effective-tag-bindings': null })

    const bare = await goTfe(t, 'createProject', 'POST', 'organizations/acme/projects', '{"data":{"type":"projects","attributes":{"name":"minimal"}}}\n')
    t.equal(bare.status, 201)
    const decodedBare = decode(bare.json.data, PROJECT)
    t.same(decodedBare.errors, [])
    minimal = decodedBare.value.id as string
    t.match(decodedBare.value, { name: 'minimal', description: '', organization: 'acme' }, 'a null description is the zero string')
  })

  t.test('Projects.Read and ReadWithOptions(include=effective_tag_bindings)', async (t) => {
    const read = await goTfe(t, 'showProject', 'GET', `projects/${platform}`)
    t.equal(read.status, 200)
    const decoded = decode(read.json.data, PROJECT)
    t.same(decoded.errors, [])
    t.match(decoded.value, { id: platform, name: 'platform', description: 'the platform team', organization: 'acme' })

    const withTags = await goTfe(t, 'showProject', 'GET', `projects/${platform}?include=effective_tag_bindings`)
    t.equal(withTags.status, 200)
    t.same(decode(withTags.json.data, PROJECT), decoded, 'the same project, no tag bindings (none kept here)')
    t.notOk('included' in withTags.json && withTags.json.included.length > 0, 'nothing included')
  })

  t.test('Projects.List: no options, filter[names], q, page[...]', async (t) => {
    const all = await goTfe(t, 'listProjects', 'GET', 'organizations/acme/projects')
    t.equal(all.status, 200)
    const decoded = decodeList(all.json, PROJECT)
    t.same(decoded.errors, [])
    t.same(decoded.items.map((p) => p.name), ['Default Project', 'minimal', 'platform'])
    t.same(decoded.pagination, { 'current-page': 1, 'prev-page': 0, 'next-page': 0, 'total-pages': 1, 'total-count': 3 })

    const byName = await goTfe(t, 'listProjects', 'GET', 'organizations/acme/projects?filter%5Bnames%5D=platform')
    t.equal(byName.status, 200)
    t.same(decodeList(byName.json, PROJECT).items.map((p) => p.id), [platform], 'ProjectListOptions.Name')

    const byQuery = await goTfe(t, 'listProjects', 'GET', 'organizations/acme/projects?q=plat')
    t.same(decodeList(byQuery.json, PROJECT).items.map((p) => p.id), [platform], 'ProjectListOptions.Query')

    const paged = await goTfe(t, 'listProjects', 'GET', 'organizations/acme/projects?include=effective_tag_bindings&page%5Bnumber%5D=2&page%5Bsize%5D=1')
    t.equal(paged.status, 200)
    const page = decodeList(paged.json, PROJECT)
    t.same(page.errors, [])
    t.same(page.items.map((p) => p.name), ['minimal'])
    t.same(page.pagination, { 'current-page': 2, 'prev-page': 1, 'next-page': 3, 'total-pages': 3, 'total-count': 3 })
  })

  t.test('Projects.Update: name and description; a name only; DeleteAllTagBindings (relationships only)', async (t) => {
    const updated = await goTfe(t, 'updateProject', 'PATCH', `projects/${platform}`,
      '{"data":{"type":"projects","attributes":{"description":"platform and tooling","name":"platform-tools"}}}\n')
    t.equal(updated.status, 200, 'no data.id in the body')
    const decoded = decode(updated.json.data, PROJECT)
    t.same(decoded.errors, [])
    t.match(decoded.value, { id: platform, name: 'platform-tools', description: 'platform and tooling', organization: 'acme' })

    const renamed = await goTfe(t, 'updateProject', 'PATCH', `projects/${platform}`, '{"data":{"type":"projects","attributes":{"name":"platform"}}}\n')
    t.equal(renamed.status, 200)
    t.match(decode(renamed.json.data, PROJECT).value, { name: 'platform', description: 'platform and tooling' }, 'Description nil: kept')

    const untagged = await goTfe(t, 'updateProject', 'PATCH', `projects/${platform}`, '{"data":{"type":"projects","relationships":{"tag-bindings":{"data":[]}}}}\n')
    t.equal(untagged.status, 200, 'DeleteAllTagBindings: accepted, nothing changes')
    t.match(decode(untagged.json.data, PROJECT).value, { name: 'platform', description: 'platform and tooling' })
  })

  const rows: Record<string, string> = {}
  const relationships = (team: string) => `"relationships":{"project":{"data":{"type":"projects","id":"${platform}"}},"team":{"data":{"type":"teams","id":"${team}"}}}`

  t.test('TeamProjectAccess.Add: every fixed level with the objects left out, and custom with every key', async (t) => {
    const implied = {
      read: { project: { settings: 'read', teams: 'none', 'variable-sets': 'none' }, workspace: { runs: 'read', 'sentinel-mocks': 'none', 'state-versions': 'read', variables: 'read', create: false, locking: false, move: false, delete: false, 'run-tasks': false } },
      write: { project: { settings: 'read', teams: 'none', 'variable-sets': 'none' }, workspace: { runs: 'apply', 'sentinel-mocks': 'read', 'state-versions': 'write', variables: 'write', create: false, locking: true, move: false, delete: false, 'run-tasks': false } },
      maintain: { project: { settings: 'read', teams: 'none', 'variable-sets': 'none' }, workspace: { runs: 'apply', 'sentinel-mocks': 'read', 'state-versions': 'write', variables: 'write', create: true, locking: true, move: false, delete: true, 'run-tasks': true } },
      admin: { project: { settings: 'delete', teams: 'manage', 'variable-sets': 'write' }, workspace: { runs: 'apply', 'sentinel-mocks': 'read', 'state-versions': 'write', variables: 'write', create: true, locking: true, move: true, delete: true, 'run-tasks': true } }
    }
    const teams = { read: 'team-green', write: 'team-writers', maintain: 'team-red', admin: 'team-blue' } as const
    for (const level of ['read', 'write', 'maintain', 'admin'] as const) {
      const added = await goTfe(t, 'addTeamProjectAccess', 'POST', 'team-projects', `{"data":{"type":"team-projects","attributes":{"access":"${level}"},${relationships(teams[level])}}}\n`)
      t.equal(added.status, 201, `Add ${level}: any 2xx is success`)
      const decoded = decode(added.json.data, TEAM_PROJECT_ACCESS)
      t.same(decoded.errors, [], `${level}: decodes into TeamProjectAccess`)
      rows[level] = decoded.value.id as string
      t.match(rows[level], /^tprj-/)
      t.same(decoded.value, { id: rows[level], access: level, 'project-access': implied[level].project, 'workspace-access': implied[level].workspace, team: teams[level], project: platform }, `${level}: the implied permissions`)
    }

    const custom = await goTfe(t, 'addTeamProjectAccess', 'POST', 'team-projects',
      '{"data":{"type":"team-projects","attributes":{"access":"custom",' +
      '"project-access":{"settings":"update","teams":"read","variable-sets":"read"},' +
      '"workspace-access":{"runs":"plan","sentinel-mocks":"read","state-versions":"read-outputs","variables":"write","create":true,"locking":true,"move":false,"delete":false,"run-tasks":true}},' +
      `${relationships('team-readers')}}}\n`)
    t.equal(custom.status, 201)
    const decoded = decode(custom.json.data, TEAM_PROJECT_ACCESS)
    t.same(decoded.errors, [])
    rows.custom = decoded.value.id as string
    t.same(decoded.value, {
      id: rows.custom,
      access: 'custom',
      'project-access': { settings: 'update', teams: 'read', 'variable-sets': 'read' },
      'workspace-access': { runs: 'plan', 'sentinel-mocks': 'read', 'state-versions': 'read-outputs', variables: 'write', create: true, locking: true, move: false, delete: false, 'run-tasks': true },
      team: 'team-readers',
      project: platform
    }, 'what was set, every key')

    const partial = await goTfe(t, 'addTeamProjectAccess', 'POST', 'team-projects',
      `{"data":{"type":"team-projects","attributes":{"access":"custom","workspace-access":{"runs":"apply"}},${relationships('team-managers')}}}\n`)
    t.equal(partial.status, 201, 'custom with only some keys (ProjectAccess nil: left out)')
    const decodedPartial = decode(partial.json.data, TEAM_PROJECT_ACCESS)
    t.same(decodedPartial.errors, [])
    rows.partial = decodedPartial.value.id as string
    t.same(decodedPartial.value['project-access'], { settings: 'read', teams: 'none', 'variable-sets': 'none' }, 'the rest at the custom defaults')
    t.same(decodedPartial.value['workspace-access'], { runs: 'apply', 'sentinel-mocks': 'none', 'state-versions': 'none', variables: 'none', create: false, locking: false, move: false, delete: false, 'run-tasks': false })
  })

  t.test('TeamProjectAccess.List: filter[project][id], no page parameters', async (t) => {
    const list = await goTfe(t, 'listTeamProjects', 'GET', `team-projects?filter%5Bproject%5D%5Bid%5D=${platform}`)
    t.equal(list.status, 200)
    const decoded = decodeList(list.json, TEAM_PROJECT_ACCESS)
    t.same(decoded.errors, [])
    t.same(decoded.items.map((row) => [row.id, row.team, row.access]).sort(), [
      [rows.read, 'team-green', 'read'], [rows.write, 'team-writers', 'write'], [rows.maintain, 'team-red', 'maintain'],
      [rows.admin, 'team-blue', 'admin'], [rows.custom, 'team-readers', 'custom'], [rows.partial, 'team-managers', 'custom']
    ].sort(), 'every row, each with its team')
    t.ok(decoded.pagination['current-page']! >= decoded.pagination['total-pages']!, 'a caller paging on CurrentPage < TotalPages stops after this one')

    const paged = await goTfe(t, 'listTeamProjects', 'GET', `team-projects?filter%5Bproject%5D%5Bid%5D=${platform}&page%5Bnumber%5D=1&page%5Bsize%5D=2`)
    t.equal(paged.status, 200)
    const page = decodeList(paged.json, TEAM_PROJECT_ACCESS)
    t.same(page.errors, [])
    t.equal(page.items.length, 2)
    t.same(page.pagination, { 'current-page': 1, 'prev-page': 0, 'next-page': 2, 'total-pages': 3, 'total-count': 6 })
  })

  t.test('TeamProjectAccess.Read', async (t) => {
    const read = await goTfe(t, 'showTeamProject', 'GET', `team-projects/${rows.custom}`)
    t.equal(read.status, 200)
    const decoded = decode(read.json.data, TEAM_PROJECT_ACCESS)
    t.same(decoded.errors, [])
    t.match(decoded.value, { id: rows.custom, access: 'custom', team: 'team-readers', project: platform, 'project-access': { settings: 'update' }, 'workspace-access': { runs: 'plan', 'run-tasks': true } })
  })

  t.test('TeamProjectAccess.Update: a fixed level to custom, custom keys alone, and back to a fixed level', async (t) => {
    const toCustom = await goTfe(t, 'updateTeamProjectAccess', 'PATCH', `team-projects/${rows.write}`,
      '{"data":{"type":"team-projects","attributes":{"access":"custom","project-access":{"teams":"manage"},"workspace-access":{"runs":"plan","create":true,"move":true}}}}\n')
    t.equal(toCustom.status, 200, 'no data.id in the body')
    const custom = decode(toCustom.json.data, TEAM_PROJECT_ACCESS)
    t.same(custom.errors, [])
    t.same(custom.value, {
      id: rows.write,
      access: 'custom',
      'project-access': { settings: 'read', teams: 'manage', 'variable-sets': 'none' },
      'workspace-access': { runs: 'plan', 'sentinel-mocks': 'read', 'state-versions': 'write', variables: 'write', create: true, locking: true, move: true, delete: false, 'run-tasks': false },
      team: 'team-writers',
      project: platform
    }, "custom from write: write's values, the keys sent over them")

    const keys = await goTfe(t, 'updateTeamProjectAccess', 'PATCH', `team-projects/${rows.write}`,
      '{"data":{"type":"team-projects","attributes":{"access":"custom","workspace-access":{"variables":"read","locking":false}}}}\n')
    t.equal(keys.status, 200)
    t.match(decode(keys.json.data, TEAM_PROJECT_ACCESS).value, { access: 'custom', 'project-access': { teams: 'manage' }, 'workspace-access': { runs: 'plan', variables: 'read', locking: false, move: true } }, 'only the keys sent change')

    const back = await goTfe(t, 'updateTeamProjectAccess', 'PATCH', `team-projects/${rows.write}`, '{"data":{"type":"team-projects","attributes":{"access":"read"}}}\n')
    t.equal(back.status, 200)
    const fixed = decode(back.json.data, TEAM_PROJECT_ACCESS)
    t.same(fixed.errors, [])
    t.same(fixed.value, {
      id: rows.write,
      access: 'read',
      'project-access': { settings: 'read', teams: 'none', 'variable-sets': 'none' },
      'workspace-access': { runs: 'read', 'sentinel-mocks': 'none', 'state-versions': 'read', variables: 'read', create: false, locking: false, move: false, delete: false, 'run-tasks': false },
      team: 'team-writers',
      project: platform
    }, 'a fixed level resets both objects to its values')

    const same = await goTfe(t, 'updateTeamProjectAccess', 'PATCH', `team-projects/${rows.admin}`, '{"data":{"type":"team-projects","attributes":{"access":"admin"}}}\n')
    t.equal(same.status, 200, 'Update always sends access: the same level again changes nothing')
    t.match(decode(same.json.data, TEAM_PROJECT_ACCESS).value, { access: 'admin', 'project-access': { teams: 'manage' } })
  })

  t.test('TeamProjectAccess.Remove and Projects.Delete: no body; a second one is the 404 go-tfe calls ErrResourceNotFound', async (t) => {
    for (const id of Object.values(rows)) t.equal((await goTfe(t, null, 'DELETE', `team-projects/${id}`)).status, 204, `Remove ${id}`)
    const again = await goTfe(t, null, 'DELETE', `team-projects/${rows.read!}`)
    t.equal(again.status, 404)
    t.same(again.json, { errors: [{ status: '404', title: 'not found' }] })
    t.equal((await goTfe(t, null, 'GET', `team-projects/${rows.read!}`)).status, 404, 'Read: gone')
    const empty = decodeList((await goTfe(t, 'listTeamProjects', 'GET', `team-projects?filter%5Bproject%5D%5Bid%5D=${platform}`)).json, TEAM_PROJECT_ACCESS)
    t.same(empty.items, [])

    for (const id of [platform, minimal]) t.equal((await goTfe(t, null, 'DELETE', `projects/${id}`)).status, 204, `Delete ${id}`)
    t.equal((await goTfe(t, null, 'DELETE', `projects/${platform}`)).status, 404)
    t.equal((await goTfe(t, null, 'GET', `projects/${platform}`)).status, 404, 'Read: gone')
  })
})
