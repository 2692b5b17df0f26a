import { sql, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { callerGrants } from '../access/grants.js'
import { isOwnerOf, managesMembersOf } from '../access/predicates.js'
import { accessorOf, recordDirectoryEvents } from '../audit/audit-record.js'
import { isGoneWhileWaiting } from '../db/write-races.js'
import type { Caller } from '../auth/caller.js'
import { table } from '../db/tables.js'

/**
 * Why a membership change changed nothing: the caller may not change the team's members, or the
 * team is not there (404); usernames that name no user (422, naming them); a seed-managed
 * membership to remove (422); the owners team's last member (422).
 */
export type MembersRefusal =
  | { reason: 'hidden' }
  | { reason: 'unknown', usernames: string[] }
  | { reason: 'seed', usernames: string[] }
  | { reason: 'last-owner' }

/**
 * A team's members (DESIGN §9.4), added and removed by username in one statement each, which
 * starts with the caller's `grants`, decides who may by `managesMembersOf`, and records an
 * `add_member` / `remove_member` event per membership it actually adds or removes. A membership
 * removed stops granting on the very next statement: grants are read from the memberships.
 */
export class TeamMembersRepository {
  constructor (private readonly db: Kysely<Database>) {}

  /** Adds the users, by username, as API-managed members; present members are left as they are. */
  async add (caller: Caller, teamId: string, usernames: string[], requestId: string): Promise<MembersRefusal | undefined> {
    const names = [...new Set(usernames)]
    const result = await sql<{ unknown: string[] }>`with grants as (${callerGrants(this.db, caller)}),
      target as (select t.id, t.organization_id, t.name from ${table.teams} t where t.id = ${teamId} and ${managesMembersOf('t')}),
      found as (${this.found(names)}),
      unknown as (select n.username from unnest(${names}::text[]) as n(username)
        where not exists (select 1 from found f where f.username = n.username)),
      inserted as (insert into ${table.team_memberships} (team_id, user_id, managed_by)
        select target.id, found.id, 'api' from target, found where not exists (select 1 from unknown)
        on conflict (team_id, user_id) do nothing returning team_id, user_id),
      events as (select target.organization_id, target.id as resource_id, jsonb_build_object('team', target.name, 'user', found.username) as meta
        from inserted join target on target.id = inserted.team_id join found on found.id = inserted.user_id),
      audit as (${this.events('add_member', caller, requestId)})
      select coalesce((select array_agg(username order by username) from unknown), '{}') as unknown from target`.execute(this.db)
      .catch((err: unknown) => {
        // the team (or a user) was deleted while the insert waited for it: the team is not there (404)
        if (isGoneWhileWaiting(err)) return { rows: [] }
        throw err
      })
    return this.refusal(result.rows[0], undefined)
  }

  /**
   * Removes the users, by username; users who are not members are left out. Nothing is removed
   * when one of them is unknown, when a membership to remove is the seed file's, or when it
   * would leave the owners team without a member: the team's memberships are locked, so that
   * concurrent removals cannot each leave "one other" member.
   */
  async remove (caller: Caller, teamId: string, usernames: string[], requestId: string): Promise<MembersRefusal | undefined> {
    const names = [...new Set(usernames)]
    const result = await sql<{ unknown: string[], seed: string[], last_owner: boolean }>`with grants as (${callerGrants(this.db, caller)}),
      target as (select t.id, t.organization_id, t.name, t.is_owners from ${table.teams} t where t.id = ${teamId} and ${managesMembersOf('t')}),
      found as (${this.found(names)}),
      unknown as (select n.username from unnest(${names}::text[]) as n(username)
        where not exists (select 1 from found f where f.username = n.username)),
      members as (select m.user_id, m.managed_by from ${table.team_memberships} m where m.team_id = (select id from target) for update),
      doomed as (select members.user_id, members.managed_by, found.username from members join found on found.id = members.user_id),
      verdict as (select
          coalesce((select array_agg(username order by username) from unknown), '{}') as unknown,
          coalesce((select array_agg(username order by username) from doomed where managed_by = 'seed'), '{}') as seed,
          coalesce((select is_owners from target), false) and exists (select 1 from doomed)
            and not exists (select 1 from members where user_id not in (select user_id from doomed)) as last_owner),
      removed as (delete from ${table.team_memberships} m using target, doomed, verdict v
        where m.team_id = target.id and m.user_id = doomed.user_id
          and cardinality(v.unknown) = 0 and cardinality(v.seed) = 0 and not v.last_owner
        returning m.team_id, m.user_id),
      events as (select target.organization_id, target.id as resource_id, jsonb_build_object('team', target.name, 'user', doomed.username) as meta
        from removed join target on target.id = removed.team_id join doomed on doomed.user_id = removed.user_id),
      audit as (${this.events('remove_member', caller, requestId)})
      select v.unknown, v.seed, v.last_owner from target, verdict v`.execute(this.db)
    return this.refusal(result.rows[0], result.rows[0])
  }

  /**
   * The users the names name, as the caller may know them: an owner finds any user (it brings users
   * into its organization); anyone else only the organization's members — a user outside it is
   * answered as a name that names nobody, so that nothing is learnt of other organizations. Reads
   * the statement's `target` team.
   */
  private found (names: string[]) {
    return sql`select u.id, u.username from ${table.users} u, target where u.username = any(${names}::text[])
      and (${isOwnerOf('target.organization_id')} or exists (select 1 from ${table.team_memberships} om join ${table.teams} ot on ot.id = om.team_id
        where om.user_id = u.id and ot.organization_id = target.organization_id))`
  }

  private refusal (row: { unknown: string[] } | undefined, removal: { seed: string[], last_owner: boolean } | undefined): MembersRefusal | undefined {
    if (row === undefined) return { reason: 'hidden' }
    if (row.unknown.length > 0) return { reason: 'unknown', usernames: row.unknown }
    if (removal !== undefined && removal.seed.length > 0) return { reason: 'seed', usernames: removal.seed }
    if (removal?.last_owner === true) return { reason: 'last-owner' }
    return undefined
  }

  private events (action: 'add_member' | 'remove_member', caller: Caller, requestId: string) {
    return recordDirectoryEvents(this.db, 'events', { resourceType: 'team', action, accessor: accessorOf(caller), requestId })
  }
}
