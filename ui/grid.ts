// The matrix (DESIGN §12.2): ARIA's grid of divs, teams as rows and workspaces as columns grouped by
// project, each cell lettered and coloured by level. Only the rows in view are in the DOM (a matrix of
// 200 × 500 is 100,000 cells, of which a screen shows a few thousand); one tab stop, moved by the
// arrow keys (WAI-ARIA's grid pattern); a click or Enter opens the cell's why.
import { $, count, escapeHtml } from './dom.js'
import { filtered, type View } from './filters.js'
import { groupName, groupOf, LETTER, UNREADABLE, type Cell, type Team, type World, type Workspace } from './world.js'

let world: World | undefined
let view: View = { teams: [], workspaces: [], level: '', user: '', userTeams: 0 }
let active = { row: 0, column: 0 }
let open: (team: Team, ws: Workspace) => void = () => {}

/** Rows drawn beyond those in view, above and below: a scroll of a few rows needs no redraw. */
const OVERSCAN = 5
/** The view's rows now in the DOM, [start, end), and a row's height in pixels (measured). */
let drawnRows = { start: 0, end: 0 }
let rowHeight = 0
/** A cell's width, in rem: at least the smallest, wider when few columns leave the window room (a project's name reads better). */
const CELL_REM = { min: 1.5, max: 3.5 }

/** The grid's listeners; `onOpen` is told of the cell a click or Enter opens. */
export function initGrid (onOpen: (team: Team, ws: Workspace) => void): void {
  open = onOpen
  const grid = $('matrix')
  grid.addEventListener('keydown', onGridKey)
  grid.addEventListener('click', onGridClick)
  // Tab may land on the stand-in tab stop of a row drawn since: that cell is the active one now
  grid.addEventListener('focusin', (event) => {
    const cell = (event.target as HTMLElement).closest('[role="gridcell"]')
    if (cell !== null) active = placeOf(cell)
  })
  let scrolled = false
  const drawRowsSoon = (): void => {
    if (scrolled || world === undefined) return
    scrolled = true
    requestAnimationFrame(() => { scrolled = false; fitCells(); drawRows() })
  }
  $('matrix-wrap').addEventListener('scroll', drawRowsSoon)
  window.addEventListener('resize', drawRowsSoon)
}

/** The world to draw (undefined: none, after signing out). */
export function setWorld (w: World | undefined): void {
  world = w
  if (w === undefined) $('matrix').replaceChildren()
}

/** A team and a workspace of the view, by row and column. */
export const at = (row: number, column: number): { team?: Team, ws?: Workspace } => ({ team: view.teams[row], ws: view.workspaces[column] })

/** Draws the view the filters leave: the header rows whole, of the teams' rows those in view. */
export function draw (): void {
  if (world === undefined) return // a filter's redraw after signing out
  const w = world
  view = filtered(w)
  const { teams, workspaces } = view
  const html: string[] = []
  // the header rows: the projects, each over its workspaces; then the workspaces
  const spans: number[] = []
  html.push('<div class="head" role="rowgroup"><div class="projects" role="row" aria-rowindex="1"><span class="corner" role="columnheader">Team</span>')
  for (let i = 0; i < workspaces.length;) {
    const group = groupOf(w, workspaces[i]!)
    let j = i
    while (j < workspaces.length && groupOf(w, workspaces[j]!) === group) j++
    const name = groupName(w, group)
    const title = group === UNREADABLE ? 'Workspaces in projects this token does not read: only their readers see their names' : name
    html.push(`<span class="project${group === UNREADABLE ? ' unreadable' : ''}" role="columnheader" title="${escapeHtml(title)}">${escapeHtml(name)}</span>`)
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
  fitCells()
  grid.style.width = `calc(var(--team-column) + ${workspaces.length} * var(--cell))`
  grid.querySelectorAll<HTMLElement>('.project').forEach((header, i) => { header.style.flexBasis = `calc(${spans[i]!} * var(--cell))` })
  grid.setAttribute('aria-rowcount', String(teams.length + 2))
  grid.setAttribute('aria-colcount', String(workspaces.length + 1))
  active = first ?? { row: 0, column: 0 }
  $('matrix-wrap').scrollTop = 0
  drawRows(true)
  performance.mark('team-access:built')
  $('summary').textContent = `${count(teams.length, 'team')} × ${count(workspaces.length, 'workspace')}, ${reach} with access` +
    (view.user === '' ? '' : ` — ${view.user} is in ${count(view.userTeams, 'team')}`)
  grid.dataset.drawn = String(Date.now())
  grid.dataset.reach = String(reach)
  performance.mark('team-access:drawn')
}

/** The cell width for the view: the window's room over the columns, within CELL_REM. */
function fitCells (): void {
  const rem = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16
  const room = $('matrix-wrap').clientWidth - 14 * rem - 2 // the team column (--team-column) and the borders
  const each = room / Math.max(1, view.workspaces.length)
  const cell = `${Math.min(CELL_REM.max, Math.max(CELL_REM.min, Math.floor(each / rem * 4) / 4))}rem`
  const grid = $('matrix')
  if (grid.style.getPropertyValue('--cell') !== cell) grid.style.setProperty('--cell', cell)
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
  const html = [`<div class="r" role="row" aria-rowindex="${r + 3}"><span class="team" role="rowheader">${escapeHtml(team.name)}${secret}<span class="count">${count(team.members.length, 'member')}</span></span>`]
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
 * padding. Drawn again when a row in view is not drawn (a scroll, a key that moves past the drawn
 * rows), or when `force`d.
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

/** The grid's one tab stop moves to a cell, scrolling its row into view (and back to the active cell with no arguments). */
export function moveTo (row = active.row, column = active.column): void {
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

function openActive (): void {
  const { team, ws } = at(active.row, active.column)
  if (team !== undefined && ws !== undefined) open(team, ws)
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
    openActive()
  }
}

function onGridClick (event: MouseEvent): void {
  const cell = (event.target as HTMLElement).closest('[role="gridcell"]')
  if (cell === null) return
  const { row, column } = placeOf(cell)
  moveTo(row, column)
  openActive()
}
