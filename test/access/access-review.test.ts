import t from 'tap'
import { bearer, build, ENGINE } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { AccessReviewRepository, NoLongerOwner, type ReviewEntry } from '../../src/effective-access/access-review-repository.js'
import { resolveToken, type Caller } from '../../src/auth/caller.js'
import { tokenDigest } from '../../src/auth/token-digest.js'
import { reviewWorld } from '../../bench/review-world.js'

/**
 * The access review (DESIGN §12.1), `GET /organizations/:org/access-review`: owners only (everyone
 * else the 404 of a missing organization, byte for byte, as JSON:API and as CSV), every grant
 * source, secret teams, entries equal to the workspaces' own effective-access answers, pagination,
 * and the CSV — its header, one row per user, team and workspace, a formula-like value neutralised.
 */
const FORMULA_USER = '=HYPERLINK("http://x.example","click")'
/** Formulas behind a separator a spreadsheet may split on (`;`, tab; OWASP's CSV injection case). */
const SPLIT_USER = "x;=cmd|' /C calc'!A0"
const TAB_USER = 'tab\t=1+1'
const seed = structuredClone(world) as any
const acme = seed.organizations[0]
seed.users.push({ id: 'user-formula', username: FORMULA_USER }, { id: 'user-split', username: SPLIT_USER }, { id: 'user-tab', username: TAB_USER })
acme.teams = acme.teams.map((team: any) => team.name === 'green'
  ? { ...team, members: [FORMULA_USER, SPLIT_USER, TAB_USER] }
  : team.name === 'managers'
    ? { ...team, 'organization-access': { 'manage-workspaces': true, 'manage-projects': true } }
    : team.name === 'readers' ? { ...team, 'organization-access': { 'read-workspaces': true, 'read-projects': true } } : team)
acme.projects = [{ id: 'prj-platform', name: 'platform' }]
acme.workspaces = acme.workspaces.map((workspace: any) => workspace.name === 'dev' ? { ...workspace, project: 'platform' } : workspace)
acme['project-access'] = [{ id: 'tprj-green-platform', team: 'green', project: 'platform', access: 'maintain' }]

const PATH = '/api/v2/organizations/acme/access-review'
/** The owner, as a host vouches for it (no token): what the repository's stream reads as. */
const OWNER: Caller = { kind: 'user', userId: 'user-owner' }
const CSV = { accept: 'text/csv' }

