// The why panel (DESIGN §12.2): a cell's level, permissions and every grant behind it, in words,
// and the recent audit events about that access — which the organization's owners read (§8);
// anyone else is told so.
import { ApiError, json } from './api.js'
import { Cancelled } from './scheduler.js'
import { $, escapeHtml } from './dom.js'
import { LETTER, projectName, type Cell, type Grant, type Team, type World, type Workspace } from './world.js'
import type { AuditEvent } from './mirror.js'

const PERMISSIONS = ['runs', 'variables', 'state-versions', 'sentinel-mocks', 'workspace-locking', 'run-tasks'] as const

/** A grant in words, naming its team as "team devs" (a name is no possessive: "devs's" would read wrong). */
export function grantInWords (grant: Grant, w: World): string {
  const team = `team ${w.teams.find((t) => t.id === grant.team)?.name ?? grant.team}`
  switch (grant.kind) {
    case 'owners': return `${team}: the owners team, admin on every workspace`
    case 'team-access': return `${team}: team access on this workspace (${grant['team-workspace'] ?? ''}), ${grant.access}`
    case 'team-project': return `${team}: access to the project ${projectName(w, grant.project ?? '')} (${grant['team-project'] ?? ''}, ${grant['project-access'] ?? ''}), ${grant.access} on its workspaces`
    default: return `${team}: organization access ${grant.kind.replace('organization-access.', '')}, ${grant.access} on every workspace`
  }
}

/** Opens the panel on a team's access to a workspace (none, or its cell), and asks for its events. */
export function openWhy (w: World, team: Team, ws: Workspace): void {
  const cell = w.cells.get(team.id)?.get(ws.id)
  $('why-title').textContent = `${team.name} on ${ws.name}`
  const body = $('why-body')
  if (cell === undefined) {
    body.innerHTML = `<p>${escapeHtml(team.name)} has no access to ${escapeHtml(ws.name)}.</p>`
  } else {
    const permissions = PERMISSIONS.map((p) => `<dt>${p}</dt><dd>${escapeHtml(String(cell.attributes[p] ?? ''))}</dd>`).join('')
    body.innerHTML = `<dl><dt>level</dt><dd><span class="cell-key l-${cell.access}">${LETTER[cell.access]}</span> ${cell.access}</dd>${permissions}</dl>` +
      `<h3>Why</h3><ul class="grants">${cell.grants.map((g) => `<li data-kind="${escapeHtml(g.kind)}">${escapeHtml(grantInWords(g, w))}</li>`).join('')}</ul>` +
      `<p class="hint">Members: ${team.members.length === 0 ? 'none' : escapeHtml(team.members.join(', '))}</p>`
  }
  const panel = $('why')
  panel.hidden = false
  panel.focus()
  void showEvents(w, team, ws, cell)
}

/** Empties and hides the panel (signing out). */
export function clearWhy (): void {
  eventsAsked++
  $('why-body').replaceChildren()
  $('why-events').replaceChildren()
  $('why').hidden = true
}

/** Each opening asks anew: a slower answer for a cell opened before is not shown over this one's. */
let eventsAsked = 0

/**
 * The audit trail's latest events about this team's access here: on the workspace for this team, on
 * the team-project rows behind the cell, on the team itself. Oldest first in the trail: how many
 * there are, then its last two pages of 1,000, of this organization (an owner of several names it).
 */
async function showEvents (w: World, team: Team, ws: Workspace, cell: Cell | undefined): Promise<void> {
  const asked = ++eventsAsked
  const target = $('why-events')
  target.textContent = 'Loading…'
  try {
    const trail = `/organization/audit-trail?organization=${encodeURIComponent(w.organization)}`
    const total = (await json<{ pagination: { total_count: number } }>(`${trail}&page%5Bsize%5D=1`)).pagination.total_count
    const last = Math.max(1, Math.ceil(total / 1000))
    const pages = await Promise.all((last === 1 ? [1] : [last - 1, last]).map(async (n) =>
      await json<{ data: AuditEvent[] }>(`${trail}&page%5Bsize%5D=1000&page%5Bnumber%5D=${n}`)))
    if (asked !== eventsAsked) return
    const rows = new Set((cell?.grants ?? []).flatMap((g) => [g['team-project'], g['team-workspace']]).filter((id): id is string => id !== undefined))
    const about = (e: AuditEvent) => (e.resource.id === ws.id && e.resource.meta.team === team.name) || rows.has(e.resource.id) || e.resource.id === team.id
    const events = pages.flatMap((p) => p.data).filter(about).reverse().slice(0, 10)
    target.innerHTML = events.length === 0
      ? '<p>No recent events about this access.</p>'
      : `<ul class="events">${events.map((e) => `<li><time datetime="${escapeHtml(e.timestamp)}">${escapeHtml(e.timestamp.replace('T', ' ').slice(0, 19))}</time> ${escapeHtml(e.resource.action)} ${e.auth.type === 'Mirror' ? `in HCP Terraform, seen by the mirror of ${escapeHtml(e.auth.description)}` : `by ${escapeHtml(e.auth.description)}`}${e.resource.meta.permissions === undefined ? '' : ` — ${escapeHtml(e.resource.meta.permissions)}`}</li>`).join('')}</ul>`
  } catch (err) {
    if (asked !== eventsAsked || err instanceof Cancelled) return
    target.innerHTML = err instanceof ApiError && err.status === 404
      ? '<p>Only the organization\'s owners read the audit trail.</p>'
      : `<p class="error">${escapeHtml((err as Error).message)}</p>`
  }
}
