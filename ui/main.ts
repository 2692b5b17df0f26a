// The access review's page (DESIGN §12.2): an organization's teams × workspaces, each cell the
// team's effective access on the workspace, coloured by level, with why and the recent audit events
// a click (or Enter) away. Everything it shows comes from the API, with the token the person pasted:
// an owner's token reads the access review (§12.1), anyone else's their own teams' effective access
// (§10.2). The token lives in sessionStorage only and leaves the page only as a header.

const API = document.querySelector<HTMLMetaElement>('meta[name="api-base"]')!.content
const TOKEN_KEY = 'team-access:token'
const ORGANIZATION_KEY = 'team-access:organization'
type Level = 'admin' | 'write' | 'plan' | 'read' | 'custom'
const LETTER: Record<Level, string> = { admin: 'A', write: 'W', plan: 'P', read: 'R', custom: 'C' }

interface Grant { kind: string, access: string, team: string, 'team-workspace'?: string, 'team-project'?: string, project?: string, 'project-access'?: string }
interface Cell { access: Level, attributes: Record<string, unknown>, grants: Grant[] }
interface Team { id: string, name: string, visibility: string, members: string[] }
interface Workspace { id: string, name: string, project: string }
interface World { owner: boolean, organization: string, teams: Team[], workspaces: Workspace[], projects: Map<string, string>, cells: Map<string, Map<string, Cell>> }

interface Resource { id: string, type: string, attributes: Record<string, any>, relationships?: Record<string, any> }
interface ListDocument { data: Resource[], included?: Resource[], meta?: { pagination?: { 'total-pages': number } } }

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T

class ApiError extends Error {
  constructor (readonly status: number, message: string) { super(message) }
}

function token (): string | null { return sessionStorage.getItem(TOKEN_KEY) }

/** A request to the API with the token as a header: never in a URL, a cookie or a referrer. */
async function api (path: string, accept = 'application/vnd.api+json'): Promise<Response> {
  const response = await fetch(`${API}${path}`, {
    headers: { Authorization: `Bearer ${token() ?? ''}`, Accept: accept },
    credentials: 'omit',
    cache: 'no-store',
    referrerPolicy: 'no-referrer'
  })
  if (!response.ok) {
    let detail = response.statusText
    try {
      const body = await response.json() as { errors?: Array<{ title?: string, detail?: string }> }
      detail = body.errors?.[0]?.detail ?? body.errors?.[0]?.title ?? detail
    } catch {}
    throw new ApiError(response.status, detail)
  }
  return response
}

const json = async <T>(path: string): Promise<T> => await (await api(path)).json() as T

/** Every page of a list (100 a page), the first alone, then the rest four at a time. */
async function all (path: string): Promise<{ data: Resource[], included: Resource[] }> {
  const pageOf = (n: number) => `${path}${path.includes('?') ? '&' : '?'}page%5Bsize%5D=100&page%5Bnumber%5D=${n}`
  const first = await json<ListDocument>(pageOf(1))
  const pages = first.meta?.pagination?.['total-pages'] ?? 1
  const rest: ListDocument[] = []
  let next = 2
  const worker = async (): Promise<void> => {
    while (next <= pages) {
      const n = next++
      rest[n - 2] = await json<ListDocument>(pageOf(n))
    }
  }
  await Promise.all([worker(), worker(), worker(), worker()])
  const documents = [first, ...rest]
  return { data: documents.flatMap((d) => d.data), included: documents.flatMap((d) => d.included ?? []) }
}

const org = (organization: string) => `/organizations/${encodeURIComponent(organization)}`

/** The teams of a list with `include=users`: their members by username. */
function teamsOf (list: { data: Resource[], included: Resource[] }): Team[] {
  const usernames = new Map(list.included.filter((r) => r.type === 'users').map((r) => [r.id, String(r.attributes.username)]))
  return list.data.map((t) => ({
    id: t.id,
    name: String(t.attributes.name),
    visibility: String(t.attributes.visibility),
    members: ((t.relationships?.users?.data ?? []) as Array<{ id: string }>).map((u) => usernames.get(u.id) ?? u.id).sort()
  }))
}

