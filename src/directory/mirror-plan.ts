import { sql, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { newId } from '../db/ids.js'
import { table } from '../db/tables.js'
import { changedLabel, changedRows, createdRows, heldElsewhere, KINDS, removedRows, type Kind, type KindName } from './mirror-kinds.js'
import { MANAGER, planMembers, planUsers } from './mirror-people.js'
import { checkSnapshot, declaredRows, defaultProjectOf, MirrorError, recordset, type Declared, type DeclaredRows } from './mirror-rows.js'
import type { MirrorSnapshot } from './mirror-snapshot.js'
import { noChanges, SEED_KINDS, type SeedSummary } from './seed-entries.js'

/**
 * A mirror run's plan (DESIGN §13.3), from plain reads — no lock, no write: the organization it
 * mirrors into (found, or to be made), what stands in the way (a conflict fails the run whole,
 * naming it), and every row it would create, change and remove, in the seed's summary form (§9.1).
 * A run whose plan finds nothing writes nothing; a dry run is its plan. Rows are named as the seed
 * names them: created and changed ones by the snapshot's names, removed ones by their own.
 */

export interface MirrorPlan {
  /** The organization's id here, and whether it exists yet (a first run makes it). */
  organization: { id: string, exists: boolean }
  rows: DeclaredRows
  /** Organization memberships the snapshot lacks for team members, taken as active (with the id held here, or a new one). */
  implied: Array<{ id: string, userId: string }>
  summary: SeedSummary
  /** Whether the directory differs from the snapshot at all. */
  differs: boolean
}

/** Names the snapshot's rows as the summary does. */
export class Labels {
  private readonly users: Map<string, string>
  private readonly names: Map<string, string>
  private readonly rows: Map<string, (organization: string) => string>

  constructor (snapshot: MirrorSnapshot, implied: Array<{ id: string, userId: string }>) {
    this.users = new Map(snapshot.users.map((u) => [u.id, u.username ?? u.email ?? u.id]))
    this.names = new Map([...snapshot.teams, ...snapshot.projects, ...snapshot.workspaces].map((row) => [row.id, row.name]))
    const on = (team: string, what: string) => (organization: string) => `${this.names.get(team)!} on ${organization}/${this.names.get(what)!}`
    this.rows = new Map([
      ...[...snapshot.memberships, ...implied].map((m) => [m.id, (organization: string) => `${organization}: ${this.user(m.userId)}`] as const),
      ...snapshot.teamWorkspaces.map((r) => [r.id, on(r.teamId, r.workspaceId)] as const),
      ...snapshot.teamProjects.map((r) => [r.id, on(r.teamId, r.projectId)] as const)
    ])
    this.organization = snapshot.organization.name
  }

  readonly organization: string

  user (id: string): string {
    return this.users.get(id) ?? id
  }

  /** A row of a kind, by id: `acme/red`, `acme: alice`, `red on acme/prod`. */
  of (id: string): string {
    return this.rows.get(id)?.(this.organization) ?? `${this.organization}/${this.names.get(id) ?? id}`
  }

  member (teamId: string, userId: string): string {
    return `${this.organization}/${this.names.get(teamId) ?? teamId}: ${this.user(userId)}`
  }
}

/** A summary with nothing in it yet, counting the snapshot's rows. */
export const emptySummary = (snapshot: MirrorSnapshot, dryRun: boolean): SeedSummary => ({
  users: snapshot.users.length,
  organizations: 1,
  teams: snapshot.teams.length,
  workspaces: snapshot.workspaces.length,
  teamAccess: snapshot.teamWorkspaces.length + snapshot.teamProjects.length,
  teamAccessAlreadyApplied: 0,
  tokens: 0,
  dryRun,
  created: noChanges(),
  changed: noChanges(),
  removed: noChanges(),
  warnings: []
})

/** Every list of the summary in order, so that a plan and its apply read alike; whether any row differs. */
export function finish (summary: SeedSummary): boolean {
  let any = false
  for (const changes of [summary.created, summary.changed, summary.removed]) {
    for (const kind of SEED_KINDS) {
      changes[kind].sort()
      any ||= changes[kind].length > 0
    }
  }
  return any
}

/** The differences of one kind of row, and ids the snapshot gives that another organization's rows hold. */
export async function planKind (db: Kysely<Database>, kind: Kind, declared: Declared, organizationId: string) {
  const { rows } = await sql<{ op: 'created' | 'changed' | 'removed' | 'conflict', id: string | null, changes: string[] | null, label: string | null }>`
    with d as (select * from ${recordset(declared)}),
      created as (${createdRows(kind)}),
      changed as (${changedRows(kind, organizationId)}),
      removed as (${removedRows(kind, organizationId)})
    select 'created' as op, id, null::text[] as changes, null::text as label from created
    union all select 'changed', id, changes, null from changed
    union all select 'removed', id, null, label from removed
    union all select 'conflict', null, null, problem from (${heldElsewhere(kind, organizationId)}) x`.execute(db)
  const of = (op: string) => rows.filter((row) => row.op === op)
  return {
    created: of('created').map((row) => row.id!),
    changed: of('changed').map((row) => ({ id: row.id!, changes: row.changes ?? [] })),
    removed: of('removed').map((row) => ({ id: row.id!, label: row.label! })),
    conflicts: of('conflict').map((row) => row.label!)
  }
}

/**
 * The organization the snapshot is mirrored into: the one of its external id, else of its name;
 * one another source manages is not the mirror's, and the run fails naming it. None: a first run,
 * which makes it with the external id (or an id of its own).
 */
async function organizationOf (db: Kysely<Database>, snapshot: MirrorSnapshot): Promise<MirrorPlan['organization'] & { name?: string }> {
  const { name, externalId } = snapshot.organization
  const byId = externalId === undefined ? undefined : await db.selectFrom('organizations').select(['id', 'name', 'managed_by']).where('id', '=', externalId).executeTakeFirst()
  const byName = await db.selectFrom('organizations').select(['id', 'name', 'managed_by']).where('name', '=', name).executeTakeFirst()
  const found = byId ?? byName
  if (found !== undefined && found.managed_by !== 'mirror') {
    throw new MirrorError([`organization ${found.name} is managed by ${MANAGER[found.managed_by]!} here, not by a mirror: the mirror writes only an organization it made (remove it here, or mirror into another database)`])
  }
  if (byId !== undefined && byName !== undefined && byName.id !== byId.id) {
    throw new MirrorError([`organization ${name} (${externalId!}) is ${byId.name} here, and another organization here (${byName.id}) holds the name ${name}`])
  }
  return found === undefined ? { id: externalId ?? newId('org'), exists: false } : { id: found.id, exists: true, name: found.name }
}

/**
 * Every team member holds an organization membership: one the snapshot gives none (HCP Terraform
 * always lists one) is taken as active, with the id it holds here, or a new one.
 */
async function impliedMemberships (db: Kysely<Database>, snapshot: MirrorSnapshot, organization: MirrorPlan['organization']): Promise<Array<{ id: string, userId: string }>> {
  const listed = new Set(snapshot.memberships.map((m) => m.userId))
  const lacking = [...new Set(snapshot.teams.flatMap((t) => t.userIds))].filter((id) => !listed.has(id)).sort()
  if (lacking.length === 0) return []
  const held = new Map(organization.exists
    ? (await db.selectFrom('organization_memberships').select(['id', 'user_id']).where('organization_id', '=', organization.id).where('user_id', 'in', lacking).execute()).map((m) => [m.user_id, m.id])
    : [])
  return lacking.map((userId) => ({ id: held.get(userId) ?? newId('ou'), userId }))
}

/** The tokens a removal of these teams and users takes, named as the directory's removals name them. */
async function tokensOf (db: Kysely<Database>, teams: string[], users: string[]): Promise<string[]> {
  if (teams.length === 0 && users.length === 0) return []
  const { rows } = await sql<{ label: string }>`select case tk.kind when 'user' then 'user ' || u.username else 'team ' || o.name || '/' || t.name end as label
    from ${table.tokens} tk left join ${table.teams} t on t.id = tk.team_id left join ${table.organizations} o on o.id = t.organization_id
      left join ${table.users} u on u.id = tk.user_id
    where tk.team_id = any(${teams}::text[]) or tk.user_id = any(${users}::text[])`.execute(db)
  return rows.map((row) => row.label)
}

/** The plan of mirroring `snapshot`: plain reads. Throws MirrorError for a snapshot that breaks a rule or a conflict, naming every one. */
export async function planMirror (db: Kysely<Database>, snapshot: MirrorSnapshot, dryRun: boolean): Promise<MirrorPlan> {
  checkSnapshot(snapshot)
  const found = await organizationOf(db, snapshot)
  const organization = { id: found.id, exists: found.exists }
  const implied = await impliedMemberships(db, snapshot, organization)
  const rows = declaredRows(snapshot, defaultProjectOf(snapshot)!, implied)
  const summary = emptySummary(snapshot, dryRun)
  const labels = new Labels(snapshot, implied)
  summary.warnings.push(...implied.map((m) => `user ${labels.user(m.userId)} is in a team of ${snapshot.organization.name} but no organization membership of theirs was read: kept as an active member`),
    ...snapshot.notes)
  if (!organization.exists) summary.created.organizations.push(snapshot.organization.name)
  else if (found.name !== snapshot.organization.name) summary.changed.organizations.push(changedLabel(snapshot.organization.name, ['name']))
  // an organization yet to be made holds no rows: every one of the snapshot's is new (or another organization's: a conflict)
  const here = organization.exists ? organization.id : ''
  const conflicts: string[] = []
  const removedTeams: string[] = []
  for (const [name, kind] of Object.entries(KINDS) as Array<[KindName, Kind]>) {
    const plan = await planKind(db, kind, rows[kind.rows], here)
    summary.created[kind.summary].push(...plan.created.map((id) => labels.of(id)))
    summary.changed[kind.summary].push(...plan.changed.map((row) => changedLabel(labels.of(row.id), row.changes)))
    summary.removed[kind.summary].push(...plan.removed.map((row) => row.label))
    if (name === 'teams') removedTeams.push(...plan.removed.map((row) => row.id))
    conflicts.push(...plan.conflicts)
  }
  const users = await planUsers(db, rows.users, here)
  conflicts.push(...users.conflicts)
  if (conflicts.length > 0) throw new MirrorError(conflicts)
  summary.created.users.push(...users.created.map((id) => labels.user(id)))
  summary.changed.users.push(...users.changed.map((row) => changedLabel(labels.user(row.id), row.changes)))
  summary.removed.users.push(...users.removed.map((row) => row.label))
  const members = await planMembers(db, rows.teamMembers, here, users.removed.map((row) => row.id))
  summary.created.memberships.push(...members.created.map((m) => labels.member(m.team_id, m.user_id)))
  summary.removed.memberships.push(...members.removed)
  summary.removed.tokens.push(...await tokensOf(db, removedTeams, users.removed.map((row) => row.id)))
  return { organization, rows, implied, summary, differs: finish(summary) }
}
