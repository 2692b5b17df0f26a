import { createHash } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import type { Database } from '../../src/db/database.js'
import { table, TABLE_NAMES } from '../../src/db/tables.js'
import { tokenDigest } from '../../src/auth/token-digest.js'

/**
 * What test/mirror/read-only.test.ts walks: one small organization, built the same way mirrored
 * (every row the mirror's, written in a transaction that says it is the mirror) or not (every row
 * the API's), and for every write route of the API the requests that would change that
 * organization's rows — a rename, a move, a new row, a deletion, a membership begun or ended.
 */

/** The owners team's token of the organization built with prefix `p`. */
export const ownersToken = (p: string): string => `owners-team-token-of-${p}`
/** The user token of its plain member `${p}dev` (devs: write on workspace one, nothing else). */
export const memberToken = (p: string): string => `member-token-of-${p}`

/**
 * The organization `name`, its ids prefixed by `p`: users owner, dev, ops (emails) and new (an
 * invitation's placeholder: an email, no username); teams owners (owner), devs (dev, ops) and ops
 * (ops); projects Default Project, two and empty; workspaces one (the default project) and two
 * (project two, tagged prod); devs write on one, ops read on two, devs read on project two; ops's
 * invitation to devs. Mirrored: managed by the mirror, with its `mirrors` row.
 */
export async function makeOrganization (db: Kysely<Database>, p: string, name: string, mirrored: boolean): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (mirrored) await sql`set local team_access.mirror = 'on'`.execute(trx)
    const managed_by = mirrored ? 'mirror' as const : 'api' as const
    const org = `org-${p}`
    await trx.insertInto('organizations').values({ id: org, name, managed_by }).execute()
    if (mirrored) await trx.insertInto('mirrors').values({ organization_id: org, host: 'app.terraform.io', succeeded_at: new Date(), duration_ms: 1200, requests: 14 }).execute()
    await trx.insertInto('users').values(['owner', 'dev', 'ops'].map((u) => ({ id: `user-${p}${u}`, username: `${p}${u}`, email: `${p}${u}@example.com`, managed_by }))).execute()
    await trx.insertInto('users').values({ id: `user-${p}new`, username: null, email: `${p}new@example.com`, managed_by }).execute()
    await trx.insertInto('organization_memberships').values([
      ...['owner', 'dev', 'ops'].map((u) => ({ id: `ou-${p}${u}`, organization_id: org, user_id: `user-${p}${u}`, status: 'active' as const, managed_by })),
      { id: `ou-${p}new`, organization_id: org, user_id: `user-${p}new`, status: 'invited', managed_by }
    ]).execute()
    await trx.insertInto('teams').values([
      { id: `team-${p}owners`, organization_id: org, name: 'owners', is_owners: true, visibility: 'organization', managed_by },
      { id: `team-${p}devs`, organization_id: org, name: 'devs', visibility: 'organization', managed_by },
      { id: `team-${p}ops`, organization_id: org, name: 'ops', visibility: 'secret', read_workspaces: true, managed_by }
    ]).execute()
    await trx.insertInto('organization_membership_teams').values({ membership_id: `ou-${p}new`, team_id: `team-${p}devs` }).execute()
    await trx.insertInto('team_memberships').values([['owners', 'owner'], ['devs', 'dev'], ['devs', 'ops'], ['ops', 'ops']]
      .map(([team, user]) => ({ team_id: `team-${p}${team}`, user_id: `user-${p}${user}`, managed_by }))).execute()
    await trx.insertInto('projects').values([
      { id: `prj-${p}two`, organization_id: org, name: 'two', managed_by },
      { id: `prj-${p}empty`, organization_id: org, name: 'empty', managed_by }
    ]).execute()
    await trx.insertInto('workspaces').values([
      { id: `ws-${p}one`, organization_id: org, name: 'one', managed_by },
      { id: `ws-${p}two`, organization_id: org, name: 'two', project_id: `prj-${p}two`, settings: JSON.stringify({ 'tag-names': ['prod'] }), managed_by }
    ]).execute()
    const row = (team: string, workspace: string, access: 'write' | 'read') => access === 'write'
      ? { id: `tws-${p}${team}${workspace}`, organization_id: org, team_id: `team-${p}${team}`, workspace_id: `ws-${p}${workspace}`, access, runs: 'apply' as const, variables: 'write' as const, state_versions: 'write' as const, sentinel_mocks: 'read' as const, workspace_locking: true, run_tasks: false }
      : { id: `tws-${p}${team}${workspace}`, organization_id: org, team_id: `team-${p}${team}`, workspace_id: `ws-${p}${workspace}`, access, runs: 'read' as const, variables: 'read' as const, state_versions: 'read' as const, sentinel_mocks: 'none' as const, workspace_locking: false, run_tasks: false }
    await trx.insertInto('team_workspaces').values([row('devs', 'one', 'write'), row('ops', 'two', 'read')]).execute()
    await sql`insert into ${table.team_projects} (id, organization_id, team_id, project_id, access, project_settings, project_teams, project_variable_sets, runs, sentinel_mocks, state_versions, variables, workspace_create, workspace_locking, workspace_delete, workspace_move, run_tasks)
      values (${`tprj-${p}devstwo`}, ${org}, ${`team-${p}devs`}, ${`prj-${p}two`}, 'read', 'read', 'none', 'none', 'read', 'none', 'read', 'read', false, false, false, false, false)`.execute(trx)
    // tokens are this service's own (DESIGN §9.5): written here as anywhere, mirrored or not
    await trx.insertInto('tokens').values([
      { id: `at-${p}owners`, kind: 'team', team_id: `team-${p}owners`, digest: tokenDigest(ownersToken(p)), managed_by: 'api' },
      { id: `at-${p}dev`, kind: 'user', user_id: `user-${p}dev`, digest: tokenDigest(memberToken(p)), managed_by: 'api' }
    ]).execute()
  })
}