function setCell (cells: World['cells'], teamId: string, workspaceId: string, attributes: Record<string, any>): void {
  if (!Object.hasOwn(LETTER, attributes.access)) return // a level this page does not know is not drawn
  let row = cells.get(teamId)
  if (row === undefined) cells.set(teamId, row = new Map())
  row.set(workspaceId, { access: attributes.access as Level, attributes, grants: attributes.grants as Grant[] })
}

/**
 * The world as this token may read it. An owner: the access review (every team's effective
 * access), every team and workspace. Anyone else (the access review answers 404): the teams the
 * token acts through, each team's effective access, and the workspaces the token reads.
 */
async function load (organization: string): Promise<World> {
  const cells: World['cells'] = new Map()
  // the workspaces and projects load beside the access review; the teams once it says who is asking
  const others = Promise.all([
    all(`${org(organization)}/workspaces`),
    all(`${org(organization)}/projects`).catch(() => ({ data: [], included: [] }))
  ])
  others.catch(() => undefined) // a failure is the review's to report first; it is awaited below
  let owner = true
  let review: Resource[] = []
  try {
    // no page parameter: every entry in one streamed document
    review = (await json<ListDocument>(`${org(organization)}/access-review`)).data
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 404) throw err
    owner = false
  }
  const [teamList, [workspaceList, projectList]] = await Promise.all([all(`${org(organization)}/teams?include=users${owner ? '' : '&filter%5Bown%5D=true'}`), others])
  const teams = teamsOf(teamList)
  if (owner) {
    for (const entry of review) setCell(cells, entry.relationships!.team.data.id, entry.relationships!.workspace.data.id, entry.attributes)
  } else {
    const reaches = await Promise.all(teams.map(async (team) => await all(`/teams/${encodeURIComponent(team.id)}/effective-access`)))
    teams.forEach((team, i) => {
      for (const entry of reaches[i]!.data) setCell(cells, team.id, entry.relationships!.workspace.data.id, entry.attributes)
    })
  }
  const projects = new Map(projectList.data.map((p) => [p.id, String(p.attributes.name)]))
  // a member reads a workspace through a row there without reading its project (DESIGN §11.3): its id stands for its name
  for (const w of workspaceList.data) {
    const id = String(w.relationships?.project?.data?.id ?? '')
    if (!projects.has(id)) projects.set(id, id)
  }
  const workspaces = workspaceList.data.map((w) => ({ id: w.id, name: String(w.attributes.name), project: String(w.relationships?.project?.data?.id ?? '') }))
  return { owner, organization, teams, workspaces, projects, cells }
}

// ── drawing ──────────────────────────────────────────────────────────────────────────────────

const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

interface View { teams: Team[], workspaces: Workspace[], level: string, userTeams: number }
let world: World | undefined
let view: View = { teams: [], workspaces: [], level: '', userTeams: 0 }
let active = { row: 0, column: 0 }

/** What the filters leave: a user's teams, a project's workspaces, one level's cells (and the rows and columns that hold one). */
function filtered (w: World): View {
  const user = $<HTMLInputElement>('filter-user').value.trim()
  const project = $<HTMLSelectElement>('filter-project').value
  const level = $<HTMLSelectElement>('filter-level').value
  let teams = user === '' ? w.teams : w.teams.filter((t) => t.members.includes(user))
  const userTeams = teams.length
  const projectName = (id: string) => w.projects.get(id) ?? id
  let workspaces = (project === '' ? w.workspaces : w.workspaces.filter((ws) => ws.project === project))
    .slice().sort((a, b) => projectName(a.project).localeCompare(projectName(b.project)) || a.project.localeCompare(b.project) || a.name.localeCompare(b.name))
  if (level !== '') {
    const holds = (t: Team, ws: Workspace) => w.cells.get(t.id)?.get(ws.id)?.access === level
    teams = teams.filter((t) => workspaces.some((ws) => holds(t, ws)))
    workspaces = workspaces.filter((ws) => teams.some((t) => holds(t, ws)))
  }
  return { teams, workspaces, level, userTeams }
}

