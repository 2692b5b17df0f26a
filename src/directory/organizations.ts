import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely'
import { table } from '../db/tables.js'
import type { Database } from '../db/database.js'
import { newId } from '../db/ids.js'
import { activate, placeholderOf, takeOver, writeEmail } from './arrivals.js'
import { lockRow, renameRow } from './locks.js'
import { Removals } from './removals.js'
import { grantsOf, managedBy, mayIf, type ChangeSource } from './source.js'
import { insertedOrRefused } from './errors.js'
import { recordChange } from './events.js'

/**
 * Organizations and users created and removed (DESIGN §9.1, §9.6) — by the host or the seed, never
 * the API; renames are `renameRow` (src/directory/locks.ts), a user's `changeUser`. A removal locks
 * the row, then takes what hangs on it through the removals every source shares
 * (src/directory/removals.ts). Each runs in the caller's transaction. Workspaces are
 * src/directory/workspaces.ts's; teams, projects and workspaces are created in an organization
 * through `namedOrganization`.
 */

/**
 * The organization a create names — by name (the API) or by id (the host, the seed) — as the `org`
 * CTE of its statement, for a caller who `may` create there (its grants read in the statement),
 * kept from going until the statement is done.
 */
export const namedOrganization = (organization: { name: string } | { id: string }, may: RawBuilder<boolean>): RawBuilder<unknown> =>
  sql`org as (select o.id from ${table.organizations} o where ${'name' in organization ? sql`o.name = ${organization.name}` : sql`o.id = ${organization.id}`}
    and ${may} for key share of o)`

/**
 * A create in an organization, one statement whoever asks: the organization (`namedOrganization`,
 * for a caller who `may` create there), the row inserted from it (`insert`: an INSERT … SELECT …
 * FROM org RETURNING *), its `create` event (`events`: the event rows of the CTE `inserted`) and
 * the answer (`answer`, over `inserted`) — or why none (`insertedOrRefused`: `hidden`, or `taken`
 * by `nameConstraint`). Teams and projects are made so.
 */
export async function createInOrganization<T> (db: Kysely<Database>, source: ChangeSource, organization: { name: string } | { id: string },
  may: RawBuilder<boolean>, insert: RawBuilder<unknown>, events: RawBuilder<unknown>, resourceType: 'team' | 'project',
  answer: (rows: string) => RawBuilder<unknown>, nameConstraint: string): Promise<{ row: T } | { refusal: 'hidden' | 'taken' }> {
  const query = sql<T>`with ${grantsOf(db, source)}
    ${namedOrganization(organization, mayIf(source, may))},
    inserted as (${insert}),
    events as (${events}),
    audit as (${recordChange(db, 'events', resourceType, 'create', source)})
    select ${answer('inserted')} from inserted`
  return await insertedOrRefused(async () => (await query.execute(db)).rows[0], nameConstraint)
}

export async function createOrganization (trx: Kysely<Database>, source: ChangeSource, organization: { name: string, id?: string | undefined }): Promise<Selectable<Database['organizations']>> {
  return await trx.insertInto('organizations')
    .values({ id: organization.id ?? newId('org'), name: organization.name, managed_by: managedBy(source) })
    .returningAll().executeTakeFirstOrThrow()
}

/** Removes an organization and everything in it: its teams (with what they hold), workspaces and tokens. False: none. */
export async function removeOrganization (trx: Kysely<Database>, source: ChangeSource, id: string): Promise<boolean> {
  const row = await lockRow(trx, 'organizations', id)
  if (row === undefined) return false
  const teams = await trx.selectFrom('teams').select('id').where('organization_id', '=', row.id).orderBy('id').forUpdate().execute()
  const workspaces = await trx.selectFrom('workspaces').select('id').where('organization_id', '=', row.id).orderBy('id').forUpdate().execute()
  const removals = new Removals(trx, source)
  await removals.removeTeams(teams.map((t) => t.id))
  await removals.removeWorkspaces(workspaces.map((w) => w.id))
  await removals.removeTokens(sql<boolean>`tk.organization_id = ${row.id}`)
  await trx.deleteFrom('organizations').where('id', '=', row.id).execute()
  return true
}

/**
 * Creates a user, managed by the source. An email an invitation's placeholder holds is the person
 * arriving (src/directory/arrivals.ts): without an explicit id the placeholder's row becomes the
 * user (its id kept); with one, the new row absorbs it.
 */
export async function createUser (trx: Kysely<Database>, source: ChangeSource, user: { username: string, email?: string | undefined, id?: string | undefined }): Promise<Selectable<Database['users']>> {
  const placeholder = user.email === undefined ? undefined : await placeholderOf(trx, user.email)
  if (placeholder !== undefined && user.id === undefined) {
    await takeOver(trx, source, placeholder, { username: user.username, email: user.email!, managedBy: managedBy(source) })
    return await trx.selectFrom('users').selectAll().where('id', '=', placeholder).executeTakeFirstOrThrow()
  }
  const row = await trx.insertInto('users')
    .values({ id: user.id ?? newId('user'), username: user.username, email: placeholder === undefined ? user.email ?? null : null, managed_by: managedBy(source) })
    .returningAll().executeTakeFirstOrThrow()
  if (placeholder === undefined) return row
  await writeEmail(trx, source, row.id, user.email!)
  return await trx.selectFrom('users').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow()
}

/**
 * Renames a user, or changes its email (null: none), or both: written only where a value differs.
 * A username given to an invitation's placeholder, or an email one holds, is the person arriving.
 * The row after; undefined: none.
 */
export async function changeUser (trx: Kysely<Database>, source: ChangeSource, id: string, change: { username?: string | undefined, email?: string | null | undefined }): Promise<Selectable<Database['users']> | undefined> {
  const before = await lockRow(trx, 'users', id)
  if (before === undefined) return undefined
  const renamed = await renameRow(trx, 'users', id, 'username', change.username)
  if (change.email !== undefined && change.email !== before.email) await writeEmail(trx, source, id, change.email)
  else if (before.username === null && renamed?.username != null) await activate(trx, source, id)
  return await trx.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
}

/**
 * Removes a user with its memberships and tokens — refused while it is the last member of an
 * owners team (an organization always keeps an owner): the organization's name is answered.
 */
export async function removeUser (trx: Kysely<Database>, source: ChangeSource, id: string): Promise<{ removed: boolean, lastOwnerOf?: { organization: string, username: string } }> {
  const row = await lockRow(trx, 'users', id)
  if (row === undefined) return { removed: false }
  const owners = await trx.selectFrom('team_memberships as m').innerJoin('teams as t', 't.id', 'm.team_id')
    .innerJoin('organizations as o', 'o.id', 't.organization_id')
    .select(['t.id', 'o.name as organization']).where('m.user_id', '=', row.id).where('t.is_owners', '=', true).orderBy('t.id').execute()
  for (const team of owners) {
    // its members locked, as a removal of members locks them (src/directory/memberships.ts): concurrent
    // removals take turns, and each counts the members the other left
    const members = await trx.selectFrom('team_memberships').select('user_id').where('team_id', '=', team.id).orderBy('user_id').forUpdate().execute()
    if (members.length <= 1) return { removed: false, lastOwnerOf: { organization: team.organization, username: row.username ?? row.email ?? row.id } }
  }
  await new Removals(trx, source).removeUsers([row.id])
  return { removed: true }
}
