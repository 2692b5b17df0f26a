// A mirrored organization on the page (DESIGN §12.2, §13): where it is mirrored from and how long
// ago it was last read, that its access is changed in HCP Terraform, and — for the owners, who read
// the audit trail — what the last mirror run that found anything saw change, as a list.
import { ApiError, json } from './api.js'
import { Cancelled } from './scheduler.js'
import { $, escapeHtml } from './dom.js'
import type { World } from './world.js'

export interface Mirror { host: string, succeededAt: string }

export interface AuditEvent {
  timestamp: string
  auth: { description: string, type: string }
  request: { id: string }
  resource: { id: string, type: string, action: string, meta: Record<string, string | undefined> }
}

/** "12 minutes ago", "3 hours ago", "just now": how long since `iso`, in words. */
export function ago (iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000))
  const unit = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'} ago`
  if (seconds < 60) return 'just now'
  if (seconds < 3600) return unit(Math.floor(seconds / 60), 'minute')
  if (seconds < 86_400) return unit(Math.floor(seconds / 3600), 'hour')
  return unit(Math.floor(seconds / 86_400), 'day')
}

/** An audit event in words: what changed, on what (a team, a workspace, a project, a membership). */
export function eventInWords (e: AuditEvent, w: World): string {
  const meta = e.resource.meta
  const on = meta.team !== undefined && e.resource.type === 'workspace'
    ? `team ${meta.team} on workspace ${w.workspaces.find((ws) => ws.id === e.resource.id)?.name ?? e.resource.id}`
    : [meta.team && `team ${meta.team}`, meta.workspace && `workspace ${meta.workspace}`, meta.project && `project ${meta.project}`,
        meta.user && `user ${meta.user}`, meta.email && `email ${meta.email}`].filter(Boolean).join(', ') || `${e.resource.type} ${e.resource.id}`
  return `${e.resource.action.replace(/_/g, ' ')}: ${on}${meta.permissions === undefined ? '' : ` (${meta.permissions})`}`
}

/** Each showing asks anew: a slower answer for an organization shown before is not shown over this one's. */
let asked = 0

/** The origin line and, for the owners, the last run's changes; hidden for an organization that is not mirrored. */
export function showMirror (w: World): void {
  const section = $('mirror')
  const current = ++asked
  if (w.mirror === null) {
    section.hidden = true
    return
  }
  section.hidden = false
  $('mirror-origin').innerHTML = `Mirrored from <strong>${escapeHtml(w.mirror.host)}</strong>, <time datetime="${escapeHtml(w.mirror.succeededAt)}" title="${escapeHtml(w.mirror.succeededAt)}">${ago(w.mirror.succeededAt)}</time>. ` +
    'Read-only here: access is changed in HCP Terraform, and the next mirror run brings it here.'
  const changes = $('mirror-changes')
  if (!w.owner) {
    changes.textContent = ''
    return
  }
  changes.textContent = 'Loading what changed…'
  void lastChanges(w.organization).then((events) => {
    if (current !== asked) return
    changes.innerHTML = events.length === 0
      ? '<p>No change seen by a mirror run yet.</p>'
      : `<h3>What changed at the last mirror run that found a change (<time datetime="${escapeHtml(events[0]!.timestamp)}">${ago(events[0]!.timestamp)}</time>)</h3>` +
        `<ul class="events">${events.map((e) => `<li>${escapeHtml(eventInWords(e, w))}</li>`).join('')}</ul>`
  }, (err: unknown) => {
    if (current !== asked || err instanceof Cancelled) return
    changes.innerHTML = err instanceof ApiError && err.status === 404 ? '' : `<p class="error">${escapeHtml((err as Error).message)}</p>`
  })
}

/**
 * The events of the latest mirror run that changed anything (a run's events share a request id),
 * from the trail's last two pages of 1,000 (newest last): oldest first.
 */
async function lastChanges (organization: string): Promise<AuditEvent[]> {
  const trail = `/organization/audit-trail?organization=${encodeURIComponent(organization)}`
  const total = (await json<{ pagination: { total_count: number } }>(`${trail}&page%5Bsize%5D=1`)).pagination.total_count
  const last = Math.max(1, Math.ceil(total / 1000))
  const pages = await Promise.all((last === 1 ? [1] : [last - 1, last]).map(async (n) =>
    await json<{ data: AuditEvent[] }>(`${trail}&page%5Bsize%5D=1000&page%5Bnumber%5D=${n}`)))
  const mirrored = pages.flatMap((p) => p.data).filter((e) => e.auth.type === 'Mirror')
  const run = mirrored.at(-1)?.request.id
  return run === undefined ? [] : mirrored.filter((e) => e.request.id === run)
}