/** Rows drawn beyond those in view, above and below: a scroll of a few rows needs no redraw. */
const OVERSCAN = 5
/** The view's rows now in the DOM, [start, end), and a row's height in pixels (measured). */
let drawnRows = { start: 0, end: 0 }
let rowHeight = 0

function draw (): void {
  if (world === undefined) return // a filter's redraw after signing out
  const w = world
  view = filtered(w)
  const { teams, workspaces } = view
  const html: string[] = []
  // ARIA's grid of divs: the header rows (the projects, each over its workspaces; then the
  // workspaces) are drawn whole; of the teams' rows only those in view (drawRows)
  const spans: number[] = []
  html.push('<div class="head" role="rowgroup"><div class="projects" role="row" aria-rowindex="1"><span class="corner" role="columnheader">Team</span>')
  for (let i = 0; i < workspaces.length;) {
    let j = i
    while (j < workspaces.length && workspaces[j]!.project === workspaces[i]!.project) j++
    const name = w.projects.get(workspaces[i]!.project) ?? workspaces[i]!.project
    html.push(`<span class="project" role="columnheader" title="${escapeHtml(name)}">${escapeHtml(name)}</span>`)
    spans.push(j - i)
    i = j
  }
  html.push('</div><div class="workspaces" role="row" aria-rowindex="2"><span class="corner"></span>')
  for (const ws of workspaces) html.push(`<span role="columnheader" title="${escapeHtml(ws.name)}"><span>${escapeHtml(ws.name)}</span></span>`)
  html.push('</div></div><div class="body" role="rowgroup"></div>')
  // the cells with access, and the first of them (where the grid's tab stop starts), over the whole view
  let first: { row: number, column: number } | undefined
  let reach = 0
  teams.forEach((team, r) => {
    const row = w.cells.get(team.id)
    if (row === undefined) return
    workspaces.forEach((ws, c) => {
      if (shownCell(row, ws) === undefined) return
      first ??= { row: r, column: c }
      reach++
    })
  })
  const grid = $('matrix')
  grid.innerHTML = html.join('')
  // widths by the stylesheet's variables, set through the CSSOM (the CSP allows no style attribute)
  grid.style.width = `calc(var(--team-column) + ${workspaces.length} * var(--cell))`
  grid.querySelectorAll<HTMLElement>('.project').forEach((header, i) => { header.style.flexBasis = `calc(${spans[i]!} * var(--cell))` })
  grid.setAttribute('aria-rowcount', String(teams.length + 2))
  grid.setAttribute('aria-colcount', String(workspaces.length + 1))
  active = first ?? { row: 0, column: 0 }
  $('matrix-wrap').scrollTop = 0
  drawRows(true)
  performance.mark('team-access:built')
  const user = $<HTMLInputElement>('filter-user').value.trim()
  $('summary').textContent = `${teams.length} ${teams.length === 1 ? 'team' : 'teams'} × ${workspaces.length} ${workspaces.length === 1 ? 'workspace' : 'workspaces'}, ${reach} with access` +
    (user === '' ? '' : ` — ${user} is in ${view.userTeams} ${view.userTeams === 1 ? 'team' : 'teams'}`)
  grid.dataset.drawn = String(Date.now())
  grid.dataset.reach = String(reach)
  performance.mark('team-access:drawn')
}

/** A team's cell on a workspace, if it has access there and the level filter keeps it. */
function shownCell (row: Map<string, Cell> | undefined, ws: Workspace): Cell | undefined {
  const cell = row?.get(ws.id)
  return cell !== undefined && (view.level === '' || cell.access === view.level) ? cell : undefined
}

