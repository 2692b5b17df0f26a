import { sql, type Kysely } from 'kysely'
import { managesMembershipOf } from '../access/predicates.js'
import { managesMembersOf } from '../access/escalation.js'
import type { Database, ManagedBy } from '../db/database.js'
import { newId } from '../db/ids.js'
import { table } from '../db/tables.js'
import { organizationMembershipEventRows, recordChange } from './events.js'
import { addMembers, removeMembers, type MembersRefusal } from './memberships.js'
import { namedOrganization } from './organizations.js'
import { grantsOf, managedBy, mayIf, type ChangeSource } from './source.js'

/**
 * Organization memberships (DESIGN §14.2, §14.3), whoever asks: a person invited by email, a
 * membership ended, a team's members by membership. Each change is one transaction with its audit
 * events: `organization-membership` `create`/`destroy` (meta: the email), and the team's
 * `add_member`/`remove_member` of src/directory/memberships.ts, whose `addMembers` and
 * `removeMembers` make and end every team membership here — so the rules of §9.4 (who may change
 * a team's members, the owners team keeps one, the seed's memberships stay the seed's) are the
 * same whichever way a member comes or goes. An invited person holds nothing: the teams an
 * invitation is given wait in organization_membership_teams until the person arrives
 * (src/directory/arrivals.ts).
 */

/**
 * Why a change changed nothing: `hidden` (no such organization, membership or team, or the caller
 * may not: 404); `taken` (the email already has a membership there); `teams` (teams of the
 * organization whose members the caller may not change, or none such: named); `unknown`
 * (membership ids that name no membership of the team's organization); `managed` (a membership, or
 * one of the person's team memberships, another source manages: the source, the person and the
 * teams); `last-owner` (the owners team's last member).
 */
export type MembershipRefusal =
  | { reason: 'hidden' }
  | { reason: 'taken' }
  | { reason: 'teams', teams: string[] }
  | { reason: 'unknown', memberships: string[] }
  | { reason: 'managed', by: ManagedBy, userId: string, person: string, teams: string[] }
  | { reason: 'last-owner', team: string }

/** A refusal thrown inside a transaction, to roll back what it already wrote. */
class Refused extends Error {
  constructor (readonly refusal: MembershipRefusal) { super(refusal.reason) }
}

