import t from 'tap'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEMO_SEED } from '../src/app.js'
import { projectFile } from '../src/project-file.js'

/**
 * The examples of the README and of docs/CONTRACT.md work against the demo data `npm start`
 * loads (seeds/demo.json): every id, organization, workspace, team, username and demo token they
 * name exists there, a team-workspace shown with its team and workspace is that row, and an add
 * names a pair that has no access yet. The HCL is as `terraform fmt` writes it.
 */
const DOCS = ['README.md', 'docs/CONTRACT.md']
const docs = DOCS.map((file) => ({ file, text: readFileSync(projectFile(file), 'utf8') }))

interface Named { id?: string, name?: string, username?: string, tokens?: Array<string | { token: string }> }
interface DemoSeed {
  users: Named[]
  organizations: Array<Named & {
    teams: Named[]
    workspaces: Named[]
    'team-access': Array<{ id: string, team: string, workspace: string }>
  }>
}
const demo = JSON.parse(readFileSync(DEMO_SEED, 'utf8')) as DemoSeed
/** The README's mirror reads `my-org` from HCP Terraform, which its test plays with this seed. */
const standIn = JSON.parse(readFileSync(projectFile('test/mirror/fixtures/hcp-stand-in.json'), 'utf8')) as DemoSeed

const ids = new Set<string>()
const usernames = new Set<string>()
const tokens = new Set<string>()
const organizations = new Map<string, { workspaces: Set<string>, teams: Set<string> }>()
/** Each team-workspace row: its organization's name, its team's and workspace's ids and names. */
const rows = new Map<string, { organization: string, teamId: string, workspaceId: string, workspace: string }>()
const secrets = (x: Named) => (x.tokens ?? []).map((s) => typeof s === 'string' ? s : s.token)
for (const org of standIn.organizations) organizations.set(org.name!, { workspaces: new Set(org.workspaces.map((w) => w.name!)), teams: new Set(org.teams.map((x) => x.name!)) })
for (const user of demo.users) {
  ids.add(user.id!)
  usernames.add(user.username!)
  for (const s of secrets(user)) tokens.add(s)
}
for (const org of demo.organizations) {
  ids.add(org.id!)
  for (const s of secrets(org)) tokens.add(s)
  organizations.set(org.name!, { workspaces: new Set(org.workspaces.map((w) => w.name!)), teams: new Set(org.teams.map((x) => x.name!)) })
  for (const team of org.teams) {
    ids.add(team.id!)
    for (const s of secrets(team)) tokens.add(s)
  }
  for (const ws of org.workspaces) ids.add(ws.id!)
  for (const row of org['team-access']) {
    ids.add(row.id)
    rows.set(row.id, {
      organization: org.name!,
      teamId: org.teams.find((x) => x.name === row.team)!.id!,
      workspaceId: org.workspaces.find((w) => w.name === row.workspace)!.id!,
      workspace: row.workspace
    })
  }
}

/** Every match of `pattern` in the docs: its first group, with the file it is in. */
function found (pattern: RegExp): Array<{ file: string, value: string }> {
  return docs.flatMap(({ file, text }) => [...text.matchAll(pattern)].map((m) => ({ file, value: m[1]! })))
}
/** TEAM_ID, ORG, <username>: a placeholder for the reader's own value, not an example. */
const placeholder = (value: string) => /^[A-Z][A-Z0-9_]*$|^<[^>]+>$/.test(value)
const missing = (matches: Array<{ file: string, value: string }>, exists: (value: string) => boolean) =>
  [...new Set(matches.filter((m) => !placeholder(m.value) && !exists(m.value)).map((m) => `${m.file}: ${m.value}`))]

/** Words with an id's prefix that are no id: the resource and the seed's entries. */
const NOT_IDS = new Set(['team-access', 'team-workspace', 'team-workspaces', 'team-project', 'team-projects', 'team-count'])
/** Ids the docs give only as shapes a seed may choose (§2, §6), never as a row to ask for. */
const SHAPES = new Set(['ws-prod', 'tws-1', 'team-red'])

t.test('every id in the docs is one of the demo data', async (t) => {
  const matches = found(/(?<![\w-])((?:org|user|team|ws|tws|at)-\w+(?:-\w+)*)/g).filter((m) => !NOT_IDS.has(m.value) && !SHAPES.has(m.value))
  t.ok(matches.length >= 20, `${matches.length} ids found`)
  t.same(missing(matches, (id) => ids.has(id)), [], 'ids the demo data does not have')
  for (const shape of SHAPES) t.ok(docs.some(({ text }) => text.includes(`\`${shape}\``)), `${shape} is still given as a shape`)
})

