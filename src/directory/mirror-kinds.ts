import { sql, type Kysely, type RawBuilder } from 'kysely'
import { recordEvents } from '../audit/audit-record.js'
import { PROJECT_PERMISSION_COLUMNS } from '../access/project-permissions.js'
import { ORGANIZATION_ACCESS_COLUMN_NAMES } from '../access/organization-access.js'
import { PERMISSION_COLUMN_NAMES } from '../access/permission-columns.js'
import type { Database } from '../db/database.js'
import { table } from '../db/tables.js'
import { organizationMembershipEventRows, projectEventRows, recordChange, teamEventRows, teamProjectEventRows, workspaceEventRows } from './events.js'
import type { DeclaredRows } from './mirror-rows.js'
import type { SeedChanges } from './seed-entries.js'
import { accessorOf, type ChangeSource } from './source.js'

/**
 * The kinds of row a mirror keeps in its organization by id (DESIGN §13.3) — teams, projects,
 * workspaces, organization memberships, team-workspace and team-project rows — each said once:
 * its columns, what makes a row the same row beside its id, how a removed row is named, and the
 * audit events of a create, an update and a destroy. From these, the three differences between
 * the snapshot's rows (a CTE `d`) and the table's, as SQL: the plan (src/directory/mirror-plan.ts)
 * reads them, the apply (src/directory/mirror-write.ts) writes them, so both find the same rows.
 */

export type KindTable = 'teams' | 'projects' | 'workspaces' | 'organization_memberships' | 'team_workspaces' | 'team_projects'

export interface Kind {
  table: KindTable
  /** The snapshot's rows of this kind. */
  rows: keyof DeclaredRows
  /** Where the summary lists its rows. */
  summary: keyof SeedChanges
  /** The columns written, compared with the snapshot's. */
  written: string[]
  /** Compared but kept elsewhere, with the row's current value (over `t`): an invitation's teams. */
  derived?: Record<string, RawBuilder<unknown>>
  /** Beside the id, what makes a row the same row (a team-workspace's team and workspace): a row whose differ is removed and made anew. */
  identity: string[]
  /** Whether the table records its source (managed_by). */
  managed: boolean
  /** How a removed row is named (over `t`, as it is before the removal): `acme/red`, `red on acme/prod`. */
  removedLabel: RawBuilder<string>
  /**
   * The unique columns a change may find held by another row of the organization that changes too (a
   * swap, a chain of renames, the owners team or the default project moving), as a unique column is
   * checked row by row: `match`, which joins a holder `t` to the snapshot's row `d` it stands in the
   * way of, and what the holder takes meanwhile.
   */
  room?: Array<{ column: string, match: RawBuilder<boolean>, meanwhile: RawBuilder<unknown> }>
  /** The audit events of rows created, updated or destroyed, from a CTE of them (`before`: an update's rows before it). */
  events: (db: Kysely<Database>, source: ChangeSource, rows: string, action: 'create' | 'update' | 'destroy', before: string) => RawBuilder<unknown>
}

const name = (tableName: 'organizations' | 'teams' | 'workspaces' | 'projects', id: string): RawBuilder<string> =>
  sql`(select x.name from ${table[tableName]} x where x.id = ${sql.ref(id)})`
const organizationName = name('organizations', 't.organization_id')
const inOrganization = (what: RawBuilder<string>): RawBuilder<string> => sql`${organizationName} || '/' || ${what}`

/** A directory kind's events: its event rows, recorded with the kind's resource type. */
const directoryEvents = (resource: 'team' | 'project' | 'workspace' | 'organization-membership' | 'team-project',
  eventRows: (rows: string, action: 'create' | 'update' | 'destroy', before: string) => RawBuilder<unknown>): Kind['events'] =>
  (db, source, rows, action, before) => sql`events as (${eventRows(rows, action, before)}),
    audit as (${recordChange(db, 'events', resource, action, source)})`

/** A name the snapshot gives another row: the holder takes its own id meanwhile. */
const nameHeld = (mine: RawBuilder<string>, declared: RawBuilder<string>, meanwhile: RawBuilder<string>) =>
  ({ column: 'name', match: sql<boolean>`${declared} = ${mine} and d.id <> t.id`, meanwhile })
/** A flag only one row of the organization holds (the owners team, the default project), which the snapshot gives another. */
const flagHeld = (column: 'is_owners' | 'is_default') =>
  ({ column, match: sql<boolean>`${sql.ref(`t.${column}`)} and ${sql.ref(`d.${column}`)} and d.id <> t.id`, meanwhile: sql`false` })

