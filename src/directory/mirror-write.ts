import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from '../db/database.js'
import { table } from '../db/tables.js'
import { projectEventRows, recordChange } from './events.js'
import { changedLabel, changedRows, createdRows, insertRows, KINDS, makeRoom, removedRows, updateRows, type Kind } from './mirror-kinds.js'
import { addMembers, undeclaredMembers, undeclaredUsers, writeUsers } from './mirror-people.js'
import { emptySummary, finish, Labels, type MirrorPlan } from './mirror-plan.js'
import { defaultProjectOf, MirrorError, recordset, slices } from './mirror-rows.js'
import type { MirrorSnapshot } from './mirror-snapshot.js'
import { Removals } from './removals.js'
import type { SeedSummary } from './seed-entries.js'
import type { ChangeSource } from './source.js'

/**
 * A mirror run's apply (DESIGN §13.3), inside its one transaction: the transaction says it is the
 * mirror (migration 0013's guard lets only it write a mirrored organization), locks the
 * organization (or makes it), then writes each kind of difference with one statement — over the
 * snapshot's rows as one jsonb parameter — each with its audit events in the same statement
 * (`auth.type` Mirror, the host; one request id for the run). Removals come first, so that the
 * names and rows they free are free, and cascade through the directory's removals
 * (src/directory/removals.ts); then users, teams, projects, workspaces (created, changed, moved),
 * the projects no longer read, memberships, and team access. The summary names what it wrote.
 */
export class MirrorWrite {
  private readonly summary: SeedSummary
  private readonly labels: Labels
  private readonly removals: Removals
  private readonly organizationId: string

  constructor (private readonly trx: Kysely<Database>, private readonly snapshot: MirrorSnapshot, private readonly plan: MirrorPlan, private readonly source: ChangeSource) {
    this.summary = emptySummary(snapshot, false)
    this.summary.warnings.push(...plan.summary.warnings)
    this.labels = new Labels(snapshot, plan.implied)
    this.removals = new Removals(trx, source, this.summary.removed)
    this.organizationId = plan.organization.id
  }

  async write (): Promise<SeedSummary> {
    await sql`select set_config('team_access.mirror', 'on', true)`.execute(this.trx)
    await this.organization()
    const { created, changed, removed } = this.summary
    // removals first: team access, memberships, then the teams, workspaces and users themselves
    await this.remove(KINDS.teamWorkspaces)
    await this.remove(KINDS.teamProjects)
    await this.removals.removeMemberships(undeclaredMembers(this.plan.rows.teamMembers, this.organizationId))
    await this.remove(KINDS.memberships)
    for (const teams of slices(await this.doomed(KINDS.teams))) await this.removals.removeTeams(teams)
    for (const workspaces of slices(await this.doomed(KINDS.workspaces))) await this.removals.removeWorkspaces(workspaces)
    const users = await undeclaredUsers(this.trx, this.plan.rows.users, this.organizationId)
    for (const slice of slices(users)) await this.removals.removeUsers(slice.map((user) => user.id))
    removed.users.push(...users.map((user) => user.label))

    const written = await writeUsers(this.trx, this.plan.rows.users)
    created.users.push(...written.created.map((id) => this.labels.user(id)))
    changed.users.push(...written.changed.map((row) => changedLabel(this.labels.user(row.id), row.changes)))
    await this.upsert(KINDS.teams)
    await this.upsert(KINDS.projects)
    await this.upsert(KINDS.workspaces)
    // a project no longer read is removed once its workspaces have moved out (or gone)
    await this.remove(KINDS.projects)
    await this.upsert(KINDS.memberships)
    await this.invitationTeams()
    for (const rows of slices(this.plan.rows.teamMembers.rows)) {
      const members = await addMembers(this.trx, this.source, { ...this.plan.rows.teamMembers, rows })
      created.memberships.push(...members.map((m) => this.labels.member(m.team_id, m.user_id)))
    }
    await this.upsert(KINDS.teamWorkspaces)
    await this.upsert(KINDS.teamProjects)
    await this.rename()
    finish(this.summary)
    return this.summary
  }

  /**
   * Locks the organization — still the mirror's — or, on a first run, makes it: its default project,
   * which the database makes with it, takes HCP Terraform's id, name and description, with a
   * `project` create event.
   */
  private async organization (): Promise<void> {
    const { id, exists } = this.plan.organization
    if (exists) {
      const row = await this.trx.selectFrom('organizations').select(['name', 'managed_by']).where('id', '=', id).forUpdate().executeTakeFirst()
      if (row?.managed_by !== 'mirror') throw new MirrorError([`organization ${this.snapshot.organization.name} went, or is no longer the mirror's, since the run read it: run it again`])
      return
    }
    await this.trx.insertInto('organizations').values({ id, name: this.snapshot.organization.name, managed_by: 'mirror' }).execute()
    this.summary.created.organizations.push(this.snapshot.organization.name)
    const project = this.snapshot.projects.find((p) => p.id === defaultProjectOf(this.snapshot))!
    await sql`with made as (update ${table.projects} p set id = ${project.id}, name = ${project.name}, description = ${project.description}
        where p.organization_id = ${id} and p.is_default returning p.*),
      events as (${projectEventRows('made')}),
      audit as (${recordChange(this.trx, 'events', 'project', 'create', this.source)})
      select id from made`.execute(this.trx)
    this.summary.created.projects.push(this.labels.of(project.id))
  }