/** Runs `work` in a transaction (or the caller's); a refusal rolls it back and is answered. */
async function refusable<T> (db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T | { refusal: MembershipRefusal }> {
  try {
    return db.isTransaction ? await work(db) : await db.transaction().execute(work)
  } catch (err) {
    if (err instanceof Refused) return { refusal: err.refusal }
    throw err
  }
}

/** A team-membership refusal, as this module's. */
const fromMembers = (refusal: MembersRefusal): MembershipRefusal => refusal.reason === 'last-owner'
  ? { reason: 'last-owner', team: refusal.team }
  : { reason: 'hidden' }

/**
 * Invites a person by email into an organization (by name: the API; by id: the host), with the
 * teams given (each one whose members the source may change). A user with that email makes the
 * membership `active` — its teams team memberships at once — unless it is still an invitation's
 * placeholder; no user: a placeholder is made (managed by the source), and the membership is
 * `invited`, its teams kept for the person's arrival. The new membership's id.
 */
export async function createMembership (db: Kysely<Database>, source: ChangeSource, organization: { name: string } | { id: string },
  email: string, teamIds: string[]): Promise<{ id: string } | { refusal: MembershipRefusal }> {
  return await refusable(db, async (trx) => {
    const org = (await sql<{ id: string }>`with ${grantsOf(trx, source)}
      ${namedOrganization(organization, mayIf(source, managesMembershipOf('o.id')))} select id from org`.execute(trx)).rows[0]
    if (org === undefined) throw new Refused({ reason: 'hidden' })
    const teams = [...new Set(teamIds)]
    if (teams.length > 0) {
      const found = (await sql<{ id: string }>`with ${grantsOf(trx, source)}
        found as (select t.id from ${table.teams} t where t.id = any(${teams}::text[]) and t.organization_id = ${org.id}
          and ${mayIf(source, managesMembersOf('t'))} for key share of t)
        select id from found`.execute(trx)).rows.map((row) => row.id)
      const missing = teams.filter((id) => !found.includes(id))
      if (missing.length > 0) throw new Refused({ reason: 'teams', teams: missing })
    }
    const user = await personOf(trx, source, email)
    const status = user.username === null ? 'invited' : 'active'
    const id = newId('ou')
    const inserted = await sql`with inserted as (insert into ${table.organization_memberships} (id, organization_id, user_id, status, managed_by)
        values (${id}, ${org.id}, ${user.id}, ${status}, ${managedBy(source)}) on conflict (organization_id, user_id) do nothing
        returning id, organization_id, user_id),
      events as (${organizationMembershipEventRows('inserted')}),
      audit as (${recordChange(trx, 'events', 'organization-membership', 'create', source)})
      select id from inserted`.execute(trx)
    if (inserted.rows.length === 0) throw new Refused({ reason: 'taken' })
    if (status === 'invited') {
      if (teams.length > 0) await trx.insertInto('organization_membership_teams').values(teams.map((team) => ({ membership_id: id, team_id: team }))).execute()
    } else {
      for (const team of teams) {
        const added = await addMembers(trx, source, team, { ids: [user.id] })
        if ('reason' in added) throw new Refused(added.reason === 'hidden' ? { reason: 'teams', teams: [team] } : fromMembers(added))
      }
    }
    return { id }
  })
}

/**
 * The user of an email (case-insensitively), locked against a concurrent arrival; none: the
 * placeholder an invitation makes, with the email as given and no username, managed by the
 * source (an invitation made meanwhile for the same email is found instead).
 */
async function personOf (trx: Kysely<Database>, source: ChangeSource, email: string): Promise<{ id: string, username: string | null }> {
  const find = async () => await trx.selectFrom('users').select(['id', 'username'])
    .where(sql<boolean>`lower(email) = lower(${email})`).forShare().executeTakeFirst()
  const found = await find()
  if (found !== undefined) return found
  await sql`insert into ${table.users} (id, email, managed_by) values (${newId('user')}, ${email}, ${managedBy(source)})
    on conflict ((lower(email))) do nothing`.execute(trx)
  return (await find())!
}

/**
 * Ends a membership: the person leaves the organization. In one transaction — the membership
 * locked (for an API caller, one of an organization whose memberships it manages) — every team
 * membership of the person there goes, each through `removeMembers` (a team whose members the
 * caller may not change: `hidden`; the owners team's last member: `last-owner`), then the
 * membership, with its `destroy` event. Refused `managed` for an API caller when the membership,
 * or one of the person's team memberships there, is another source's (the seed's, the host's).
 * An invitation's placeholder goes with its last membership.
 */
export async function removeMembership (db: Kysely<Database>, source: ChangeSource, id: string): Promise<{ done: true } | { refusal: MembershipRefusal }> {
  return await refusable(db, async (trx) => {
    const membership = (await sql<{ organization_id: string, user_id: string, managed_by: ManagedBy, username: string | null, email: string | null }>`with ${grantsOf(trx, source)}
      found as (select m.organization_id, m.user_id, m.managed_by, u.username, u.email
        from ${table.organization_memberships} m join ${table.users} u on u.id = m.user_id
        where m.id = ${id} and ${mayIf(source, managesMembershipOf('m.organization_id'))} for update of m)
      select * from found`.execute(trx)).rows[0]
    if (membership === undefined) throw new Refused({ reason: 'hidden' })
    const teams = await trx.selectFrom('team_memberships as tm').innerJoin('teams as t', 't.id', 'tm.team_id')
      .select(['tm.team_id', 't.name', 'tm.managed_by'])
      .where('tm.user_id', '=', membership.user_id).where('t.organization_id', '=', membership.organization_id)
      .orderBy('t.name').forUpdate('tm').execute()
    if (source.by === 'api') {
      const others = teams.filter((team) => team.managed_by !== 'api')
      const by = membership.managed_by !== 'api' ? membership.managed_by : others[0]?.managed_by
      if (by !== undefined) {
        const person = membership.username ?? membership.email ?? membership.user_id
        throw new Refused({ reason: 'managed', by, userId: membership.user_id, person, teams: others.filter((team) => team.managed_by === by).map((team) => team.name) })
      }
    }
    for (const team of teams) {
      const refusal = await removeMembers(trx, source, team.team_id, { ids: [membership.user_id] })
      if (refusal !== undefined) throw new Refused(fromMembers(refusal))
    }
    await sql`with gone as (delete from ${table.organization_memberships} where id = ${id} returning id, organization_id, user_id),
      events as (${organizationMembershipEventRows('gone')}),
      audit as (${recordChange(trx, 'events', 'organization-membership', 'destroy', source)})
      select count(*) from gone`.execute(trx)
    // the placeholder of an invitation goes with its last membership: nobody else refers to it
    await sql`delete from ${table.users} u where u.id = ${membership.user_id} and u.username is null
      and not exists (select 1 from ${table.organization_memberships} m where m.user_id = u.id)`.execute(trx)
    return { done: true as const }
  })
}

/**
 * Adds memberships of the team's organization to the team (DESIGN §14.3), in one transaction: an
 * active one's person becomes a member (`addMembers`, with its rules and events); an invited one
 * keeps the team for the person's arrival. Refused `hidden` (no such team, or an API caller who may
 * not change its members), `unknown` (ids of no membership of its organization).
 */
export async function addTeamMemberships (db: Kysely<Database>, source: ChangeSource, teamId: string, ids: string[]): Promise<{ done: true } | { refusal: MembershipRefusal }> {
  return await refusable(db, async (trx) => {
    const { active, invited } = await membershipsForTeam(trx, source, teamId, ids)
    if (active.length > 0) {
      const added = await addMembers(trx, source, teamId, { ids: active })
      if ('reason' in added) throw new Refused(fromMembers(added))
    }
    if (invited.length > 0) {
      await trx.insertInto('organization_membership_teams').values(invited.map((id) => ({ membership_id: id, team_id: teamId })))
        .onConflict((oc) => oc.doNothing()).execute()
    }
    return { done: true as const }
  })
}

/**
 * Removes memberships from the team (DESIGN §14.3), in one transaction: an active one's person
 * leaves the team (`removeMembers`: the seed's memberships stay, the owners team keeps one), an
 * invited one no longer brings the team. Removing someone's last team does not end their
 * membership of the organization. Refused as `addTeamMemberships`, and `managed`, `last-owner`.
 */
export async function removeTeamMemberships (db: Kysely<Database>, source: ChangeSource, teamId: string, ids: string[]): Promise<{ done: true } | { refusal: MembershipRefusal }> {
  return await refusable(db, async (trx) => {
    const { active, invited } = await membershipsForTeam(trx, source, teamId, ids)
    if (active.length > 0) {
      const refusal = await removeMembers(trx, source, teamId, { ids: active })
      if (refusal?.reason === 'seed') {
        throw new Refused({ reason: 'managed', by: 'seed', userId: active[0]!, person: refusal.users.join(', '), teams: [] })
      }
      if (refusal !== undefined) throw new Refused(fromMembers(refusal))
    }
    if (invited.length > 0) {
      await trx.deleteFrom('organization_membership_teams').where('team_id', '=', teamId).where('membership_id', 'in', invited).execute()
    }
    return { done: true as const }
  })
}

/**
 * The memberships named, of the team's organization, locked (an arrival waits, or is seen): the
 * users of the active ones, the ids of the invited ones. The team must be there and, for an API
 * caller, one whose members it may change.
 */
async function membershipsForTeam (trx: Kysely<Database>, source: ChangeSource, teamId: string, ids: string[]): Promise<{ active: string[], invited: string[] }> {
  const wanted = [...new Set(ids)]
  const team = (await sql<{ organization_id: string }>`with ${grantsOf(trx, source)}
    target as (select t.organization_id from ${table.teams} t where t.id = ${teamId} and ${mayIf(source, managesMembersOf('t'))} for key share of t)
    select organization_id from target`.execute(trx)).rows[0]
  if (team === undefined) throw new Refused({ reason: 'hidden' })
  const found = await trx.selectFrom('organization_memberships').select(['id', 'user_id', 'status'])
    .where('organization_id', '=', team.organization_id).where('id', 'in', wanted).orderBy('id').forShare().execute()
  const unknown = wanted.filter((id) => !found.some((row) => row.id === id)).sort()
  if (unknown.length > 0) throw new Refused({ reason: 'unknown', memberships: unknown })
  return {
    active: found.filter((row) => row.status === 'active').map((row) => row.user_id),
    invited: found.filter((row) => row.status === 'invited').map((row) => row.id)
  }
}
