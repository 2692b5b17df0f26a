import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from '../db/database.js'
import { table } from '../db/tables.js'
import { membershipEventRows, recordChange } from './events.js'
import { recordset, type Declared } from './mirror-rows.js'
import type { ChangeSource } from './source.js'

/**
 * A mirror's people (DESIGN §13.3): users, which are global — HCP Terraform's ids, usernames and
 * emails; a mirror-managed user no mirrored organization declares any more is removed — and the
 * members of the mirrored organization's teams. The differences as SQL over the snapshot's rows
 * (a CTE `d`), read by the plan and written by the apply (src/directory/mirror-plan.ts,
 * mirror-write.ts), and the conflicts: a username or an email a user of another source holds.
 */

/** Who manages a row, as a conflict names it. */
export const MANAGER: Record<string, string> = { seed: 'the seed file', api: 'the API', host: 'the host', mirror: 'another mirror' }
const manager = (column: string): RawBuilder<string> =>
  sql`case ${sql.ref(column)} ${sql.join(Object.entries(MANAGER).map(([k, v]) => sql`when ${k} then ${v}`), sql` `)} end`

const users = (declared: Declared): RawBuilder<unknown> => sql`d as (select * from ${recordset(declared)})`

/**
 * The mirror's users this snapshot no longer declares and no other mirrored organization holds a
 * membership of (over `u`, as a condition).
 */
const undeclared = (organizationId: string): RawBuilder<boolean> => sql<boolean>`u.managed_by = 'mirror'
  and not exists (select 1 from d where d.id = u.id)
  and not exists (select 1 from ${table.organization_memberships} m join ${table.organizations} o on o.id = m.organization_id
    where m.user_id = u.id and o.managed_by = 'mirror' and o.id <> ${organizationId}::text)`

const userLabel = sql<string>`coalesce(u.username, u.email, u.id)`

/** A user another user would hold the username or email of: `u` holds what `d` declares. */
const holds = (column: 'username' | 'email'): RawBuilder<boolean> => column === 'username'
  ? sql<boolean>`u.username = d.username and u.id <> d.id`
  : sql<boolean>`lower(u.email) = lower(d.email) and u.id <> d.id`

export interface UsersPlan {
  created: string[]
  changed: Array<{ id: string, changes: string[] }>
  removed: Array<{ id: string, label: string }>
  conflicts: string[]
}

/** What the users' apply would do, and what stands in its way; plain reads. */
export async function planUsers (db: Kysely<Database>, declared: Declared, organizationId: string): Promise<UsersPlan> {
  const taken = (column: 'username' | 'email') => sql`select ${column}::text || ' ' || ${sql.ref(`d.${column}`)} || ' is held by user ' || u.id || ', managed by ' || ${manager('u.managed_by')} || ' here'
    from d join ${table.users} u on ${holds(column)}
    where u.managed_by <> 'mirror' or not (exists (select 1 from d mine where mine.id = u.id) or ${undeclared(organizationId)})`
  const { rows } = await sql<{ op: 'created' | 'changed' | 'removed' | 'conflict', id: string, changes: string[] | null, label: string | null }>`with ${users(declared)}
    select 'created' as op, d.id, null::text[] as changes, null::text as label from d where not exists (select 1 from ${table.users} u where u.id = d.id)
    union all
    select 'changed', d.id, array_remove(array[case when d.username is distinct from u.username then 'username' end,
        case when d.email is distinct from u.email then 'email' end], null), null
      from d join ${table.users} u on u.id = d.id where u.managed_by = 'mirror' and (d.username, d.email) is distinct from (u.username, u.email)
    union all
    select 'removed', u.id, null, ${userLabel} from ${table.users} u where ${undeclared(organizationId)}
    union all
    select 'conflict', d.id, null, 'user ' || d.id || ' is managed by ' || ${manager('u.managed_by')} || ' here'
      from d join ${table.users} u on u.id = d.id where u.managed_by <> 'mirror'
    union all
    select 'conflict', null, null, problem from (${taken('username')}) x(problem)
    union all
    select 'conflict', null, null, problem from (${taken('email')}) x(problem)`.execute(db)
  const of = (op: string) => rows.filter((row) => row.op === op)
  return {
    created: of('created').map((row) => row.id),
    changed: of('changed').map((row) => ({ id: row.id, changes: row.changes ?? [] })),
    removed: of('removed').map((row) => ({ id: row.id, label: row.label! })).sort((a, b) => a.label < b.label ? -1 : 1),
    conflicts: [...new Set(of('conflict').map((row) => row.label!))].sort()
  }
}

/**
 * The mirror's users the snapshot no longer declares (and no other mirrored organization holds),
 * locked, for the directory's removals (which take their memberships and tokens); with their labels.
 */
export async function undeclaredUsers (trx: Kysely<Database>, declared: Declared, organizationId: string): Promise<Array<{ id: string, label: string }>> {
  const { rows } = await sql<{ id: string, label: string }>`with ${users(declared)}
    select u.id, ${userLabel} as label from ${table.users} u where ${undeclared(organizationId)} order by u.id for update of u`.execute(trx)
  return rows
}

