import { sql, type Kysely } from 'kysely'
import type { Database, ManagedBy } from '../db/database.js'
import { table } from '../db/tables.js'
import { membershipEventRows, recordChange } from './events.js'
import type { ChangeSource } from './source.js'

/**
 * A person arriving (DESIGN §14.2): an invitation to an email no user had made a user for it — the
 * placeholder, with that email and no username. When a seed, the host (or a mirror) declares a
 * user with that email, the person has arrived: the placeholder's row becomes theirs, its
 * invitations become active, and the teams they were given become team memberships, with their
 * `add_member` events (the source that brought the person names them). Runs in the caller's
 * transaction.
 *
 * Two ways in. A new user without an explicit id *takes over* the placeholder (`takeOver`): the
 * row keeps its id, and gets the username and the source. A user that already has a row — an
 * existing user given the email, or a user declared with an explicit id of its own — *absorbs*
 * the placeholder (`absorb`): the placeholder's memberships (their `ou-` ids kept, which is what
 * Terraform's state holds) move to that row, or lend it their teams where it is a member already,
 * and the placeholder goes. So an explicit id is always the row's id — a seed matches its users by
 * id, and the next apply finds the row it declared — and only a membership's computed `user_id`
 * changes, once.
 */

/** The placeholder of this email (case-insensitively): a user with no username yet, locked. */
export async function placeholderOf (trx: Kysely<Database>, email: string): Promise<string | undefined> {
  const row = await trx.selectFrom('users').select('id')
    .where(sql<boolean>`lower(email) = lower(${email})`).where('username', 'is', null)
    .forUpdate().executeTakeFirst()
  return row?.id
}

/**
 * The placeholder becomes the person's: its username, its email as now written, its source; then
 * its invitations are active (`activate`). The memberships added.
 */
export async function takeOver (trx: Kysely<Database>, source: ChangeSource, placeholderId: string,
  person: { username: string, email: string, managedBy: ManagedBy }): Promise<string[]> {
  await trx.updateTable('users').set({ username: person.username, email: person.email, managed_by: person.managedBy })
    .where('id', '=', placeholderId).execute()
  return await activate(trx, source, placeholderId)
}

/**
 * The user `userId` absorbs the placeholder: each of the placeholder's memberships moves to the
 * user where the user has none in that organization; where it has one, the teams the invitation
 * was given are the user's — team memberships at once, managed as the invitation is (so that the
 * source of the user's own membership, a seed say, does not take them for its own), or, while the
 * user is itself a placeholder, teams its own invitation waits with. Then the placeholder goes
 * (with what is left of it) and the user's invitations, its own and those it took, are active
 * (`activate`). The caller writes the user's email after this (the placeholder held it until now).
 */
export async function absorb (trx: Kysely<Database>, source: ChangeSource, placeholderId: string, userId: string): Promise<string[]> {
  await sql`update ${table.organization_memberships} m set user_id = ${userId}
    where m.user_id = ${placeholderId}
      and not exists (select 1 from ${table.organization_memberships} mine where mine.user_id = ${userId} and mine.organization_id = m.organization_id)`.execute(trx)
  // what is left of the placeholder's: invitations to organizations where the user is a member already
  const arrived = (await trx.selectFrom('users').select('username').where('id', '=', userId).executeTakeFirstOrThrow()).username !== null
  const given = sql`select theirs.managed_by, omt.team_id, mine.id as mine from ${table.organization_membership_teams} omt
      join ${table.organization_memberships} theirs on theirs.id = omt.membership_id
      join ${table.organization_memberships} mine on mine.organization_id = theirs.organization_id and mine.user_id = ${userId}
    where theirs.user_id = ${placeholderId}`
  const added = arrived
    ? (await sql<{ label: string }>`with inserted as (insert into ${table.team_memberships} (team_id, user_id, managed_by)
          select g.team_id, ${userId}::text, g.managed_by from (${given}) g on conflict (team_id, user_id) do nothing returning team_id, user_id),
        events as (${membershipEventRows('inserted')}),
        audit as (${recordChange(trx, 'events', 'team', 'add_member', source)})
        ${labels('inserted')}`.execute(trx)).rows.map((row) => row.label)
    : (await sql`insert into ${table.organization_membership_teams} (membership_id, team_id)
        select g.mine, g.team_id from (${given}) g on conflict do nothing`.execute(trx), [])
  await trx.deleteFrom('users').where('id', '=', placeholderId).execute()
  return [...added, ...await activate(trx, source, userId)]
}

/** The team memberships of a CTE of (team_id, user_id) rows, as a seed's summary names them (`acme/devs: alice`). */
const labels = (rows: string) => sql`select o.name || '/' || t.name || ': ' || u.username as label
    from ${sql.table(rows)} i join ${table.teams} t on t.id = i.team_id join ${table.organizations} o on o.id = t.organization_id
      join ${table.users} u on u.id = i.user_id
    order by label`

/**
 * The user's invitations become active memberships, and the teams they were given become team
 * memberships — managed as the membership is (the API's, for an invitation made through it) —
 * each with its `add_member` event; nothing while the user has no username (the person has not
 * arrived). The memberships added, as a seed's summary names them (`acme/devs: alice`).
 */
export async function activate (trx: Kysely<Database>, source: ChangeSource, userId: string): Promise<string[]> {
  const result = await sql<{ label: string }>`with person as (select id from ${table.users} where id = ${userId} and username is not null),
    activated as (update ${table.organization_memberships} set status = 'active'
      where user_id in (select id from person) and status = 'invited' returning id),
    pending as (delete from ${table.organization_membership_teams} omt using ${table.organization_memberships} m
      where omt.membership_id = m.id and m.user_id in (select id from person) returning omt.team_id, m.managed_by),
    inserted as (insert into ${table.team_memberships} (team_id, user_id, managed_by)
      select team_id, ${userId}::text, managed_by from pending on conflict (team_id, user_id) do nothing returning team_id, user_id),
    events as (${membershipEventRows('inserted')}),
    audit as (${recordChange(trx, 'events', 'team', 'add_member', source)})
    ${labels('inserted')}`.execute(trx)
  return result.rows.map((row) => row.label)
}

/**
 * Writes a user's email (null: none), as its source declares it: a placeholder holding that email
 * is absorbed first (`absorb`). A user that had no username and now has one has arrived: its
 * invitations are active. The memberships added.
 */
export async function writeEmail (trx: Kysely<Database>, source: ChangeSource, userId: string, email: string | null): Promise<string[]> {
  const placeholder = email === null ? undefined : await placeholderOf(trx, email)
  const added = placeholder === undefined || placeholder === userId ? [] : await absorb(trx, source, placeholder, userId)
  await trx.updateTable('users').set({ email }).where('id', '=', userId).execute()
  return [...added, ...await activate(trx, source, userId)]
}