export const KINDS = {
  teams: {
    table: 'teams',
    rows: 'teams',
    summary: 'teams',
    written: ['name', 'visibility', 'is_owners', ...ORGANIZATION_ACCESS_COLUMN_NAMES],
    identity: [],
    managed: true,
    removedLabel: inOrganization(sql`t.name`),
    room: [nameHeld(sql`t.name`, sql`d.name`, sql`t.id`), flagHeld('is_owners')],
    events: directoryEvents('team', (rows) => teamEventRows(rows))
  },
  projects: {
    table: 'projects',
    rows: 'projects',
    summary: 'projects',
    written: ['name', 'description', 'is_default'],
    identity: [],
    managed: true,
    removedLabel: inOrganization(sql`t.name`),
    // a project's name is unique case-insensitively, and 3 to 40 of a few characters: an id is one
    room: [nameHeld(sql`lower(t.name)`, sql`lower(d.name)`, sql`left(t.id, 40)`), flagHeld('is_default')],
    events: directoryEvents('project', (rows) => projectEventRows(rows))
  },
  workspaces: {
    table: 'workspaces',
    rows: 'workspaces',
    summary: 'workspaces',
    written: ['name', 'project_id', 'description'],
    identity: [],
    managed: true,
    removedLabel: inOrganization(sql`t.name`),
    room: [nameHeld(sql`t.name`, sql`d.name`, sql`t.id`)],
    // an update names a move's projects (`project`: `<from> -> <to>`)
    events: directoryEvents('workspace', (rows, action, before) => workspaceEventRows(rows, action === 'update' ? before : undefined))
  },
  memberships: {
    table: 'organization_memberships',
    rows: 'memberships',
    summary: 'memberships',
    written: ['status'],
    derived: { teams: sql`(select coalesce(string_agg(omt.team_id, ',' order by omt.team_id), '') from ${table.organization_membership_teams} omt where omt.membership_id = t.id)` },
    identity: ['user_id'],
    managed: true,
    removedLabel: sql`${organizationName} || ': ' || (select coalesce(u.username, u.email) from ${table.users} u where u.id = t.user_id)`,
    events: directoryEvents('organization-membership', (rows) => organizationMembershipEventRows(rows))
  },
  teamWorkspaces: {
    table: 'team_workspaces',
    rows: 'teamWorkspaces',
    summary: 'teamAccess',
    written: ['access', ...PERMISSION_COLUMN_NAMES],
    identity: ['team_id', 'workspace_id'],
    managed: false,
    removedLabel: sql`${name('teams', 't.team_id')} || ' on ' || ${inOrganization(name('workspaces', 't.workspace_id'))}`,
    // a workspace's team access keeps HCP Terraform's own events (DESIGN §8)
    events: (db, source, rows, action) => sql`audit as (${recordEvents(db, rows, {
      action: ({ create: 'add_team', update: 'update_team_permissions', destroy: 'remove_team' } as const)[action],
      accessor: accessorOf(source),
      requestId: source.requestId,
      permissions: action !== 'destroy'
    })})`
  },
  teamProjects: {
    table: 'team_projects',
    rows: 'teamProjects',
    summary: 'projectAccess',
    written: ['access', ...PROJECT_PERMISSION_COLUMNS],
    identity: ['team_id', 'project_id'],
    managed: false,
    removedLabel: sql`${name('teams', 't.team_id')} || ' on ' || ${inOrganization(name('projects', 't.project_id'))}`,
    events: directoryEvents('team-project', (rows, action) => teamProjectEventRows(rows, action !== 'destroy'))
  }
} as const satisfies Record<string, Kind>

export type KindName = keyof typeof KINDS

const ref = (alias: string, column: string) => sql.ref(`${alias}.${column}`)
const compared = (kind: Kind) => [...kind.written, ...Object.keys(kind.derived ?? {})]
const current = (kind: Kind, column: string): RawBuilder<unknown> => kind.derived?.[column] ?? sql`${ref('t', column)}`
const sameIdentity = (kind: Kind): RawBuilder<boolean> => sql.join([sql`t.id = d.id`, ...kind.identity.map((c) => sql`${ref('t', c)} = ${ref('d', c)}`)], sql` and `) as RawBuilder<boolean>

