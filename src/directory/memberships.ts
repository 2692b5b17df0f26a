import { sql, type Kysely, type RawBuilder } from 'kysely'
import { isOwnerOf } from '../access/predicates.js'
import { managesMembersOf } from '../access/escalation.js'
import type { Database, ManagedBy } from '../db/database.js'
import { table } from '../db/tables.js'
import { isGoneWhileWaiting } from '../db/write-races.js'
import { membershipEventRows, recordChange } from './events.js'
import { grantsOf, managedBy, mayIf, type ChangeSource } from './source.js'

/**
 * A team's members added and removed (DESIGN §9.1, §9.4), whoever asks: one statement each, which
 * decides an API caller's permission (`managesMembersOf`) and records an `add_member` /
 * `remove_member` event per membership it actually adds or removes. The rules every source meets:
 * the users must exist, and the owners team keeps a member. An API caller knows only the users it
 * may know, and does not remove what the seed manages. A membership removed stops granting on the
 * very next statement: grants are read from the memberships. The seed's removals of memberships it
 * no longer declares go through src/directory/removals.ts, with the same events.
 */

/**
 * Why a change changed nothing: the team is not there, or the caller may not change its members
 * (`hidden`, 404); users that name nobody (`unknown`, naming them); a seed-managed membership to
 * remove through the API (`seed`); the owners team's last member (`last-owner`).
 */
export type MembersRefusal =
  | { reason: 'hidden' }
  | { reason: 'unknown', users: string[] }
  | { reason: 'seed', users: string[] }
  | { reason: 'last-owner', team: string, users: string[] }

/** The users of a change: by username (the API, §9.4), or by id (the host). */
export type Users = { usernames: string[] } | { ids: string[] }

/**
 * `target`: the team, if the source may change its members; `found`: the users named, as the
 * source may know them — an API caller who is no owner finds only the organization's active
 * members (a user outside it is a name that names nobody, so nothing is learnt of other
 * organizations), and nobody finds the user an invitation made until the person arrives (DESIGN
 * §14.2: an invitation's teams wait in organization_membership_teams); `unknown`: the names or ids
 * that found nobody.
 */
function teamAndUsers (db: Kysely<Database>, source: ChangeSource, teamId: string, users: Users): RawBuilder<unknown> {
  const [column, keys] = 'usernames' in users ? ['username', [...new Set(users.usernames)]] : ['id', [...new Set(users.ids)]]
  return sql`with ${grantsOf(db, source)}
    target as (select t.id, t.organization_id, t.name, t.is_owners from ${table.teams} t where t.id = ${teamId} and ${mayIf(source, managesMembersOf('t'))}),
    found as (select u.id, u.username from ${table.users} u, target where u.${sql.id(column)} = any(${keys}::text[]) and u.username is not null
      and ${mayIf(source, sql`(${isOwnerOf('target.organization_id')} or exists (select 1 from ${table.organization_memberships} om
        where om.user_id = u.id and om.organization_id = target.organization_id and om.status = 'active'))`)}),
    unknown as (select n.key from unnest(${keys}::text[]) as n(key) where not exists (select 1 from found f where f.${sql.id(column)} = n.key))`
}

/** The unknown names or ids, in order. */
const unknownList = sql`coalesce((select array_agg(key order by key) from unknown), '{}')`

/**
 * Adds the users to the team, managed by the source; present members are left as they are. Answers
 * the refusal, or who manages the membership (of one user: the host's answer).
 */
export async function addMembers (db: Kysely<Database>, source: ChangeSource, teamId: string, users: Users): Promise<MembersRefusal | { managedBy: ManagedBy | null }> {
  const result = await sql<{ unknown: string[], managed_by: ManagedBy | null }>`${teamAndUsers(db, source, teamId, users)},
    inserted as (insert into ${table.team_memberships} (team_id, user_id, managed_by)
      select target.id, found.id, ${managedBy(source)}::text from target, found where not exists (select 1 from unknown)
      on conflict (team_id, user_id) do nothing returning team_id, user_id, managed_by),
    events as (${membershipEventRows('inserted')}),
    audit as (${recordChange(db, 'events', 'team', 'add_member', source)})
    select ${unknownList} as unknown, coalesce((select managed_by from inserted limit 1),
      (select m.managed_by from ${table.team_memberships} m join found f on f.id = m.user_id where m.team_id = target.id limit 1)) as managed_by
    from target`.execute(db)
    .catch((err: unknown) => {
      // the team (or a user) was removed while the insert waited for it: the team is not there
      if (isGoneWhileWaiting(err)) return { rows: [] }
      throw err
    })
  const row = result.rows[0]
  if (row === undefined) return { reason: 'hidden' }
  if (row.unknown.length > 0) return { reason: 'unknown', users: row.unknown }
  return { managedBy: row.managed_by }
}

/**
 * Removes the users from the team; users who are not members are left out. Nothing is removed when
 * one of them is unknown, when a membership to remove through the API is the seed file's, or when
 * it would leave the owners team without a member: the team's memberships are locked, so that
 * concurrent removals cannot each leave "one other" member. Undefined: done.
 */
export async function removeMembers (db: Kysely<Database>, source: ChangeSource, teamId: string, users: Users): Promise<MembersRefusal | undefined> {
  const result = await sql<{ unknown: string[], seed: string[], last_owner: boolean, team: string, doomed: string[] }>`${teamAndUsers(db, source, teamId, users)},
    members as (select m.user_id, m.managed_by from ${table.team_memberships} m where m.team_id = (select id from target) for update),
    doomed as (select members.user_id, members.managed_by, found.username from members join found on found.id = members.user_id),
    verdict as (select ${unknownList} as unknown,
        coalesce((select array_agg(username order by username) from doomed where managed_by = 'seed' and ${source.by === 'api'}::boolean), '{}') as seed,
        coalesce((select is_owners from target), false) and exists (select 1 from doomed)
          and not exists (select 1 from members where user_id not in (select user_id from doomed)) as last_owner),
    removed as (delete from ${table.team_memberships} m using target, doomed, verdict v
      where m.team_id = target.id and m.user_id = doomed.user_id
        and cardinality(v.unknown) = 0 and cardinality(v.seed) = 0 and not v.last_owner
      returning m.team_id, m.user_id),
    events as (${membershipEventRows('removed')}),
    audit as (${recordChange(db, 'events', 'team', 'remove_member', source)})
    select v.unknown, v.seed, v.last_owner, target.name as team,
      coalesce((select array_agg(username order by username) from doomed), '{}') as doomed
    from target, verdict v`.execute(db)
  const row = result.rows[0]
  if (row === undefined) return { reason: 'hidden' }
  if (row.unknown.length > 0) return { reason: 'unknown', users: row.unknown }
  if (row.seed.length > 0) return { reason: 'seed', users: row.seed }
  if (row.last_owner) return { reason: 'last-owner', team: row.team, users: row.doomed }
  return undefined
}