/** One team's row of the view: its header, then a cell per workspace (aria-rowindex counts the two header rows). */
function rowHtml (r: number): string {
  const team = view.teams[r]!
  const row = world!.cells.get(team.id)
  const secret = team.visibility === 'secret' ? '<span class="badge">secret</span>' : ''
  const html = [`<div class="r" role="row" aria-rowindex="${r + 3}"><span class="team" role="rowheader">${escapeHtml(team.name)}${secret}<span class="count">${team.members.length} ${team.members.length === 1 ? 'member' : 'members'}</span></span>`]
  view.workspaces.forEach((ws) => {
    const cell = shownCell(row, ws)
    html.push(cell === undefined
      ? '<span role="gridcell"></span>'
      : `<span role="gridcell" class="l-${cell.access}" data-a="${cell.access}" aria-label="${escapeHtml(`${team.name} on ${ws.name}: ${cell.access}`)}">${LETTER[cell.access]}</span>`)
  })
  html.push('</div>')
  return html.join('')
}

/**
 * The rows in view (and OVERSCAN more each side) into the DOM, the rest stood for by the body's
 * padding: a matrix of 200 × 500 is 100,000 cells, of which a screen shows a few thousand. Drawn
 * again when a row in view is not drawn (a scroll, a key that moves past the drawn rows), or when
 * `force`d.
 */
function drawRows (force = false): void {
  const wrap = $('matrix-wrap')
  const grid = $('matrix')
  const body = grid.lastElementChild as HTMLElement | null
  if (body === null) return
  const head = (grid.firstElementChild as HTMLElement).offsetHeight
  // in view: the body from the scroll position down to the window's foot, less the sticky header
  const inView = (): { first: number, last: number } => {
    const height = rowHeight > 0 ? rowHeight : 22
    return { first: Math.floor(wrap.scrollTop / height), last: Math.min(view.teams.length, Math.ceil((wrap.scrollTop + wrap.clientHeight - head) / height)) }
  }
  const drawn = (): boolean => { const { first, last } = inView(); return first >= drawnRows.start && last <= drawnRows.end }
  if (!force && drawn()) return
  const focused = body.contains(document.activeElement)
  // a pass or two: the first may reckon with a guessed row height, or a window that then grows
  // with what it holds (up to its maximum height)
  for (let pass = 0; pass < 3; pass++) {
    const { first, last } = inView()
    const start = Math.max(0, first - OVERSCAN)
    const end = Math.min(view.teams.length, last + OVERSCAN)
    if (pass === 0 || start !== drawnRows.start || end !== drawnRows.end) {
      drawnRows = { start, end }
      const html: string[] = []
      for (let r = start; r < end; r++) html.push(rowHtml(r))
      body.innerHTML = html.join('')
      rowHeight = (body.firstElementChild as HTMLElement | null)?.getBoundingClientRect().height ?? rowHeight
    }
    body.style.paddingTop = `${start * rowHeight}px`
    body.style.paddingBottom = `${(view.teams.length - end) * rowHeight}px`
    if (drawn()) break
  }
  // the grid's one tab stop: the active cell, or, when its row is no longer drawn, where its column
  // meets the first row in view; focus stays in the grid when the focused cell is drawn again or away
  const stop = cellAt(active.row, active.column) ?? cellAt(Math.min(inView().first, drawnRows.end - 1), active.column)
  if (stop === undefined) return
  stop.tabIndex = 0
  if (focused) stop.focus({ preventScroll: true })
}

/** The cell of a row and a column of the view, if its row is drawn (a row's first child is its team). */
const cellAt = (row: number, column: number): HTMLElement | undefined =>
  row < drawnRows.start || row >= drawnRows.end
    ? undefined
    : ($('matrix').lastElementChild?.children[row - drawnRows.start]?.children[column + 1] ?? undefined) as HTMLElement | undefined

/** A cell's row and column in the view. */
function placeOf (cell: Element): { row: number, column: number } {
  const row = cell.parentElement!
  return { row: Number(row.getAttribute('aria-rowindex')) - 3, column: Array.prototype.indexOf.call(row.children, cell) - 1 }
}