  /** The statement's first CTE: the snapshot's rows of the kind (or some of them), as `d`. */
  private declared (kind: Kind, rows = this.plan.rows[kind.rows].rows): RawBuilder<unknown> {
    return sql`d as (select * from ${recordset({ ...this.plan.rows[kind.rows], rows })})`
  }

  /** The organization's rows of a kind the snapshot no longer declares (`lock`: locked), with their labels. */
  private async undeclared (kind: Kind, lock = false): Promise<Array<{ id: string, label: string }>> {
    return (await sql<{ id: string, label: string }>`with ${this.declared(kind)} select r.id, r.label from (${removedRows(kind, this.organizationId, lock)}) r`
      .execute(this.trx)).rows
  }

  /** Removes the organization's rows of a kind the snapshot no longer declares, each with its event. */
  private async remove (kind: Kind): Promise<void> {
    const undeclared = await this.undeclared(kind)
    for (const slice of slices(undeclared.map((row) => row.id))) {
      if (slice.length === 0) continue
      await sql`with removed as (delete from ${table[kind.table]} t where t.id = any(${slice}::text[]) returning t.*),
        ${kind.events(this.trx, this.source, 'removed', 'destroy', 'removed')}
        select count(*) from removed`.execute(this.trx)
    }
    this.summary.removed[kind.summary].push(...undeclared.map((row) => row.label))
  }

  /** The organization's teams or workspaces the snapshot no longer declares, locked, for the directory's removals (which name what they take); their ids. */
  private async doomed (kind: typeof KINDS.teams | typeof KINDS.workspaces): Promise<string[]> {
    const rows = await this.undeclared(kind, true)
    this.summary.removed[kind.summary].push(...rows.map((row) => row.label))
    return rows.map((row) => row.id)
  }

  /**
   * Changes the rows of a kind that differ from the snapshot's, then creates those it lacks, each
   * with its event: a statement each per slice of the snapshot's rows. What differs is read first,
   * then room is made (over all of them): a row moved out of the way meanwhile is changed once, as
   * what it was differs from what it becomes.
   */
  private async upsert (kind: Kind): Promise<void> {
    const declared = this.plan.rows[kind.rows].rows
    const differing: Array<{ id: string, changes: string[] }> = []
    for (const rows of slices(declared)) {
      differing.push(...(await sql<{ id: string, changes: string[] }>`with ${this.declared(kind, rows)}
        select c.id, c.changes from (${changedRows(kind, this.organizationId)}) c`.execute(this.trx)).rows)
    }
    const room = makeRoom(kind, this.organizationId)
    if (room !== undefined) await sql`with ${this.declared(kind)}, ${room}`.execute(this.trx)
    const byId = new Map(declared.map((row) => [row.id, row]))
    for (const slice of slices(differing)) {
      if (slice.length === 0) continue
      await sql`with ${this.declared(kind, slice.map((row) => byId.get(row.id)!))},
        before as (select t.* from ${table[kind.table]} t join d on d.id = t.id where t.organization_id = ${this.organizationId}),
        updated as (${updateRows(kind, this.organizationId)}),
        ${kind.events(this.trx, this.source, 'updated', 'update', 'before')}
        select count(*) from updated`.execute(this.trx)
    }
    this.summary.changed[kind.summary].push(...differing.map((row) => changedLabel(this.labels.of(row.id), row.changes)))
    for (const rows of slices(declared)) {
      const created = await sql<{ id: string }>`with ${this.declared(kind, rows)},
        created as (${createdRows(kind)}),
        inserted as (${insertRows(kind, this.organizationId, 'created')}),
        ${kind.events(this.trx, this.source, 'inserted', 'create', 'inserted')}
        select id from inserted`.execute(this.trx)
      this.summary.created[kind.summary].push(...created.rows.map((row) => this.labels.of(row.id)))
    }
  }

  /** The teams each invitation was given, as read (their change is the membership's, whose update event the membership wrote). */
  private async invitationTeams (): Promise<void> {
    await sql`with d as (select * from ${recordset(this.plan.rows.invitationTeams)}),
      gone as (delete from ${table.organization_membership_teams} omt using ${table.organization_memberships} m
        where omt.membership_id = m.id and m.organization_id = ${this.organizationId}
          and not exists (select 1 from d where d.membership_id = omt.membership_id and d.team_id = omt.team_id))
      insert into ${table.organization_membership_teams} (membership_id, team_id)
      select d.membership_id, d.team_id from d
      where not exists (select 1 from ${table.organization_membership_teams} x where x.membership_id = d.membership_id and x.team_id = d.team_id)`.execute(this.trx)
  }

  /** The organization's name, as read: last, so that what the run removed is named as it was. */
  private async rename (): Promise<void> {
    const { name } = this.snapshot.organization
    const renamed = await this.trx.updateTable('organizations').set({ name }).where('id', '=', this.organizationId).where('name', '<>', name).returning('id').execute()
    if (renamed.length > 0) this.summary.changed.organizations.push(changedLabel(name, ['name']))
  }
}
