import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Visibility } from '../../schemas/common.js'
import { FLAG_PREREQUISITES, missingPrerequisite, ORGANIZATION_ACCESS_COLUMN_NAMES, ORGANIZATION_ACCESS_COLUMNS, ORGANIZATION_ACCESS_FLAGS, type OrganizationAccess } from '../access/organization-access.js'
import { managesTeamsOf, setsOrganizationAccessOf } from '../access/predicates.js'
import { managesTeam } from '../access/escalation.js'
import type { Database } from '../db/database.js'
import { newId } from '../db/ids.js'
import { table } from '../db/tables.js'
import { violates } from './errors.js'
import { recordChange, teamEventRows } from './events.js'
import { createInOrganization } from './organizations.js'
import { Removals } from './removals.js'
import { grantsOf, managedBy, mayIf, type ChangeSource } from './source.js'

/**
 * Teams created, changed and removed (DESIGN §9.1, §9.3), whoever asks: one function per change,
 * one statement each (a removal: the team locked, then its removals), with its audit event. An API
 * caller's permission is decided in that statement (`managesTeamsOf`, `managesTeam`, and only an
 * owner sets flags); the seed and the host are trusted. The rules every source meets: the owners
 * team is never renamed, given flags or removed; a name is unique in its organization. The API
 * does not change or remove what the seed manages (§9.1).
 */

/**
 * Why a change changed nothing: `hidden` (no such team or organization, or the caller may not: 404),
 * `seed`, `owners`, `taken`, `prerequisite` (a flag without the flag it needs, named in `name`) (422).
 */
export type TeamRefusal = 'hidden' | 'seed' | 'owners' | 'taken' | 'prerequisite'

/** A team's attributes a change names; an absent one is not given (a change keeps its value, a create its default). */
export interface TeamValues {
  name?: string
  visibility?: Visibility
  /** Merged flag by flag; on create, absent flags are false. */
  organizationAccess: Partial<OrganizationAccess>
  /** Kept and answered (the Terraform provider reads them back); null clears it. */
  ssoTeamId?: string | null
  allowMemberTokenManagement?: boolean
}

/** What the statement answers of the team, over a CTE of team rows: the API's resource for its caller, the host's row. */
export type TeamAnswer = (team: string) => RawBuilder<unknown>

/** Every column of a team row, as the host's answer. */
export const TEAM_ROW: TeamAnswer = (team) => sql.join(['id', 'organization_id', 'name', 'visibility', 'is_owners', ...ORGANIZATION_ACCESS_COLUMN_NAMES,
  'sso_team_id', 'allow_member_token_management', 'managed_by', 'created_at'].map((column) => sql.ref(`${team}.${column}`)))

/** What keeps a team's name unique in its organization. */
const TEAM_NAME = 'teams_organization_name_key'

/** The team as the answer selects it, or why not (with the team's name, where there is a team). */
export type TeamResult<T> = { team: T } | { refusal: TeamRefusal, name?: string }

/**
 * Creates a team in the organization named (the API) or given by id (the host), with its `create`
 * event; absent flags false, managed by the source. Refused `hidden`: no such organization, or an
 * API caller who does not manage its teams or (not an owner) gives a flag; `taken`: the name is.
 */
export async function createTeam<T> (db: Kysely<Database>, source: ChangeSource, organization: { name: string } | { id: string },
  team: TeamValues & { name: string, id?: string, owners?: boolean }, answer: TeamAnswer): Promise<TeamResult<T>> {
  const lacking = missingPrerequisite(team.organizationAccess)
  if (lacking !== undefined) return { refusal: 'prerequisite', name: lacking.flag }
  const flags = ORGANIZATION_ACCESS_FLAGS.map((flag) => team.organizationAccess[flag] ?? false)
  const setsFlags = flags.some((value) => value)
  const columns = ORGANIZATION_ACCESS_FLAGS.map((flag) => sql.id(ORGANIZATION_ACCESS_COLUMNS[flag]))
  const created = await createInOrganization<T>(db, source, organization,
    sql`${managesTeamsOf('o.id')} and (${setsOrganizationAccessOf('o.id')} or not ${setsFlags}::boolean)`,
    sql`insert into ${table.teams} (id, organization_id, name, visibility, is_owners, sso_team_id, allow_member_token_management, managed_by, ${sql.join(columns)})
      select ${team.id ?? newId('team')}::text, org.id, ${team.name}::text, ${team.visibility ?? 'secret'}::text, ${team.owners ?? false}::boolean,
        ${team.ssoTeamId ?? null}::text, ${team.allowMemberTokenManagement ?? true}::boolean, ${managedBy(source)}::text,
        ${sql.join(flags.map((value) => sql`${value}::boolean`))}
      from org returning *`,
    teamEventRows('inserted'), 'team', answer, TEAM_NAME)
  return 'row' in created ? { team: created.row } : created
}

/**
 * Changes a team in one statement: the team is locked (for an API caller, as it may manage it),
 * `organization-access` merged (absent flags keep their value), and the row written only when a
 * value differs, with its `update` event — a change that changes nothing writes nothing, records
 * nothing, and answers the team as it is. Refused `hidden`: no such team, or an API caller who may
 * not manage it or (not an owner) changes a flag; `seed`: an API change of a team the seed
 * manages; `owners`: a rename of the owners team, or a change of its flags; `taken`: the name is.
 */