/** The grid's one tab stop moves with the arrow keys (WAI-ARIA's grid pattern), scrolling its row into view. */
function moveTo (row: number, column: number): void {
  if (view.teams.length === 0 || view.workspaces.length === 0) return
  row = Math.max(0, Math.min(view.teams.length - 1, row))
  column = Math.max(0, Math.min(view.workspaces.length - 1, column))
  $('matrix').querySelectorAll('[tabindex="0"]').forEach((cell) => cell.removeAttribute('tabindex'))
  active = { row, column }
  // its row into view below the sticky header (drawn first if it was not)
  const wrap = $('matrix-wrap')
  const head = ($('matrix').firstElementChild as HTMLElement).offsetHeight
  const top = row * rowHeight
  if (top < wrap.scrollTop) wrap.scrollTop = top
  else if (head + top + rowHeight > wrap.scrollTop + wrap.clientHeight) wrap.scrollTop = head + top + rowHeight - wrap.clientHeight
  drawRows()
  const to = cellAt(row, column)
  if (to === undefined) return
  to.tabIndex = 0
  to.focus()
}

function onGridKey (event: KeyboardEvent): void {
  const { row, column } = active
  const moves: Record<string, [number, number]> = {
    ArrowUp: [row - 1, column],
    ArrowDown: [row + 1, column],
    ArrowLeft: [row, column - 1],
    ArrowRight: [row, column + 1],
    Home: event.ctrlKey ? [0, 0] : [row, 0],
    End: event.ctrlKey ? [view.teams.length - 1, view.workspaces.length - 1] : [row, view.workspaces.length - 1],
    PageUp: [row - 10, column],
    PageDown: [row + 10, column]
  }
  const move = moves[event.key]
  if (move !== undefined) {
    event.preventDefault()
    moveTo(move[0], move[1])
  } else if (event.key === 'Enter' || event.key === ' ') {
    event.preventDefault()
    openWhy(row, column)
  }
}

function onGridClick (event: MouseEvent): void {
  const cell = (event.target as HTMLElement).closest('[role="gridcell"]')
  if (cell === null) return
  const { row, column } = placeOf(cell)
  moveTo(row, column)
  openWhy(active.row, active.column)
}

// ── why ──────────────────────────────────────────────────────────────────────────────────────

const PERMISSIONS = ['runs', 'variables', 'state-versions', 'sentinel-mocks', 'workspace-locking', 'run-tasks'] as const

function grantInWords (grant: Grant, teams: Map<string, Team>, projects: Map<string, string>): string {
  const team = teams.get(grant.team)?.name ?? grant.team
  switch (grant.kind) {
    case 'owners': return `${team} is the owners team: admin on every workspace`
    case 'team-access': return `${team}'s team access on this workspace (${grant['team-workspace'] ?? ''}): ${grant.access}`
    case 'team-project': return `${team}'s access to the project ${projects.get(grant.project ?? '') ?? grant.project ?? ''} (${grant['team-project'] ?? ''}, ${grant['project-access'] ?? ''}): ${grant.access} on its workspaces`
    default: return `${team}'s organization access ${grant.kind.replace('organization-access.', '')}: ${grant.access} on every workspace`
  }
}

function openWhy (row: number, column: number): void {
  const w = world!
  const team = view.teams[row]
  const ws = view.workspaces[column]
  if (team === undefined || ws === undefined) return
  const cell = w.cells.get(team.id)?.get(ws.id)
  const teams = new Map(w.teams.map((t) => [t.id, t]))
  $('why-title').textContent = `${team.name} on ${ws.name}`
  const body = $('why-body')
  if (cell === undefined) {
    body.innerHTML = `<p>${escapeHtml(team.name)} has no access to ${escapeHtml(ws.name)}.</p>`
  } else {
    const permissions = PERMISSIONS.map((p) => `<dt>${p}</dt><dd>${escapeHtml(String(cell.attributes[p] ?? ''))}</dd>`).join('')
    body.innerHTML = `<dl><dt>level</dt><dd><span class="cell-key l-${cell.access}">${LETTER[cell.access]}</span> ${cell.access}</dd>${permissions}</dl>` +
      `<h3>Why</h3><ul class="grants">${cell.grants.map((g) => `<li data-kind="${escapeHtml(g.kind)}">${escapeHtml(grantInWords(g, teams, w.projects))}</li>`).join('')}</ul>` +
      `<p class="hint">Members: ${team.members.length === 0 ? 'none' : escapeHtml(team.members.join(', '))}</p>`
  }
  const panel = $('why')
  panel.hidden = false
  panel.focus()
  void showEvents(team, ws, cell)
}

