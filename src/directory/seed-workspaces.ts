import type { Transaction } from 'kysely'
import type { SeedDocument } from '../../schemas/seed.js'
import type { Database } from '../db/database.js'
import { newId } from '../db/ids.js'
import { madeBy, makeRoom } from './seed-names.js'
import type { Removals } from './removals.js'
import { entry, SeedError, type SeedSummary } from './seed-entries.js'
import type { ChangeSource } from './source.js'

type Organization = NonNullable<SeedDocument['organizations']>[number]

/**
 * A seed's workspaces (DESIGN §6, §9.1, §14.1): each declared workspace created, or adopted when a
 * row already names it — by id, or by name where the entry gives none. Since the API creates and
 * renames workspaces, a name the seed declares may be held by a workspace an API caller made:
 * - declared **with an id**, the name is the seed's: the other workspace is renamed out of the way
 *   (`makeRoom`), as a team or a project would be;
 * - declared **by name**, the workspace is adopted whole: its team-access rows of teams the
 *   document's `team-access` entries do not name on it go, each with its `remove_team` event,
 *   and the apply warns, naming the workspace and what went. Whoever made it, or gave their team
 *   a row on it, reaches none of the seed's workspace through it.
 */
export class SeedWorkspaces {
  constructor (private readonly trx: Transaction<Database>, private readonly source: ChangeSource, private readonly summary: SeedSummary,
    private readonly removals: Removals) {}

  /**
   * Writes the organization's declared workspaces; their ids by name. `at` runs one write (a
   * constraint broken is reported against its entry), `note` counts it, `teamId` finds a team by
   * name (the teams a workspace adopted now keeps rows of).
   */
  async declare (organization: { id: string, name: string }, org: Organization, where: string,
    at: <T>(entry: string, write: () => Promise<T>) => Promise<T>,
    note: (label: string, before: Record<string, unknown> | undefined, after: Record<string, unknown>) => void,
    teamId: (name: string) => Promise<string | undefined>): Promise<Map<string, string>> {
    const workspaces = org.workspaces ?? []
    const ids = new Map<string, string>()
    for (const [j, ws] of workspaces.entries()) {
      const here = entry('workspaces', j, ws, where)
      if (ws.id !== undefined) await makeRoom(this.trx, this.source, this.summary, 'workspaces', organization, { id: ws.id, name: ws.name }, workspaces.map((x) => x.name))
      const previous = await this.trx.selectFrom('workspaces').select(['id', 'organization_id', 'name', 'managed_by'])
        .$call((q) => ws.id === undefined ? q.where('organization_id', '=', organization.id).where('name', '=', ws.name) : q.where('id', '=', ws.id))
        .executeTakeFirst()
      const row = await at(here, async () => await this.trx.insertInto('workspaces')
        .values({ id: ws.id ?? newId('ws'), organization_id: organization.id, name: ws.name, managed_by: 'seed' })
        .onConflict((oc) => (ws.id === undefined ? oc.columns(['organization_id', 'name']) : oc.column('id'))
          .doUpdateSet({ name: ws.name, managed_by: 'seed' })
          .where('workspaces.organization_id', '=', organization.id))
        .returning('id').executeTakeFirst())
      if (row === undefined) throw new SeedError(here, `id "${ws.id!}" belongs to a workspace of another organization`)
      const label = `${organization.name}/${ws.name}`
      note(label, previous, { organization_id: organization.id, name: ws.name })
      ids.set(ws.name, row.id)
      this.summary.workspaces++
      if (previous !== undefined && previous.managed_by !== 'seed') {
        const keep = (await Promise.all((org['team-access'] ?? []).filter((grant) => grant.workspace === ws.name)
          .map(async (grant) => await teamId(grant.team)))).filter((id): id is string => id !== undefined)
        await this.adopt(row.id, label, previous, keep)
      }
    }
    return ids
  }

  /** A workspace the API or the host made becomes the seed's whole: team-access rows of teams not in `keep` go, with their events. */
  private async adopt (id: string, label: string, previous: { managed_by: string }, keep: string[]): Promise<void> {
    const before = this.summary.removed.teamAccess.length
    await this.removals.removeTeamAccess('workspace_id', [id], keep)
    const removed = this.summary.removed.teamAccess.length - before
    this.summary.warnings.push(`workspace ${label}: made ${madeBy(previous)}, now the seed's — ${removed} team-access row${removed === 1 ? '' : 's'} it does not declare removed`)
  }
}