/**
 * Writes the snapshot's users: the mirror's that differ changed, and the others created. What
 * differs is read first; then room is made — a username or email one of them declares, which
 * another of the mirror's users holds now (a swap, a chain of renames), is moved out of the way
 * (the holder takes its id as username meanwhile), as a unique column is checked row by row. The
 * ids created, and the ids changed with what changed.
 */
export async function writeUsers (trx: Kysely<Database>, declared: Declared): Promise<{ created: string[], changed: Array<{ id: string, changes: string[] }> }> {
  const changed = await sql<{ id: string, changes: string[] }>`with ${users(declared)}
    select u.id, array_remove(array[case when d.username is distinct from u.username then 'username' end,
        case when d.email is distinct from u.email then 'email' end], null) as changes
    from ${table.users} u join d on d.id = u.id where u.managed_by = 'mirror' and (d.username, d.email) is distinct from (u.username, u.email)
    order by u.id for update of u`.execute(trx)
  const held = (column: 'username' | 'email') => sql`u.id in (select h.id from held h where h.what = ${column})`
  await sql`with ${users(declared)},
    held as (select u.id, 'username' as what from ${table.users} u join d on ${holds('username')} where u.managed_by = 'mirror'
      union all
      select u.id, 'email' from ${table.users} u join d on ${holds('email')} where u.managed_by = 'mirror')
    update ${table.users} u set username = case when ${held('username')} or (${held('email')} and u.username is null) then u.id else u.username end,
      email = case when ${held('email')} then null else u.email end
    where u.id in (select h.id from held h)`.execute(trx)
  const ids = changed.rows.map((row) => row.id)
  if (ids.length > 0) {
    await sql`with ${users(declared)} update ${table.users} u set username = d.username, email = d.email from d where u.id = d.id and u.id = any(${ids}::text[])`.execute(trx)
  }
  const created = await sql<{ id: string }>`with ${users(declared)}
    insert into ${table.users} (id, username, email, managed_by)
    select d.id, d.username, d.email, 'mirror' from d where not exists (select 1 from ${table.users} u where u.id = d.id)
    returning id`.execute(trx)
  return { created: created.rows.map((row) => row.id), changed: changed.rows }
}

// ---- the members of the organization's teams ----

const members = (declared: Declared): RawBuilder<unknown> => sql`d as (select * from ${recordset(declared)})`

/** The organization's team memberships the snapshot does not declare (over `m`, as the directory's removals take it). */
export const undeclaredMembers = (declared: Declared, organizationId: string): RawBuilder<boolean> =>
  sql<boolean>`m.team_id in (select t.id from ${table.teams} t where t.organization_id = ${organizationId}::text)
    and not exists (select 1 from ${recordset(declared)} where x.team_id = m.team_id and x.user_id = m.user_id)`

const memberLabel = sql<string>`o.name || '/' || t.name || ': ' || u.username`

/**
 * The team memberships the apply would add (team id, user id) and remove (labels, as the
 * directory's removals name them) — with those that a removed user's removal takes in other
 * organizations (`removedUsers`); plain reads.
 */
export async function planMembers (db: Kysely<Database>, declared: Declared, organizationId: string, removedUsers: string[]): Promise<{ created: Array<{ team_id: string, user_id: string }>, removed: string[] }> {
  const { rows } = await sql<{ op: 'created' | 'removed', team_id: string, user_id: string, label: string | null }>`with ${members(declared)}
    select 'created' as op, d.team_id, d.user_id, null::text as label from d
      where not exists (select 1 from ${table.team_memberships} m where m.team_id = d.team_id and m.user_id = d.user_id)
    union all
    select 'removed', m.team_id, m.user_id, ${memberLabel} from ${table.team_memberships} m
      join ${table.teams} t on t.id = m.team_id join ${table.organizations} o on o.id = t.organization_id join ${table.users} u on u.id = m.user_id
      where (t.organization_id = ${organizationId}::text and not exists (select 1 from d where d.team_id = m.team_id and d.user_id = m.user_id))
        or (t.organization_id <> ${organizationId}::text and m.user_id = any(${removedUsers}::text[]))`.execute(db)
  return {
    created: rows.filter((row) => row.op === 'created').map(({ team_id, user_id }) => ({ team_id, user_id })),
    removed: rows.filter((row) => row.op === 'removed').map((row) => row.label!)
  }
}

/** Adds the team memberships the snapshot declares and the teams lack, managed by the mirror, each with its `add_member` event; (team id, user id) added. */
export async function addMembers (trx: Kysely<Database>, source: ChangeSource, declared: Declared): Promise<Array<{ team_id: string, user_id: string }>> {
  const { rows } = await sql<{ team_id: string, user_id: string }>`with ${members(declared)},
    inserted as (insert into ${table.team_memberships} (team_id, user_id, managed_by)
      select d.team_id, d.user_id, 'mirror' from d
      where not exists (select 1 from ${table.team_memberships} m where m.team_id = d.team_id and m.user_id = d.user_id)
      returning team_id, user_id),
    events as (${membershipEventRows('inserted')}),
    audit as (${recordChange(trx, 'events', 'team', 'add_member', source)})
    select team_id, user_id from inserted`.execute(trx)
  return rows
}