t.test(`the access review (${ENGINE})`, async (t) => {
  const app = await build(t, { seed })
  const get = async (token: string, query = '', headers: Record<string, string> = {}) =>
    await app.inject({ url: `${PATH}${query}`, headers: { ...bearer(token), ...headers } })

  const all = await get(TOKENS.owner, '?page[size]=100')
  t.equal(all.statusCode, 200)
  t.match(all.headers['content-type'], /^application\/vnd\.api\+json/)
  const entries = all.json().data as any[]
  t.equal(all.json().meta.pagination['total-count'], entries.length)

  // the same answer as the workspaces' own effective access (DESIGN §10.2), for every workspace
  for (const workspace of ['ws-prod', 'ws-dev']) {
    const own = (await app.inject({ url: `/api/v2/workspaces/${workspace}/effective-access`, headers: bearer(TOKENS.owner) })).json().data as any[]
    const review = entries.filter((e) => e.relationships.workspace.data.id === workspace)
    const strip = ({ 'team-name': _a, 'team-visibility': _b, 'team-members': _c, 'workspace-name': _d, 'project-name': _e, ...rest }: any) => rest
    t.same(review.map((e) => [e.relationships.team.data.id, strip(e.attributes)]).sort(),
      own.map((e) => [e.relationships.team.data.id, e.attributes]).sort(), `${workspace}: every team, level, permission and grant as its effective access says`)
  }
  const kinds = new Set(entries.flatMap((e) => e.attributes.grants.map((g: any) => g.kind)))
  t.same([...kinds].sort(), ['organization-access.manage-projects', 'organization-access.manage-workspaces', 'organization-access.read-projects',
    'organization-access.read-workspaces', 'owners', 'team-access', 'team-project'], 'every grant source')
  t.ok(entries.some((e) => e.attributes['team-visibility'] === 'secret' && e.attributes['team-name'] === 'red'), 'secret teams, for owners')
  t.match(entries.find((e) => e.id === 'team-green:ws-dev'), {
    attributes: { access: 'admin', 'team-members': [FORMULA_USER], 'workspace-name': 'dev', 'project-name': 'platform', grants: [{ kind: 'team-project', 'team-project': 'tprj-green-platform', 'project-access': 'maintain' }] },
    relationships: { project: { data: { id: 'prj-platform', type: 'projects' } } }
  }, 'a project grant, with its project')
  t.notOk(entries.some((e) => e.relationships.team.data.id === 'team-globex'), 'nothing of another organization')
  const order = entries.map((e) => [e.attributes['team-name'], e.attributes['workspace-name']])
  t.same(order, [...order].sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0), 'by team name, then workspace name')

  // pages
  const walked: any[] = []
  let next: string | null = `${PATH}?page[number]=1&page[size]=3`
  while (next !== null) {
    const page: any = (await app.inject({ url: next.replace(/^https?:\/\/[^/]+/, ''), headers: bearer(TOKENS.owner) })).json()
    walked.push(...page.data)
    next = page.links.next
  }
  t.same(walked, entries, 'the pages, walked by their links, are the whole')
  t.equal((await get(TOKENS.owner, '?page[size]=0')).statusCode, 422)

  // who may: owners (a member of the owners team, its token, the organization token); anyone else the 404 of no organization
  for (const token of [TOKENS.ownersTeam, TOKENS.organization]) t.same((await get(token, '?page[size]=100')).json().data, entries)
  const missing = await get(TOKENS.owner, '', {})
  const nowhere = await app.inject({ url: '/api/v2/organizations/nowhere/access-review', headers: bearer(TOKENS.owner) })
  t.equal(nowhere.statusCode, 404)
  t.equal(missing.statusCode, 200)
  t.match(missing.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(missing.json(), { data: entries }, 'no page parameter: every entry in one document, as the pages give them (DESIGN §4), streamed')
  for (const [name, token] of Object.entries(TOKENS).filter(([name]) => !['owner', 'ownersTeam', 'organization'].includes(name))) {
    for (const headers of [{}, CSV]) {
      const refused = await get(token, '', headers)
      t.equal(refused.statusCode, 404, `${name}: 404`)
      t.equal(refused.body, nowhere.body, `${name}: the body of a missing organization`)
    }
  }
  t.equal((await app.inject({ url: PATH })).statusCode, 401)

  // CSV: the whole organization, one row per user, team and workspace
  const csv = await get(TOKENS.owner, '', CSV)
  t.equal(csv.statusCode, 200)
  t.match(csv.headers['content-type'], /^text\/csv; charset=utf-8/)
  t.match(csv.headers['content-disposition'], /^attachment; filename="acme-access-review-\d{4}-\d{2}-\d{2}\.csv"$/)
  const lines = csv.body.split('\r\n')
  t.equal(lines.pop(), '', 'every line ends with CRLF')
  t.equal(lines[0], 'username,team,team_visibility,workspace,project,access,runs,variables,state_versions,sentinel_mocks,workspace_locking,run_tasks,granted_by')
  const expected = entries.reduce((n, e) => n + Math.max(1, e.attributes['team-members'].length), 0)
  t.equal(lines.length - 1, expected, 'one row per member of each entry\'s team (one for a team with none)')
  t.ok(lines.includes('red-member,red,secret,prod,Default Project,custom,plan,none,none,none,true,false,team-access tws-red-prod'), 'a row as an auditor reads it')
  const formula = lines.find((line) => line.includes('HYPERLINK'))!
  t.ok(formula.startsWith('"\'=HYPERLINK(""http://x.example"",""click"")",green,organization,'), 'a formula-like value starts with a quote, inside a quoted field')
  t.notOk(lines.slice(1).some((line) => /^[=+\-@]/.test(line) || /,[=+\-@]/.test(line)), 'no field starts as a formula')
  t.ok(lines.some((line) => line.startsWith(`"${SPLIT_USER.replaceAll('"', '""')}",green,`)), 'a value with a ; is quoted whole')
  t.ok(lines.some((line) => line.startsWith(`"${TAB_USER}",green,`)), 'a value with a tab is quoted whole')
  // split as a spreadsheet may (on , ; or tab, outside quotes): no cell starts as a formula
  const cells = lines.slice(1).flatMap((line) => line.match(/"(?:[^"]|"")*"|[^,;\t]+|(?<=[,;\t])(?=[,;\t]|$)/g) ?? [])
  t.notOk(cells.some((cell) => /^[=+\-@\t\r]/.test(cell)), 'no cell starts as a formula, whatever the separator')
  // the CSV reads a team's workspaces a slice at a time: slices of one walk the same entries
  const repository = new AccessReviewRepository(app.db)
  const walk = async (size: number) => {
    const found = []
    for await (const slice of repository.entries(OWNER, 'org-acme', size)) found.push(...slice)
    return found
  }
  const whole = await walk(100)
  const sliced = await walk(1)
  t.equal(whole.length, entries.length, 'as many as the document\'s entries')
  t.same(whole.map((e) => `${e.team.id}:${e.workspace.id}`), entries.map((e) => e.id), 'in the document\'s order')
  t.same(sliced, whole, 'slices of one workspace, walked, are the whole')
  t.same(new Set(lines.slice(1).map((line) => line.replace(/^"(?:[^"]|"")*"/, 'quoted').split(',')[1])), new Set(entries.map((e) => e.attributes['team-name'])), 'every team of the entries')

  // a team's grants are read before its workspaces: a row made between the two reads is read with them
  const index = whole.findIndex((e, i) => i > 0 && whole[i - 1]!.team.id === e.team.id && !e.grants.some((g) => g.kind === 'team-access' || g.kind === 'owners'))
  const [before, later] = [whole[index - 1]!, whole[index]!]
  const stream = repository.entries(OWNER, 'org-acme', 1)
  let step = await stream.next()
  while (step.done !== true && (step.value[0]!.team.id !== before.team.id || step.value[0]!.workspace.id !== before.workspace.id)) step = await stream.next()
  const made = await app.inject({ method: 'POST', url: '/api/v2/team-workspaces', headers: { ...bearer(TOKENS.owner), 'content-type': 'application/vnd.api+json' }, payload: { data: { type: 'team-workspaces', attributes: { access: 'admin' }, relationships: { team: { data: { id: later.team.id, type: 'teams' } }, workspace: { data: { id: later.workspace.id, type: 'workspaces' } } } } } })
  t.equal(made.statusCode, 200)
  const after = ((await stream.next()).value as ReviewEntry[])[0]!
  t.same([after.workspace.id, after.access, after.grants.map((g) => g.kind).includes('team-access')], [later.workspace.id, 'admin', true], 'the new row, with its grant, in the stream under way')
  await stream.return(undefined)
  // and a row changed between two slices of its team is read as it is then (each slice brings its own grants)
  const changing = repository.entries(OWNER, 'org-acme', 1)
  step = await changing.next()
  while (step.done !== true && (step.value[0]!.team.id !== before.team.id || step.value[0]!.workspace.id !== before.workspace.id)) step = await changing.next()
  const changed = await app.inject({ method: 'PATCH', url: `/api/v2/team-workspaces/${made.json().data.id as string}`, headers: { ...bearer(TOKENS.owner), 'content-type': 'application/vnd.api+json' }, payload: { data: { type: 'team-workspaces', attributes: { access: 'read' } } } })
  t.equal(changed.statusCode, 200)
  const now = ((await changing.next()).value as ReviewEntry[])[0]!
  t.same([now.workspace.id, now.grants.find((g) => g.kind === 'team-access')?.access], [later.workspace.id, 'read'], 'the changed row as it is now, not as the team\'s first slice read it')
  await changing.return(undefined)
  t.equal((await app.inject({ method: 'DELETE', url: `/api/v2/team-workspaces/${made.json().data.id as string}`, headers: bearer(TOKENS.owner) })).statusCode, 204)
})

t.test(`the access review's pages on a random world (${ENGINE})`, async (t) => {
  // each page reads only the teams it overlaps (issue 43): every page, and a deep one at random,
  // must still be the whole document's entries cut in order, with the whole's count
  const chosen = Number(process.env.SEED ?? Math.floor(Math.random() * 2 ** 31))
  t.comment(`world seed ${chosen} (SEED=${chosen} replays it)`)
  const { document, organization, tokens } = reviewWorld({ teams: 40, workspaces: 90, projects: 6, users: 60, rowsPerTeam: 6, seed: chosen })
  const org = (document as any).organizations[0]
  // teams that reach nothing (no row; a project row on an empty project) stand between the others
  org.projects.push({ id: 'prj-review-empty', name: 'empty' })
  org.teams.push({ id: 'team-review-none', name: 'team-015a', visibility: 'organization', members: [] }, { id: 'team-review-empty', name: 'team-002a', visibility: 'secret', members: [] })
  org['project-access'].push({ team: 'team-002a', project: 'empty', access: 'admin' })
  const app = await build(t, { seed: document })
  const path = `/api/v2/organizations/${organization}/access-review`
  const get = async (query: string) => {
    const res = await app.inject({ url: `${path}${query}`, headers: bearer(tokens.owner) })
    t.equal(res.statusCode, 200, query)
    return res.json()
  }
  const whole = (await get('')).data as any[]
  t.ok(whole.length > 400, `${whole.length} entries`)
  t.notOk(whole.some((e) => ['team-review-none', 'team-review-empty'].includes(e.relationships.team.data.id)), 'no entry of a team that reaches nothing')

  for (const size of [7, 100]) {
    const walked: any[] = []
    const pages = Math.ceil(whole.length / size)
    for (let number = 1; number <= pages + 1; number++) {
      const page = await get(`?page[number]=${number}&page[size]=${size}`)
      if (page.meta.pagination['total-count'] !== whole.length) t.fail(`page ${number} of ${size}: total-count ${page.meta.pagination['total-count'] as number}`)
      walked.push(...page.data)
    }
    t.same(walked, whole, `pages of ${size}, walked to one past the last, are the whole document`)
  }
  // the stream reads the teams in batches of about a slice's pairs: any slice walks the same entries
  const repository = new AccessReviewRepository(app.db)
  const owner: Caller = { kind: 'organization', organizationId: org.id }
  const stream = async (size: number) => {
    const found: string[] = []
    let statements = 0
    for await (const slice of repository.entries(owner, org.id, size, async (read) => { statements++; return await read() })) {
      found.push(...slice.map((e) => `${e.team.id}:${e.workspace.id} ${e.access!} ${e.grants.map((g) => g.kind).join()}`))
    }
    return { found, statements }
  }
  for (const size of [1, 7, 50, 1000]) {
    const { found, statements } = await stream(size)
    t.same(found, whole.map((e) => `${e.id as string} ${e.attributes.access as string} ${e.attributes.grants.map((g: any) => g.kind).join()}`), `slices of ${size}: the whole document, in order, each with its access and grants (${statements} statements)`)
    if (size === 1000) t.equal(statements, 2, 'one batch: the teams, then every team together in one statement')
  }
  // a team's count only places it in a batch: a team that reached nothing when the stream began
  // and gains a row before its batch is read is read with it
  const before = org.teams.map((team: any) => team.name as string).filter((name: string) => name < 'team-015a').sort().at(-1)
  const walk = repository.entries(owner, org.id, 1)
  const read: string[] = []
  let step = await walk.next()
  while (step.done !== true && step.value[0]!.team.name !== before) { read.push(...step.value.map((e) => `${e.team.id}:${e.workspace.id}`)); step = await walk.next() }
  const workspace = org.workspaces[0].id as string
  const made = await app.inject({ method: 'POST', url: '/api/v2/team-workspaces', headers: { ...bearer(tokens.owner), 'content-type': 'application/vnd.api+json' }, payload: { data: { type: 'team-workspaces', attributes: { access: 'read' }, relationships: { team: { data: { id: 'team-review-none', type: 'teams' } }, workspace: { data: { id: workspace, type: 'workspaces' } } } } } })
  t.equal(made.statusCode, 200, 'a row for the team that reached nothing')
  for (; step.done !== true; step = await walk.next()) read.push(...step.value.map((e) => `${e.team.id}:${e.workspace.id}`))
  t.ok(read.includes(`team-review-none:${workspace}`), 'the team\'s new row, read in its turn')
  t.equal(read.length, whole.length + 1, 'and nothing else new')
  t.equal((await app.inject({ method: 'DELETE', url: `/api/v2/team-workspaces/${made.json().data.id as string}`, headers: bearer(tokens.owner) })).statusCode, 204)

  for (let i = 0; i < 6; i++) {
    const size = 1 + Math.floor(Math.random() * 100)
    const number = 1 + Math.floor(Math.random() * Math.ceil(whole.length / size))
    const page = await get(`?page[number]=${number}&page[size]=${size}`)
    t.same(page.data, whole.slice((number - 1) * size, number * size), `page ${number} of ${size}: its slice of the whole`)
    t.equal(page.meta.pagination['total-count'], whole.length, 'total-count exact')
    t.equal(page.meta.pagination['total-pages'], Math.ceil(whole.length / size))
  }
})

/**
 * A stream outlives no revocation (issue 43, item 7): each of its statements asks again whether its
 * caller owns the organization, so a stream whose token is revoked midway reads nothing more — not
 * even a grant made after the revocation — and ends unfinished.
 */
const refusal = async (step: Promise<unknown>): Promise<unknown> => await step.then(() => undefined, (err: unknown) => err)

t.test(`a stream stops when its caller stops being an owner (${ENGINE})`, async (t) => {
  const app = await build(t, { seed })
  const repository = new AccessReviewRepository(app.db)
  // the caller as authentication makes it: the subject, and the digest of the token it came with
  const teamCaller: Caller = { ...(await resolveToken(app.db, TOKENS.ownersTeam))!, token: tokenDigest(TOKENS.ownersTeam) }
  t.equal(teamCaller.kind, 'team', 'the owners team\'s token')
  const stream = repository.entries(teamCaller, 'org-acme', 1)
  const first = await stream.next()
  t.equal(first.done, false, 'the owners team reads the stream')
  const { id: tokenId } = await app.db.selectFrom('tokens').where('digest', '=', tokenDigest(TOKENS.ownersTeam)).select('id').executeTakeFirstOrThrow()
  const revoked = await app.inject({ method: 'DELETE', url: `/api/v2/authentication-tokens/${tokenId}`, headers: bearer(TOKENS.owner) })
  t.equal(revoked.statusCode, 204, `its token is revoked: ${revoked.body}`)
  const made = await app.inject({ method: 'POST', url: '/api/v2/team-workspaces', headers: { ...bearer(TOKENS.owner), 'content-type': 'application/vnd.api+json' }, payload: { data: { type: 'team-workspaces', attributes: { access: 'admin' }, relationships: { team: { data: { id: 'team-blue', type: 'teams' } }, workspace: { data: { id: 'ws-dev', type: 'workspaces' } } } } } })
  t.ok([200, 422].includes(made.statusCode), 'a grant made after the revocation')
  t.ok(await refusal(stream.next()) instanceof NoLongerOwner, 'the next slice is refused: nothing more is read')
  // over HTTP: the same token is refused before any stream starts
  t.equal((await app.inject({ url: PATH, headers: { ...bearer(TOKENS.ownersTeam), ...CSV } })).statusCode, 401)
  // a host's caller removed from the owners team mid-stream stops as well
  const host: Caller = { kind: 'user', userId: 'user-owner' }
  const owned = repository.entries(host, 'org-acme', 1)
  t.equal((await owned.next()).done, false)
  await app.db.deleteFrom('team_memberships').where('user_id', '=', 'user-owner').where('team_id', '=', 'team-owners').execute()
  t.ok(await refusal(owned.next()) instanceof NoLongerOwner, 'a removed membership stops it too')
})

/** HEAD costs what its answer costs (issue 43, item 3): the owner's check, never the stream's reads. */
t.test(`HEAD of the access review reads no entry (${ENGINE})`, async (t) => {
  const app = await build(t, { seed })
  // the stream's statements, counted: the teams, then each slice
  const prototype = AccessReviewRepository.prototype as any
  const originals = { ownedTeams: prototype.ownedTeams, sliceOf: prototype.sliceOf }
  let reads = 0
  for (const [name, original] of Object.entries(originals)) {
    prototype[name] = function (...args: unknown[]) { reads++; return original.apply(this, args) }
  }
  t.teardown(() => Object.assign(prototype, originals))
  for (const headers of [CSV, {}]) {
    const head = await app.inject({ method: 'HEAD', url: PATH, headers: { ...bearer(TOKENS.owner), ...headers } })
    t.equal(head.statusCode, 200)
    t.equal(head.body, '')
    t.equal((await app.inject({ method: 'HEAD', url: PATH, headers: { ...bearer(TOKENS.writer), ...headers } })).statusCode, 404, 'a non-owner: 404')
  }
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(reads, 0, 'no statement of the stream ran')
  const get = await app.inject({ url: PATH, headers: { ...bearer(TOKENS.owner), ...CSV } })
  t.equal(get.statusCode, 200)
  t.ok(reads > 1, 'GET reads it')
})
