// Signing in (DESIGN §12.2): the person pastes a token; the page finds the organizations it
// belongs to (`GET /organizations`) and opens the only one at once, offers a choice of several, or
// opens the one named in its address (`?organization=acme`). A service without that list (it
// answers 404) gets the organization's name typed instead. Also: who the token is, in words.
import { ApiError, all, json } from './api.js'
import { $, escapeHtml } from './dom.js'
import type { World } from './world.js'

const ORGANIZATION_KEY = 'team-access:organization'

/** The organization the page's address names (`?organization=`), if any. */
export const addressed = (): string | null => new URLSearchParams(location.search).get('organization')

/** The page's address names this organization from now on: a reload opens it again. */
export function address (organization: string | null): void {
  const url = new URL(location.href)
  if (organization === null) url.searchParams.delete('organization')
  else url.searchParams.set('organization', organization)
  if (url.href !== location.href) history.replaceState(null, '', url)
}

/**
 * The names of the token's organizations, or undefined when the service does not list them
 * (GET /organizations answers 404: a service from before §14.3, whose 404 for a path it does not
 * know comes before any token is looked at — then GET /account/details says whether the service
 * accepts the token: 401 if not, thrown).
 */
export async function organizationsOf (): Promise<string[] | undefined> {
  try {
    const list = await all('/organizations')
    return list.data.map((o) => String(o.attributes.name ?? o.id)).sort((a, b) => a.localeCompare(b))
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 404) throw err
  }
  await json('/account/details').catch((err: unknown) => { if (!(err instanceof ApiError) || err.status !== 404) throw err })
  return undefined
}

/** The form as it starts: a token to paste; the organization's field only where the service does not list them. */
export function showSignIn (message: string, { typed = false }: { typed?: boolean } = {}): void {
  $('sign-in').hidden = false
  $('choose').hidden = true
  $('organization-field').hidden = !typed
  if (typed) $<HTMLInputElement>('organization').value ||= sessionStorage.getItem(ORGANIZATION_KEY) ?? ''
  $('sign-in-error').textContent = message
}

/** The organization typed in the form (a service that does not list them), remembered for this tab. */
export function typedOrganization (): string | undefined {
  const field = $<HTMLInputElement>('organization')
  if ($('organization-field').hidden) return undefined
  const name = field.value.trim()
  if (name !== '') sessionStorage.setItem(ORGANIZATION_KEY, name)
  return name === '' ? undefined : name
}

/** The organization this tab typed before, where the service does not list them. */
export const rememberedOrganization = (): string | null => sessionStorage.getItem(ORGANIZATION_KEY)

/** Several organizations: one button each; `choose` is told which. */
export function offerChoice (names: string[], choose: (organization: string) => void): void {
  $('sign-in').hidden = true
  const list = $('organizations')
  list.innerHTML = names.map((name) => `<li><button type="button" data-organization="${escapeHtml(name)}">${escapeHtml(name)}</button></li>`).join('')
  list.querySelectorAll<HTMLButtonElement>('button').forEach((button) => button.addEventListener('click', () => choose(button.dataset.organization!)))
  $('choose').hidden = false
  list.querySelector('button')?.focus()
}

/** The header's switch between the token's organizations (none: hidden). */
export function offerSwitch (names: string[] | undefined, current: string, choose: (organization: string) => void): void {
  const select = $<HTMLSelectElement>('switch-organization')
  const several = names !== undefined && names.length > 1
  $('switch-organization-field').hidden = !several
  if (!several) return
  select.innerHTML = names.map((name) => `<option value="${escapeHtml(name)}"${name === current ? ' selected' : ''}>${escapeHtml(name)}</option>`).join('')
  select.onchange = () => choose(select.value)
}

/** Who is signed in, and where: a user by name, a team's token by its team, the organization's own token. */
export function whoInWords (w: World): string {
  switch (w.identity.kind) {
    case 'user': return `${w.organization} · signed in as ${w.identity.username}`
    case 'team': return `the token of team ${w.identity.team} in ${w.organization}`
    case 'organization': return `the organization token of ${w.organization}`
  }
}