export async function changeTeam<T> (db: Kysely<Database>, source: ChangeSource, id: string, changes: TeamValues, answer: TeamAnswer): Promise<TeamResult<T>> {
  const given = ORGANIZATION_ACCESS_FLAGS.map((flag) => [ORGANIZATION_ACCESS_COLUMNS[flag], changes.organizationAccess[flag] ?? null] as const)
  const merged = given.map(([column, value]) => sql`coalesce(${value}::boolean, c.${sql.id(column)}) as ${sql.id(column)}`)
  const flagChanges = sql.join(given.map(([column]) => sql`m.${sql.id(column)} is distinct from c.${sql.id(column)}`), sql` or `)
  // a flag without its prerequisite, after the merge (FLAG_PREREQUISITES): its name
  const column = (flag: keyof typeof ORGANIZATION_ACCESS_COLUMNS) => sql`m.${sql.id(ORGANIZATION_ACCESS_COLUMNS[flag])}`
  const lacking = sql`case ${sql.join(FLAG_PREREQUISITES.map((p) => sql`when ${column(p.flag)} and not (${sql.join(p.requires.map(column), sql` or `)}) then ${p.flag}::text`), sql` `)} end`
  const assigned = ['name', 'visibility', 'sso_team_id', 'allow_member_token_management', ...given.map(([column]) => column)].map((column) => sql`${sql.id(column)} = m.${sql.id(column)}`)
  const query = sql<T & { refusal: TeamRefusal | null }>`with ${grantsOf(db, source)}
    current as (select t.*, ${mayIf(source, setsOrganizationAccessOf('t.organization_id'))} as sets_flags from ${table.teams} t
      where t.id = ${id} and ${mayIf(source, managesTeam('t'))} for update of t),
    merged as (select c.id, coalesce(${changes.name ?? null}::text, c.name) as name,
        coalesce(${changes.visibility ?? null}::text, c.visibility) as visibility,
        case when ${changes.ssoTeamId !== undefined}::boolean then ${changes.ssoTeamId ?? null}::text else c.sso_team_id end as sso_team_id,
        coalesce(${changes.allowMemberTokenManagement ?? null}::boolean, c.allow_member_token_management) as allow_member_token_management,
        ${sql.join(merged)}
      from current c),
    verdict as (select case
          when not c.sets_flags and (${flagChanges}) then 'hidden'
          when c.managed_by = 'seed' and ${source.by === 'api'}::boolean then 'seed'
          when c.is_owners and (m.name <> c.name or ${flagChanges}) then 'owners'
          when ${lacking} is not null then 'prerequisite'
        end as refusal, ${lacking} as lacking,
        (m.name <> c.name or m.visibility <> c.visibility or m.sso_team_id is distinct from c.sso_team_id
          or m.allow_member_token_management <> c.allow_member_token_management or ${flagChanges}) as differs
      from current c join merged m on m.id = c.id),
    updated as (update ${table.teams} t set ${sql.join(assigned)} from merged m, verdict v
      where t.id = m.id and v.refusal is null and v.differs returning t.*),
    events as (${teamEventRows('updated')}),
    audit as (${recordChange(db, 'events', 'team', 'update', source)})
    select ${answer('updated')}, null::text as refusal, null::text as lacking from updated
    union all
    select ${answer('current')}, v.refusal, v.lacking from current, verdict v where not exists (select 1 from updated)`
  try {
    const row = (await query.execute(db)).rows[0]
    if (row === undefined) return { refusal: 'hidden' }
    if (row.refusal === 'prerequisite') return { refusal: row.refusal, name: (row as { lacking?: string }).lacking ?? '' }
    if (row.refusal !== null) return { refusal: row.refusal, name: (row as { name?: string }).name ?? '' }
    const { refusal: _, lacking: __, ...team } = row as typeof row & { lacking?: unknown }
    return { team: team as T }
  } catch (err) {
    if (violates(err, TEAM_NAME)) return { refusal: 'taken' }
    throw err
  }
}

/**
 * Removes a team in one transaction: the team is locked (for an API caller, as it may manage it) —
 * so no team access or member is added to it meanwhile — then it goes with its team access,
 * memberships and tokens, each with its events (src/directory/removals.ts). Refused `hidden`: no
 * such team, or an API caller who may not; `seed`: an API removal of a team the seed manages;
 * `owners`: the owners team (an organization always keeps an owner). Done: the digests of the
 * team's tokens, revoked with it.
 */
export async function removeTeam (db: Kysely<Database>, source: ChangeSource, id: string): Promise<{ refusal?: TeamRefusal, name?: string, revoked?: string[] }> {
  const remove = async (trx: Kysely<Database>): Promise<{ refusal?: TeamRefusal, name?: string, revoked?: string[] }> => {
    const target = (await sql<{ refusal: TeamRefusal | null, name: string }>`with ${grantsOf(trx, source)}
      found as (select case when t.managed_by = 'seed' and ${source.by === 'api'}::boolean then 'seed' when t.is_owners then 'owners' end as refusal, t.name
        from ${table.teams} t where t.id = ${id} and ${mayIf(source, managesTeam('t'))} for update of t)
      select refusal, name from found`.execute(trx)).rows[0]
    if (target === undefined) return { refusal: 'hidden' }
    if (target.refusal !== null) return { refusal: target.refusal, name: target.name }
    return { revoked: await new Removals(trx, source).removeTeams([id]) }
  }
  return db.isTransaction ? await remove(db) : await db.transaction().execute(remove)
}