/** Removes what makeOrganization made (the organization takes its rows with it; its users go too). */
export async function removeOrganization (db: Kysely<Database>, p: string): Promise<void> {
  await db.deleteFrom('organizations').where('id', '=', `org-${p}`).execute()
  await db.deleteFrom('users').where('id', 'in', ['owner', 'dev', 'ops', 'new'].map((u) => `user-${p}${u}`)).execute()
  // an invitation a request made created its user (no username): it goes with the organization's
  await db.deleteFrom('users').where('email', 'like', `${p}-invited%`).execute()
}

export interface WriteRequest { what: string, url: string, body?: unknown }
/** A user of no organization (the test seeds it): added to a team, it joins the team's organization. */
export const DRIFTER = { id: 'user-drifter', username: 'drifter', email: 'drifter@example.com' }

/**
 * For every write route of the API (`METHOD /api/v2/path/:param`, as Fastify registers it), the
 * requests that change organization `name` (ids prefixed by `p`) — each on the organization as
 * makeOrganization leaves it. With the prefix and name of nothing, each names a missing row.
 */
export function writes (p: string, name: string): Record<string, WriteRequest[]> {
  const api = '/api/v2'
  const rel = (type: string, id: string) => ({ data: { type, id } })
  const twRow = (attributes: object, team?: string) => ({ data: { type: 'team-workspaces', attributes, ...(team === undefined ? {} : { relationships: { team: rel('teams', `team-${p}${team}`), workspace: rel('workspaces', `ws-${p}one`) } }) } })
  const accessSet = (...entries: Array<[string, string]>) => ({ data: entries.map(([team, access]) => ({ type: 'team-workspaces', attributes: { access }, relationships: { team: rel('teams', `team-${p}${team}`) } })) })
  const workspace = (attributes: object, project?: string) => ({ data: { type: 'workspaces', attributes, ...(project === undefined ? {} : { relationships: { project: rel('projects', `prj-${p}${project}`) } }) } })
  const tags = (...names: string[]) => ({ data: names.map((n) => ({ type: 'tags', attributes: { name: n } })) })
  const team = (attributes: object) => ({ data: { type: 'teams', attributes } })
  const users = (...names: string[]) => ({ data: names.map((id) => ({ type: 'users', id })) })
  const memberships = (...people: string[]) => ({ data: people.map((u) => ({ type: 'organization-memberships', id: `ou-${p}${u}` })) })
  const teamProject = (attributes: object) => ({ data: { type: 'team-projects', attributes } })
  const invite = (email: string, ...teams: string[]) => ({ data: { type: 'organization-memberships', attributes: { email }, ...(teams.length === 0 ? {} : { relationships: { teams: { data: teams.map((t) => ({ type: 'teams', id: `team-${p}${t}` })) } } }) } })
  const byId = `${api}/workspaces/ws-${p}one`
  const byName = `${api}/organizations/${name}/workspaces/one`
  return {
    'POST /api/v2/team-workspaces': [{ what: 'a new row: ops on one', url: `${api}/team-workspaces`, body: twRow({ access: 'read' }, 'ops') }],
    'PATCH /api/v2/team-workspaces/:id': [
      { what: 'a level', url: `${api}/team-workspaces/tws-${p}devsone`, body: twRow({ access: 'read' }) },
      { what: 'custom permissions', url: `${api}/team-workspaces/tws-${p}devsone`, body: twRow({ access: 'custom', runs: 'plan', variables: 'read' }) }
    ],
    'DELETE /api/v2/team-workspaces/:id': [{ what: 'a row removed', url: `${api}/team-workspaces/tws-${p}devsone` }],
    'PUT /api/v2/workspaces/:id/team-access': [
      { what: 'a row changed', url: `${byId}/team-access`, body: accessSet(['devs', 'plan']) },
      { what: 'a row added', url: `${byId}/team-access`, body: accessSet(['devs', 'write'], ['ops', 'read']) },
      { what: 'every row removed', url: `${byId}/team-access`, body: accessSet() }
    ],
    'POST /api/v2/organizations/:organization/workspaces': [
      { what: 'a new workspace', url: `${api}/organizations/${name}/workspaces`, body: workspace({ name: 'three' }) },
      { what: 'a new workspace in project two', url: `${api}/organizations/${name}/workspaces`, body: workspace({ name: 'four' }, 'two') }
    ],
    'PATCH /api/v2/workspaces/:id': [
      { what: 'a rename', url: byId, body: workspace({ name: 'renamed' }) },
      { what: 'a move to project two', url: byId, body: workspace({}, 'two') },
      { what: 'a setting', url: byId, body: workspace({ description: 'changed', 'auto-apply': true }) }
    ],
    'PATCH /api/v2/organizations/:organization/workspaces/:name': [
      { what: 'a rename', url: byName, body: workspace({ name: 'renamed' }) },
      { what: 'a move to project empty', url: byName, body: workspace({}, 'empty') }
    ],
    'DELETE /api/v2/workspaces/:id': [{ what: 'a deletion', url: byId }],
    'DELETE /api/v2/organizations/:organization/workspaces/:name': [{ what: 'a deletion', url: byName }],
    'POST /api/v2/workspaces/:id/actions/safe-delete': [{ what: 'a safe-delete', url: `${byId}/actions/safe-delete` }],
    'POST /api/v2/organizations/:organization/workspaces/:name/actions/safe-delete': [{ what: 'a safe-delete', url: `${byName}/actions/safe-delete` }],
    'POST /api/v2/workspaces/:id/relationships/tags': [{ what: 'a tag added', url: `${api}/workspaces/ws-${p}two/relationships/tags`, body: tags('staging') }],
    'DELETE /api/v2/workspaces/:id/relationships/tags': [{ what: 'a tag removed', url: `${api}/workspaces/ws-${p}two/relationships/tags`, body: tags('prod') }],
    'POST /api/v2/organizations/:organization/teams': [
      { what: 'a new team', url: `${api}/organizations/${name}/teams`, body: team({ name: 'new-team' }) },
      { what: 'a new team with organization access', url: `${api}/organizations/${name}/teams`, body: team({ name: 'admins', visibility: 'organization', 'organization-access': { 'manage-workspaces': true } }) }
    ],
    'PATCH /api/v2/teams/:id': [
      { what: 'a rename', url: `${api}/teams/team-${p}devs`, body: team({ name: 'developers' }) },
      { what: 'organization access', url: `${api}/teams/team-${p}devs`, body: team({ 'organization-access': { 'manage-workspaces': true } }) },
      { what: 'visibility', url: `${api}/teams/team-${p}ops`, body: team({ visibility: 'organization' }) }
    ],
    'DELETE /api/v2/teams/:id': [{ what: 'a team with members and access', url: `${api}/teams/team-${p}devs` }],
    'POST /api/v2/teams/:id/relationships/users': [
      { what: 'a member of the organization', url: `${api}/teams/team-${p}ops/relationships/users`, body: users(`${p}owner`) },
      { what: 'a user of no organization', url: `${api}/teams/team-${p}ops/relationships/users`, body: users(DRIFTER.username) }
    ],
    'DELETE /api/v2/teams/:id/relationships/users': [{ what: 'a member', url: `${api}/teams/team-${p}devs/relationships/users`, body: users(`${p}dev`) }],
    'POST /api/v2/teams/:id/relationships/organization-memberships': [
      { what: 'an active membership', url: `${api}/teams/team-${p}ops/relationships/organization-memberships`, body: memberships('owner') },
      { what: 'an invitation', url: `${api}/teams/team-${p}ops/relationships/organization-memberships`, body: memberships('new') }
    ],
    'DELETE /api/v2/teams/:id/relationships/organization-memberships': [
      { what: 'an active membership', url: `${api}/teams/team-${p}devs/relationships/organization-memberships`, body: memberships('dev') },
      { what: 'an invitation', url: `${api}/teams/team-${p}devs/relationships/organization-memberships`, body: memberships('new') }
    ],
    'POST /api/v2/organizations/:organization/projects': [{ what: 'a new project', url: `${api}/organizations/${name}/projects`, body: { data: { type: 'projects', attributes: { name: 'three' } } } }],
    'PATCH /api/v2/projects/:id': [
      { what: 'a rename', url: `${api}/projects/prj-${p}two`, body: { data: { type: 'projects', attributes: { name: 'second' } } } },
      { what: 'a description', url: `${api}/projects/prj-${p}two`, body: { data: { type: 'projects', attributes: { description: 'the second' } } } }
    ],
    'DELETE /api/v2/projects/:id': [{ what: 'an empty project', url: `${api}/projects/prj-${p}empty` }],
    'POST /api/v2/team-projects': [{ what: 'a new row: ops on two', url: `${api}/team-projects`, body: { data: { type: 'team-projects', attributes: { access: 'read' }, relationships: { team: rel('teams', `team-${p}ops`), project: rel('projects', `prj-${p}two`) } } } }],
    'PATCH /api/v2/team-projects/:id': [
      { what: 'a level', url: `${api}/team-projects/tprj-${p}devstwo`, body: teamProject({ access: 'write' }) },
      { what: 'custom permissions', url: `${api}/team-projects/tprj-${p}devstwo`, body: teamProject({ access: 'custom', 'project-access': { settings: 'read', teams: 'read' }, 'workspace-access': { runs: 'plan' } }) }
    ],
    'DELETE /api/v2/team-projects/:id': [{ what: 'a row removed', url: `${api}/team-projects/tprj-${p}devstwo` }],
    'POST /api/v2/organizations/:organization/organization-memberships': [
      { what: 'an invitation of a new email', url: `${api}/organizations/${name}/organization-memberships`, body: invite(`${p}-invited@example.com`) },
      { what: 'an invitation with a team', url: `${api}/organizations/${name}/organization-memberships`, body: invite(`${p}-invited-too@example.com`, 'devs') },
      { what: 'a user of no organization, active at once', url: `${api}/organizations/${name}/organization-memberships`, body: invite(DRIFTER.email) }
    ],
    'DELETE /api/v2/organization-memberships/:id': [
      { what: 'an active member leaves', url: `${api}/organization-memberships/ou-${p}dev` },
      { what: 'an invitation withdrawn', url: `${api}/organization-memberships/ou-${p}new` }
    ]
  }
}

/**
 * The state a refused write must leave as it was: a digest of every row of every table of the
 * plugin but the audit trail and `except` (a token's last use is no change), and the audit trail's length.
 */
export async function stateOf (db: Kysely<Database>, except: readonly string[] = []): Promise<{ rows: string, events: number }> {
  const names = TABLE_NAMES.filter((n) => n !== 'audit_events' && !except.includes(n))
  const every = names.map((name) => sql`select ${name}::text as t, (to_jsonb(r) - 'last_used_at')::text as row from ${table[name]} r`)
  const { rows } = await sql<{ t: string, row: string }>`${sql.join(every, sql` union all `)}`.execute(db)
  const digest = createHash('sha256').update(rows.map((r) => `${r.t} ${r.row}`).sort().join('\n')).digest('hex')
  const events = Number((await db.selectFrom('audit_events').select((e) => e.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
  return { rows: digest, events }
}