function closeWhy (): void {
  $('why').hidden = true
  moveTo(active.row, active.column) // its row drawn again if it was scrolled away
}

interface AuditEvent { timestamp: string, auth: { description: string }, resource: { id: string, type: string, action: string, meta: Record<string, string | undefined> } }

/**
 * The audit trail's latest events about this team's access here: on the workspace for this team, on
 * the team-project rows behind the cell, on the team itself. Only an organization token reads the
 * trail (DESIGN §8); anyone else is told so.
 */
let eventsAsked = 0

async function showEvents (team: Team, ws: Workspace, cell: Cell | undefined): Promise<void> {
  const asked = ++eventsAsked // a slower answer for a cell opened before is not shown over this one's
  const target = $('why-events')
  target.textContent = 'Loading…'
  try {
    // oldest first: how many there are, then the last two pages of 1,000
    const count = (await json<{ pagination: { total_count: number } }>('/organization/audit-trail?page%5Bsize%5D=1')).pagination.total_count
    const last = Math.max(1, Math.ceil(count / 1000))
    const pages = await Promise.all((last === 1 ? [1] : [last - 1, last]).map(async (n) =>
      await json<{ data: AuditEvent[] }>(`/organization/audit-trail?page%5Bsize%5D=1000&page%5Bnumber%5D=${n}`)))
    if (asked !== eventsAsked) return
    const rows = new Set((cell?.grants ?? []).flatMap((g) => [g['team-project'], g['team-workspace']]).filter((id): id is string => id !== undefined))
    const about = (e: AuditEvent) => (e.resource.id === ws.id && e.resource.meta.team === team.name) || rows.has(e.resource.id) || e.resource.id === team.id
    const events = pages.flatMap((p) => p.data).filter(about).reverse().slice(0, 10)
    target.innerHTML = events.length === 0
      ? '<p>No recent events about this access.</p>'
      : `<ul class="events">${events.map((e) => `<li><time datetime="${escapeHtml(e.timestamp)}">${escapeHtml(e.timestamp.replace('T', ' ').slice(0, 19))}</time> ${escapeHtml(e.resource.action)} by ${escapeHtml(e.auth.description)}${e.resource.meta.permissions === undefined ? '' : ` — ${escapeHtml(e.resource.meta.permissions)}`}</li>`).join('')}</ul>`
  } catch (err) {
    if (asked !== eventsAsked) return
    target.innerHTML = err instanceof ApiError && err.status === 404
      ? '<p>Only the organization\'s own token reads the audit trail.</p>'
      : `<p class="error">${escapeHtml((err as Error).message)}</p>`
  }
}

// ── the CSV ──────────────────────────────────────────────────────────────────────────────────

