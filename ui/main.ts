// The access review's page (DESIGN §12.2): an organization's teams × workspaces, each cell the
// team's effective access on the workspace, coloured by level, with why and the recent audit events
// a click (or Enter) away. Everything it shows comes from the API, with the token the person pasted:
// an owner's token reads the access review (§12.1), anyone else's their own teams' effective access
// (§10.2). The token lives in sessionStorage only and leaves the page only as a header.
//
// This file starts the page and ties its parts together: sign-in and the organizations (sign-in.ts),
// the API client and its scheduler (api.ts, scheduler.ts), what is loaded (world.ts), the matrix
// (grid.ts), the filters (filters.ts) and the why panel (why.ts).
import { ApiError, forgetToken, keepToken, org, request, restart, token } from './api.js'
import { Cancelled } from './scheduler.js'
import { $ } from './dom.js'
import { load, type World } from './world.js'
import { draw, initGrid, moveTo, setWorld } from './grid.js'
import { fillFilters } from './filters.js'
import { clearWhy, openWhy } from './why.js'
import { showMirror } from './mirror.js'
import { address, addressed, offerChoice, offerSwitch, organizationsOf, rememberedOrganization, showSignIn, typedOrganization, whoInWords } from './sign-in.js'

let world: World | undefined
/** The token's organizations, as GET /organizations lists them (undefined: not known, or the service does not list them: `unlisted`). */
let organizations: string[] | undefined
let unlisted = false
/** The organization being loaded or shown. */
let current: string | undefined
/** Each sign-in, choice and sign-out starts a generation: what an older one loads is dropped. */
let generation = 0

/** A fresh generation: the requests the last one still had waiting are dropped. */
function next (): number {
  restart(waiting)
  return ++generation
}

/** While the page waits for the service (its rate limit, a 429's Retry-After), the status says so. */
let waitingTimer: ReturnType<typeof setTimeout> | undefined
function waiting (until: number): void {
  const status = $('status')
  if (status.hidden) return
  const seconds = Math.max(1, Math.round((until - performance.now()) / 1000))
  status.textContent = `${status.dataset.loading ?? 'Loading…'} Waiting ${seconds} s for the service's rate limit.`
  clearTimeout(waitingTimer)
  waitingTimer = setTimeout(() => { status.textContent = status.dataset.loading ?? 'Loading…' }, until - performance.now())
}

function loading (what: string | undefined): void {
  const status = $('status')
  clearTimeout(waitingTimer)
  status.hidden = what === undefined
  status.dataset.loading = what ?? ''
  status.textContent = what ?? ''
}

/**
 * With a token in this tab: the organization the address names, the one typed (a service that
 * does not list them), the token's only organization, or a choice of its several.
 */
async function begin (typed?: string): Promise<void> {
  const mine = next()
  $('sign-in').hidden = true
  $('sign-out').hidden = false
  loading('Loading…')
  try {
    organizations = await organizationsOf()
    if (mine !== generation) return
    unlisted = organizations === undefined
    const named = typed ?? addressed() ?? (organizations === undefined ? rememberedOrganization() ?? undefined : undefined)
    if (named !== undefined) return await show(named, mine)
    if (organizations === undefined) return signedOut('Type the organization\'s name: this service does not list a token\'s organizations.', false)
    if (organizations.length === 1) return await show(organizations[0]!, mine)
    loading(undefined)
    if (organizations.length === 0) return signedOut('This token belongs to no organization.', false)
    offerChoice(organizations, (name) => { void open(name) })
  } catch (err) {
    failed(err, mine)
  }
}

/** Another organization of the token's (a choice, the header's switch). */
async function open (organization: string): Promise<void> {
  const mine = next()
  try {
    await show(organization, mine)
  } catch (err) {
    failed(err, mine)
  }
}

/** Loads an organization and draws it; the address names it from now on. */
async function show (organization: string, mine: number): Promise<void> {
  current = organization
  $('choose').hidden = true
  loading(`Loading ${organization}…`)
  const loaded = await load(organization)
  if (mine !== generation) return
  world = loaded
  performance.mark('team-access:loaded')
  address(organization)
  loading(undefined)
  setWorld(world)
  clearWhy()
  $('who').textContent = whoInWords(world)
  $('review-title').textContent = world.owner ? `Everyone's access in ${organization}` : `Your teams' access in ${organization}`
  $('download-csv').hidden = !world.owner
  fillFilters(world)
  showMirror(world)
  offerSwitch(organizations, organization, (name) => { void open(name) })
  $('sign-in').hidden = true
  $('sign-out').hidden = false
  $('review').hidden = false
  draw()
}

/** A load that failed: only a refused token is forgotten; a busy service or a lost connection is worth another try. */
function failed (err: unknown, mine: number): void {
  if (err instanceof Cancelled || mine !== generation) return
  const refused = err instanceof ApiError && err.status === 401
  if (err instanceof ApiError && err.status === 404) address(null) // the next try finds the token's organizations
  signedOut(refused
    ? 'The service does not accept this token.'
    : err instanceof ApiError && err.status === 404
      ? `No organization ${current ?? ''} that this token may read.`
      : `The page could not load (${(err as Error).message}): try again.`, refused)
}

/** Back to the sign-in form; `forget` drops the token (signing out, or a token the service refused). */
function signedOut (message = '', forget = true): void {
  next()
  if (forget) forgetToken()
  world = undefined
  setWorld(undefined)
  clearWhy()
  loading(undefined)
  $('review').hidden = true
  $('choose').hidden = true
  $('switch-organization-field').hidden = true
  $('sign-out').hidden = token() === null
  $('who').textContent = ''
  showSignIn(message, { typed: unlisted })
}

async function downloadCsv (): Promise<void> {
  const response = await request(`${org(world!.organization)}/access-review`, { accept: 'text/csv' })
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

function closeWhy (): void {
  $('why').hidden = true
  moveTo() // the active cell's row drawn again if it was scrolled away
}

$('sign-in').addEventListener('submit', (event) => {
  event.preventDefault()
  performance.mark('team-access:submitted')
  const tokenInput = $<HTMLInputElement>('token')
  const pasted = tokenInput.value.trim()
  // an empty field keeps the token of this tab, after a load that failed
  if (pasted !== '') keepToken(pasted)
  if (token() === null) {
    $('sign-in-error').textContent = 'Paste a token.'
    return
  }
  tokenInput.value = ''
  void begin(typedOrganization())
})
$('sign-out').addEventListener('click', () => {
  address(null)
  organizations = undefined
  unlisted = false
  signedOut()
})
let typing: ReturnType<typeof setTimeout> | undefined
$('filter-user').addEventListener('input', () => { clearTimeout(typing); typing = setTimeout(draw, 150) })
$('filter-project').addEventListener('change', draw)
$('filter-level').addEventListener('change', draw)
$('download-csv').addEventListener('click', () => { void downloadCsv().catch((err: Error) => { $('summary').textContent = `The CSV could not download: ${err.message}` }) })
initGrid((team, ws) => { if (world !== undefined) openWhy(world, team, ws) })
$('why-close').addEventListener('click', closeWhy)
$('why').addEventListener('keydown', (event) => { if (event.key === 'Escape') closeWhy() })

if (token() !== null) void begin()