/** How a column is named in a change's summary: `visibility`, `manage-workspaces`, `owners`, `project`. */
const SHOWN: Record<string, string> = { is_owners: 'owners', is_default: 'default', project_id: 'project' }
const shown = (column: string) => SHOWN[column] ?? column.replace(/_/g, '-')

/** Rows of the snapshot's the table lacks (over `d`), in the organization `organizationId`. */
export const createdRows = (kind: Kind): RawBuilder<unknown> =>
  sql`select d.* from d where not exists (select 1 from ${table[kind.table]} t where ${sameIdentity(kind)})`

/** The condition under which the table's row `t` differs from the snapshot's `d`. */
export const differs = (kind: Kind): RawBuilder<boolean> =>
  sql<boolean>`(${sql.join(compared(kind).map((c) => ref('d', c)))}) is distinct from (${sql.join(compared(kind).map((c) => current(kind, c)))})`

/** The organization's rows whose values differ from the snapshot's: the table's row (`t.*`) and `changes`, the names of what differs. */
export const changedRows = (kind: Kind, organizationId: string): RawBuilder<unknown> =>
  sql`select t.*, array_remove(array[${sql.join(compared(kind).map((c) =>
      sql`case when ${ref('d', c)} is distinct from ${current(kind, c)} then ${shown(c)}::text end`))}], null) as changes
    from ${table[kind.table]} t join d on ${sameIdentity(kind)}
    where t.organization_id = ${organizationId} and ${differs(kind)}`

/** The organization's rows the snapshot no longer declares (`t.*`), with their labels; `lock`: locked (`for update`). */
export const removedRows = (kind: Kind, organizationId: string, lock = false): RawBuilder<unknown> =>
  sql`select t.*, ${kind.removedLabel} as label from ${table[kind.table]} t
    where t.organization_id = ${organizationId} and not exists (select 1 from d where ${sameIdentity(kind)})${lock ? sql` for update of t` : sql``}`

/** Ids the snapshot gives that a row of another organization holds, each named: `team team-x (globex)`. */
export const heldElsewhere = (kind: Kind, organizationId: string): RawBuilder<unknown> =>
  sql`select ${`${kind.table.replace(/_/g, '-').replace(/s$/, '')} `}::text || d.id || ' belongs to organization ' || ${organizationName} as problem
    from d join ${table[kind.table]} t on t.id = d.id where t.organization_id <> ${organizationId}`

/**
 * Moves the holders of what the snapshot gives other rows out of the way (Kind.room), after the
 * CTE `d`: `held` — the holders, by joins the database hashes — then the update, which usually finds none.
 */
export const makeRoom = (kind: Kind, organizationId: string): RawBuilder<unknown> | undefined => kind.room === undefined
  ? undefined
  : sql`held as (${sql.join(kind.room.map((r) => sql`select t.id, ${r.column}::text as what from ${table[kind.table]} t join d on ${r.match}
      where t.organization_id = ${organizationId}`), sql` union all `)})
    update ${table[kind.table]} t set ${sql.join(kind.room.map((r) => sql`${sql.id(r.column)} = case
        when t.id in (select h.id from held h where h.what = ${r.column}) then ${r.meanwhile} else ${sql.ref(`t.${r.column}`)} end`))}
    where t.id in (select h.id from held h)`

/** Inserts the rows of `created` (a CTE of snapshot rows) into the organization, managed by the mirror. */
export const insertRows = (kind: Kind, organizationId: string, created: string): RawBuilder<unknown> => {
  const columns = ['id', ...kind.identity.filter((c) => !kind.written.includes(c)), ...kind.written]
  return sql`insert into ${table[kind.table]} (organization_id, ${sql.join(columns.map((c) => sql.id(c)))}${kind.managed ? sql`, managed_by` : sql``})
    select ${organizationId}::text, ${sql.join(columns.map((c) => ref('c', c)))}${kind.managed ? sql`, 'mirror'` : sql``} from ${sql.table(created)} c
    returning *`
}

/** Sets the written columns of the organization's rows the snapshot's rows `d` name (those that differ) to theirs. */
export const updateRows = (kind: Kind, organizationId: string): RawBuilder<unknown> =>
  sql`update ${table[kind.table]} t set ${sql.join(kind.written.map((c) => sql`${sql.id(c)} = ${ref('d', c)}`))}
    from d where t.id = d.id and t.organization_id = ${organizationId} returning t.*`

/** The label of a changed row: `acme/red (name, visibility)`. */
export const changedLabel = (label: string, changes: string[]): string => `${label} (${changes.join(', ')})`