async function downloadCsv (): Promise<void> {
  const response = await api(`${org(world!.organization)}/access-review`, 'text/csv')
  const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? 'access-review.csv'
  const url = URL.createObjectURL(await response.blob())
  const link = document.createElement('a')
  link.href = url
  link.download = name
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

// ── sign-in and start ────────────────────────────────────────────────────────────────────────

/** Each sign-in and sign-out starts a generation: what an older one loads is dropped. */
let generation = 0

async function show (organization: string): Promise<void> {
  const mine = ++generation
  $('summary').textContent = 'Loading…'
  const [loaded, account] = await Promise.all([
    load(organization),
    json<{ data: Resource }>('/account/details').then((d) => String(d.data.attributes.username)).catch(() => undefined)
  ])
  if (mine !== generation) return
  world = loaded
  performance.mark('team-access:loaded')
  $('who').textContent = `${organization} · ${account === undefined ? 'a team or organization token' : `signed in as ${account}`}`
  $('review-title').textContent = world.owner ? `Everyone's access in ${organization}` : `Your teams' access in ${organization}`
  $('download-csv').hidden = !world.owner
  const usernames = [...new Set(world.teams.flatMap((t) => t.members))].sort()
  $('usernames').innerHTML = usernames.map((u) => `<option value="${escapeHtml(u)}"></option>`).join('')
  const projectIds = [...new Set(world.workspaces.map((ws) => ws.project))]
    .sort((a, b) => (world!.projects.get(a) ?? a).localeCompare(world!.projects.get(b) ?? b))
  $('filter-project').innerHTML = '<option value="">All projects</option>' +
    projectIds.map((id) => `<option value="${escapeHtml(id)}">${escapeHtml(world!.projects.get(id) ?? id)}</option>`).join('')
  $('sign-in').hidden = true
  $('sign-out').hidden = false
  $('review').hidden = false
  draw()
}

/** Back to the sign-in form; `forget` drops the token (signing out, or a token the service refused). */
function signedOut (message = '', forget = true): void {
  generation++
  if (forget) sessionStorage.removeItem(TOKEN_KEY)
  world = undefined
  $('matrix').replaceChildren()
  $('why-body').replaceChildren()
  $('why-events').replaceChildren()
  $('review').hidden = true
  $('why').hidden = true
  $('sign-out').hidden = true
  $('sign-in').hidden = false
  $('who').textContent = ''
  $('sign-in-error').textContent = message
}

async function start (organization: string): Promise<void> {
  try {
    await show(organization)
  } catch (err) {
    // only a refused token is forgotten: a busy service or a lost connection is worth another try
    const refused = err instanceof ApiError && err.status === 401
    signedOut(refused
      ? 'The service does not accept this token.'
      : err instanceof ApiError && err.status === 404
        ? `No organization ${organization} that this token may read.`
        : `The page could not load (${(err as Error).message}): try again.`, refused)
  }
}

$('sign-in').addEventListener('submit', (event) => {
  event.preventDefault()
  performance.mark('team-access:submitted')
  const tokenInput = $<HTMLInputElement>('token')
  const organization = $<HTMLInputElement>('organization').value.trim()
  const pasted = tokenInput.value.trim()
  // an empty field keeps the token of this tab, after a load that failed
  if (pasted !== '') sessionStorage.setItem(TOKEN_KEY, pasted)
  if (token() === null) {
    $('sign-in-error').textContent = 'Paste a token.'
    return
  }
  sessionStorage.setItem(ORGANIZATION_KEY, organization)
  tokenInput.value = ''
  void start(organization)
})
$('sign-out').addEventListener('click', () => signedOut())
let typing: ReturnType<typeof setTimeout> | undefined
$('filter-user').addEventListener('input', () => { clearTimeout(typing); typing = setTimeout(draw, 150) })
$('filter-project').addEventListener('change', draw)
$('filter-level').addEventListener('change', draw)
$('download-csv').addEventListener('click', () => { void downloadCsv().catch((err: Error) => { $('summary').textContent = `The CSV could not download: ${err.message}` }) })
$('matrix').addEventListener('keydown', onGridKey)
$('matrix').addEventListener('click', onGridClick)
// Tab may land on the stand-in tab stop of a row drawn since: that cell is the active one now
$('matrix').addEventListener('focusin', (event) => {
  const cell = (event.target as HTMLElement).closest('[role="gridcell"]')
  if (cell !== null) active = placeOf(cell)
})
let scrolled = false
const drawRowsSoon = (): void => {
  if (scrolled || world === undefined) return
  scrolled = true
  requestAnimationFrame(() => { scrolled = false; drawRows() })
}
$('matrix-wrap').addEventListener('scroll', drawRowsSoon)
window.addEventListener('resize', drawRowsSoon)
$('why-close').addEventListener('click', closeWhy)
$('why').addEventListener('keydown', (event) => { if (event.key === 'Escape') closeWhy() })

const remembered = sessionStorage.getItem(ORGANIZATION_KEY)
if (remembered !== null) $<HTMLInputElement>('organization').value = remembered
if (token() !== null && remembered !== null) void start(remembered)