t.test('organizations, workspaces, teams and usernames are the demo data\'s', async (t) => {
  t.same(missing(found(/\/organizations\/([\w-]+)/g), (name) => organizations.has(name)), [], 'organizations in paths')
  t.same(missing(found(/"id": "([^"]+)", "type": "organizations"/g), (name) => organizations.has(name)), [], 'organizations in documents')
  t.same(missing(found(/organization\s*=\s*"([^"]+)"/g), (name) => organizations.has(name)), [], 'organizations in HCL')
  const workspaces = found(/\/organizations\/([\w-]+\/workspaces\/[\w-]+)/g)
  t.ok(workspaces.length > 0, 'workspace paths found')
  t.same(missing(workspaces, (path) => {
    const [org, , ws] = path.split('/')
    return organizations.get(org!)?.workspaces.has(ws!) ?? false
  }), [], 'workspaces by name')
  const inAcme = (kind: 'teams' | 'workspaces') => (name: string) => [...organizations.values()].some((o) => o[kind].has(name))
  t.same(missing(found(/data "tfe_workspace" "\w+" \{\s*name\s*=\s*"([^"]+)"/g), inAcme('workspaces')), [], 'data "tfe_workspace"')
  t.same(missing(found(/data "tfe_team" "\w+" \{\s*name\s*=\s*"([^"]+)"/g), inAcme('teams')), [], 'data "tfe_team"')
  const members = [
    ...found(/\{\s*"type":\s*"users",\s*"id":\s*"([^"]+)"\s*\}/g),
    ...found(/usernames\s*=\s*\[([^\]]*)\]/g).flatMap((m) => [...m.value.matchAll(/"([^"]+)"/g)].map((u) => ({ file: m.file, value: u[1]! })))
  ]
  t.ok(members.length > 0, 'usernames found')
  t.same(missing(members, (name) => usernames.has(name)), [], 'usernames')
})

t.test('every demo token the docs name works', async (t) => {
  const named = [...found(/Bearer ([\w.-]+)/g), ...found(/`([\w-]+-demo-token)`/g)]
  t.ok(named.length >= 6, `${named.length} tokens named`)
  t.same(missing(named, (token) => tokens.has(token)), [], 'tokens the demo data does not have')
})

t.test('a team-workspace shown or imported is that row; an add names a pair without one', async (t) => {
  const imports = found(/terraform import tfe_team_access\.\w+ ([\w-]+\/[\w-]+\/tws-\w+)/g)
  t.ok(imports.length > 0, 'imports found')
  for (const { file, value } of imports) {
    const [org, ws, id] = value.split('/')
    t.match(rows.get(id!), { organization: org, workspace: ws }, `${file}: import ${value}`)
  }
  const blocks = found(/```json\n([\s\S]*?)```/g)
  let shown = 0
  let adds = 0
  for (const { file, value } of blocks) {
    const row = /"id": "(tws-\w+)"/.exec(value)?.[1]
    const team = /"id": "(team-\w+)", "type": "teams"|"type": "teams", "id": "(team-\w+)"/.exec(value)
    const workspace = /"id": "(ws-\w+)", "type": "workspaces"|"type": "workspaces", "id": "(ws-\w+)"/.exec(value)
    const teamId = team?.[1] ?? team?.[2]
    const workspaceId = workspace?.[1] ?? workspace?.[2]
    if (!value.includes('"team-workspaces"') || teamId === undefined || workspaceId === undefined) continue
    if (row !== undefined) {
      shown++
      t.match(rows.get(row), { teamId, workspaceId }, `${file}: ${row} is ${teamId} on ${workspaceId}`)
    } else {
      adds++
      t.notOk([...rows.values()].some((r) => r.teamId === teamId && r.workspaceId === workspaceId), `${file}: an add of ${teamId} on ${workspaceId} is not a duplicate`)
    }
  }
  t.ok(shown > 0 && adds > 0, `${shown} rows shown, ${adds} adds`)
})

const terraform = (() => {
  try {
    execFileSync('terraform', ['version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

t.test('the HCL is formatted as terraform fmt writes it', { skip: terraform ? false : 'terraform is not installed' }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'team-access-hcl-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const blocks = found(/```hcl\n([\s\S]*?)```/g)
  t.ok(blocks.length >= 3, `${blocks.length} HCL blocks`)
  blocks.forEach(({ value }, i) => writeFileSync(join(dir, `block${i}.tf`), value))
  try {
    // an empty CLI configuration: a missing ~/.terraformrc is no warning here
    execFileSync('terraform', ['fmt', '-check', '-diff', dir], { encoding: 'utf8', env: { ...process.env, TF_CLI_CONFIG_FILE: '/dev/null' }, stdio: ['ignore', 'pipe', 'pipe'] })
    t.pass('terraform fmt -check')
  } catch (err) {
    t.fail(`terraform fmt -check: ${(err as { stdout?: string }).stdout ?? String(err)}`)
  }
})
