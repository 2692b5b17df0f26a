import { sql, type Expression, type ExpressionBuilder, type SqlBool, type Transaction } from 'kysely'
import type { Database } from '../db/database.js'
import { table } from '../db/tables.js'
import { projectEventRows, recordChange, teamEventRows, workspaceEventRows } from './events.js'
import type { SeedSummary } from './seed-entries.js'
import type { ChangeSource } from './source.js'

/*
 * Names a seed declares (DESIGN §6, §9.1): which rows an entry names, and the room a declared
 * name needs when another row holds it.
 */

/** The kinds of row whose names a seed declares and an API caller can take: by creating or renaming a team, a project or a workspace. */
type Kind = 'teams' | 'projects' | 'workspaces'

/** How long a name may be (schemas/teams.ts, DESIGN §11.1, §14.1), so a renamed row keeps a name its source may write. */
const LONGEST: Record<Kind, number> = { teams: 100, projects: 40, workspaces: 90 }

const EVENTS = {
  teams: ['team', teamEventRows('updated')],
  projects: ['project', projectEventRows('updated')],
  workspaces: ['workspace', workspaceEventRows('updated')]
} as const

/**
 * A name the seed declares with an id, held by another row of the organization (DESIGN §6: a
 * restart is never blocked by what the API did). The seed is the truth for what it manages, so the
 * declared name is the seed's — the names its readers and the Terraform configuration beside it
 * expect — and the other row is renamed out of the way (`payments-renamed`, then `-renamed-2`, …,
 * shortened to fit its kind's rules), with its `update` event (System, `seed`); the apply lists it
 * as changed and, for a row the API or the host made, warns naming it. Its id, its rows and its
 * source stay. A project's name is unique case-insensitively, so `PAYMENTS` holds `payments`.
 * The owners team is never renamed (nothing but its organization can hold it): the write that
 * follows fails on it, naming it.
 */
export async function makeRoom (trx: Transaction<Database>, source: ChangeSource, summary: SeedSummary, kind: Kind,
  organization: { id: string, name: string }, declared: { id: string, name: string }, declaredNames: string[]): Promise<void> {
  const holder = await trx.selectFrom(kind).select(['id', 'name', 'managed_by', sql<boolean>`${kind === 'teams' ? sql.ref('is_owners') : sql`false`}`.as('owners')])
    .where('organization_id', '=', organization.id).where('id', '<>', declared.id)
    .where(kind === 'projects' ? sql<boolean>`lower(name) = lower(${declared.name})` : sql<boolean>`name = ${declared.name}`)
    .forUpdate().executeTakeFirst()
  if (holder === undefined || holder.owners) return
  const taken = new Set([...declaredNames, ...(await trx.selectFrom(kind).select('name').where('organization_id', '=', organization.id).execute()).map((row) => row.name)]
    .map((name) => name.toLowerCase()))
  let name = ''
  for (let n = 1; name === '' || taken.has(name.toLowerCase()); n++) {
    const suffix = n === 1 ? '-renamed' : `-renamed-${n}`
    name = `${holder.name.slice(0, LONGEST[kind] - suffix.length).trimEnd()}${suffix}`
  }
  const [resourceType, events] = EVENTS[kind]
  await sql`with updated as (update ${table[kind]} r set name = ${name} where r.id = ${holder.id} returning r.*),
    events as (${events}),
    audit as (${recordChange(trx, 'events', resourceType, 'update', source)})
    select count(*) from updated`.execute(trx)
  summary.changed[kind].push(`${organization.name}/${holder.name} (renamed "${name}": the seed declares the name)`)
  if (holder.managed_by !== 'seed') {
    const what = EVENTS[kind][0]
    summary.warnings.push(`${what} ${organization.name}/${holder.name} (${holder.id}), made ${madeBy(holder)}, held the name the seed declares for ${declared.id}: renamed "${name}"`)
  }
}

/** An entry of the document: by id, or by name where it gives none. */
export type Named = { id?: string | undefined, name: string }

/** Rows no entry names: entries with an id name their row by id, entries without one by name. */
export function notDeclared (eb: ExpressionBuilder<any, any>, nameColumn: string, declared: Named[], idColumn = 'id'): Expression<SqlBool> {
  const ids = declared.flatMap((d) => (d.id === undefined ? [] : [d.id]))
  const names = declared.flatMap((d) => (d.id === undefined ? [d.name] : []))
  return eb.and([
    ...(ids.length > 0 ? [eb(eb.ref(idColumn), 'not in', ids)] : []),
    ...(names.length > 0 ? [eb(eb.ref(nameColumn), 'not in', names)] : [])
  ])
}

/** Who made a row the seed did not: `through the API` or `by the host`. */
export const madeBy = (row: { managed_by: string }): string => row.managed_by === 'api' ? 'through the API' : 'by the host'
