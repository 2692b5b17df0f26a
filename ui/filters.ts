// The filters above the matrix — a user's teams (owners only), a project's workspaces, one level's
// cells — and the view they leave of the world: its teams (rows) and workspaces (columns, grouped by
// project, the projects this token does not read together).
import { $, escapeHtml } from './dom.js'
import { groupName, groupOf, UNREADABLE, type Team, type World, type Workspace } from './world.js'

export interface View { teams: Team[], workspaces: Workspace[], level: string, user: string, userTeams: number }

/** The filters' choices for this world: the usernames an owner may pick, the projects by name. */
export function fillFilters (w: World): void {
  // a member sees their own teams only: a filter of other people's teams would suggest what it cannot show
  const users = [...new Set(w.teams.flatMap((t) => t.members))].sort()
  const userFilter = $<HTMLInputElement>('filter-user')
  userFilter.value = ''
  for (const id of ['filter-user', 'filter-user-label']) $(id).hidden = !w.owner
  userFilter.placeholder = users.length === 0 ? 'a username' : `what can ${users[0]!} reach?`
  $('usernames').innerHTML = w.owner ? users.map((u) => `<option value="${escapeHtml(u)}"></option>`).join('') : ''
  const groups = [...new Set(w.workspaces.map((ws) => groupOf(w, ws)))].sort(byGroup(w))
  $('filter-project').innerHTML = '<option value="">All projects</option>' +
    groups.map((group) => `<option value="${escapeHtml(group === UNREADABLE ? 'unreadable' : group)}">${escapeHtml(group === UNREADABLE ? 'Projects you cannot read' : groupName(w, group))}</option>`).join('')
  $<HTMLSelectElement>('filter-level').value = ''
}

/** Groups by name, the projects this token does not read last. */
export const byGroup = (w: World) => (a: string, b: string): number =>
  Number(a === UNREADABLE) - Number(b === UNREADABLE) || groupName(w, a).localeCompare(groupName(w, b)) || a.localeCompare(b)

/** What the filters leave: a user's teams, a project's workspaces, one level's cells (and the rows and columns that hold one). */
export function filtered (w: World): View {
  const user = w.owner ? $<HTMLInputElement>('filter-user').value.trim() : ''
  const chosen = $<HTMLSelectElement>('filter-project').value
  const project = chosen === 'unreadable' ? UNREADABLE : chosen
  const level = $<HTMLSelectElement>('filter-level').value
  let teams = user === '' ? w.teams : w.teams.filter((t) => t.members.includes(user))
  const userTeams = teams.length
  const order = byGroup(w)
  let workspaces = (chosen === '' ? w.workspaces : w.workspaces.filter((ws) => groupOf(w, ws) === project))
    .slice().sort((a, b) => order(groupOf(w, a), groupOf(w, b)) || a.name.localeCompare(b.name))
  if (level !== '') {
    const holds = (t: Team, ws: Workspace) => w.cells.get(t.id)?.get(ws.id)?.access === level
    teams = teams.filter((t) => workspaces.some((ws) => holds(t, ws)))
    workspaces = workspaces.filter((ws) => teams.some((t) => holds(t, ws)))
  }
  return { teams, workspaces, level, user, userTeams }
}
