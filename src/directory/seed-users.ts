import { sql, type Transaction } from 'kysely'
import type { SeedUser } from '../../schemas/seed.js'
import type { Database, ManagedBy } from '../db/database.js'
import { newId } from '../db/ids.js'
import { table } from '../db/tables.js'
import { placeholderOf, takeOver, writeEmail } from './arrivals.js'
import { organizationMembershipEventRows, recordChange } from './events.js'
import type { Removals } from './removals.js'
import type { SeedSummary } from './seed-entries.js'
import { madeBy, notDeclared, type Named } from './seed-names.js'
import type { ChangeSource } from './source.js'

/**
 * A seed's people (DESIGN §6, §9.1, §14.2): its users, written by id or by username, with their
 * emails; the seed's users it no longer declares, removed; and the organization memberships of
 * people it no longer lists in any of an organization's teams, ended. Runs in the seed's
 * transaction.
 */

/** A user as the seed found it before writing it: what the summary compares. */
export type UserBefore = Record<string, unknown> & { username: string | null, email: string | null, managed_by: string }

/**
 * Writes one declared user, and answers its id, the row as it was (none: new) and the team
 * memberships an arrival added. An email an invitation's placeholder holds (DESIGN §14.2) is the
 * person arriving: a user the document declares without an id and that does not exist yet takes
 * the placeholder over (its id kept); any other — a user that exists, or one declared with an id
 * of its own — absorbs it (src/directory/arrivals.ts). Either way the next apply finds the row by
 * what the document says, and changes nothing. `at` reports a write's failure against the entry.
 */
export async function writeUser (trx: Transaction<Database>, source: ChangeSource, user: SeedUser,
  at: <T>(write: () => Promise<T>) => Promise<T>): Promise<{ id: string, before: UserBefore | undefined, added: string[] }> {
  const key = user.id === undefined ? 'username' : 'id'
  const before = await trx.selectFrom('users').select(['id', 'username', 'email', 'managed_by'])
    .where(key, '=', user.id ?? user.username).executeTakeFirst()
  const email = user.email ?? null
  const placeholder = email === null ? undefined : await placeholderOf(trx, email)
  if (placeholder !== undefined && before === undefined && user.id === undefined) {
    const row = await trx.selectFrom('users').select(['username', 'email', 'managed_by']).where('id', '=', placeholder).executeTakeFirstOrThrow()
    const added = await at(() => takeOver(trx, source, placeholder, { username: user.username, email: email!, managedBy: 'seed' }))
    return { id: placeholder, before: row, added }
  }
  // the placeholder holds the email until this user absorbs it: the row keeps the one it has meanwhile
  const absorbs = placeholder !== undefined && placeholder !== before?.id
  const { id } = await at(() => trx.insertInto('users')
    .values({ id: user.id ?? newId('user'), username: user.username, email: absorbs ? null : email, managed_by: 'seed' })
    .onConflict((oc) => oc.column(key).doUpdateSet((eb) => ({
      username: eb.ref('excluded.username'),
      email: absorbs ? eb.ref('users.email') : eb.ref('excluded.email'),
      managed_by: 'seed' as ManagedBy
    })))
    .returning('id').executeTakeFirstOrThrow())
  const added = placeholder === undefined ? [] : await at(() => writeEmail(trx, source, id, email))
  return { id, before, added }
}

/** Removes the seed's users the document no longer declares (by id, or by username where no id is given), with what hangs on them. */
export async function removeUndeclaredUsers (trx: Transaction<Database>, directory: Removals, summary: SeedSummary, declared: Named[]): Promise<void> {
  const doomed = await trx.selectFrom('users').select(['id', 'username']).where('managed_by', '=', 'seed')
    .where((eb) => notDeclared(eb, 'username', declared)).orderBy('username').forUpdate().execute()
  if (doomed.length === 0) return
  await directory.removeUsers(doomed.map((u) => u.id))
  summary.removed.users.push(...doomed.map((u) => u.username ?? u.id))
}

/**
 * The organization's seed-managed memberships of people the document lists in none of its teams
 * (after the teams' members are written: they hold no seed-managed team membership there). A
 * person with no team there left leaves the organization (`destroy` event); one still in a team
 * another source added them to stays, the membership handed to that source (the API's before the
 * host's), so that the API can end it and no seed holds on to it.
 */
export async function leaveUnlisted (trx: Transaction<Database>, source: ChangeSource, summary: SeedSummary, organization: { id: string, name: string }): Promise<void> {
  const result = await sql<{ kind: 'gone' | 'handed', name: string, by: ManagedBy | null }>`with unlisted as (
      select m.id, (select tm.managed_by from ${table.team_memberships} tm join ${table.teams} t on t.id = tm.team_id
          where tm.user_id = m.user_id and t.organization_id = m.organization_id
          order by case tm.managed_by when 'api' then 0 when 'host' then 1 else 2 end limit 1) as kept_by
        from ${table.organization_memberships} m
        where m.organization_id = ${organization.id} and m.managed_by = 'seed'
          and not exists (select 1 from ${table.team_memberships} tm join ${table.teams} t on t.id = tm.team_id
            where tm.user_id = m.user_id and t.organization_id = m.organization_id and tm.managed_by = 'seed')
      for update of m),
    gone as (delete from ${table.organization_memberships} m using unlisted x where m.id = x.id and x.kept_by is null
      returning m.id, m.organization_id, m.user_id),
    handed as (update ${table.organization_memberships} m set managed_by = x.kept_by from unlisted x
      where m.id = x.id and x.kept_by is not null returning m.user_id, x.kept_by),
    events as (${organizationMembershipEventRows('gone')}),
    audit as (${recordChange(trx, 'events', 'organization-membership', 'destroy', source)})
    select 'gone' as kind, coalesce(u.username, u.email) as name, null as by from gone g join ${table.users} u on u.id = g.user_id
    union all
    select 'handed', coalesce(u.username, u.email), h.kept_by from handed h join ${table.users} u on u.id = h.user_id
    order by kind, name`.execute(trx)
  for (const row of result.rows) {
    if (row.kind === 'gone') summary.removed.memberships.push(`${organization.name}: ${row.name}`)
    else summary.changed.memberships.push(`${organization.name}: ${row.name} (listed in none of its teams: kept, now as the teams added ${madeBy({ managed_by: row.by! })} that remain)`)
  }
}
