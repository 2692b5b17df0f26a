import { sql, type Kysely, type QueryCreator, type RawBuilder } from 'kysely'
import type { Database } from '../db/database.js'
import { PERMISSION_COLUMN_NAMES } from '../access/permission-columns.js'
import { callerOfKind, callerValues, teamGrants, withGrants } from '../access/grants.js'
import { isOwnerOf } from '../access/predicates.js'
import { explainAccess, type Explanation } from '../access/effective-access.js'
import { PROJECT_GRANT_COLUMNS } from '../access/project-permissions.js'
import type { Caller } from '../auth/caller.js'
import type { PageRequest } from '../jsonapi/pagination.js'
import { ApiError } from '../jsonapi/errors.js'
import { QueryShapes } from '../db/query-shapes.js'
import { GRANT_FLAGS, teamGrantsOf, type GrantRow } from './effective-access-repository.js'
import { jsonArrayOf, membersOf, ownedOrganization, pageSlices, pairs, sliceOfCandidates, slicePairs, teamCounts, type ChosenTeam } from './access-review-sql.js'

/**
 * The access review (DESIGN §12.1): every team of an organization with every workspace it holds
 * effective access on, and why — the grants of §10.2 and §11.3 (organization flags, team-access
 * rows, team-project rows on the workspace's project), combined by `explainAccess` as everywhere
 * else. Owners only: the statement finds the organization only for them.
 */

/** One team's effective access on one workspace, with what a reviewer reads beside it. */
export interface ReviewEntry extends Explanation {
  team: ReviewTeam
  workspace: { id: string, name: string, projectId: string, projectName: string }
}

type PairRow = GrantRow & {
  team_id: string
  team_name: string
  visibility: 'secret' | 'organization'
  workspace_id: string
  workspace_name: string
  project_id: string
  project_name: string
}

/** A team as the review lists it. */
export interface ReviewTeam { id: string, name: string, visibility: 'secret' | 'organization', members: string[] }

/**
 * A workspace a team of a stream's batch reaches, and the ids of its grants there (its flags are
 * the team's); `position`, the team's place in the batch (from 1).
 */
type ReachedRow = Pick<PairRow, 'team_id' | 'workspace_id' | 'workspace_name' | 'project_id' | 'project_name' | 'row_id' | 'tp_id'> & { position: number }

/** The columns of `pairs` that `teamGrantsOf` reads: the team's flags, its row, its project row. */
const GRANT_COLUMNS = ['team_id', ...GRANT_FLAGS, 'row_id', 'access', ...PERMISSION_COLUMN_NAMES, ...PROJECT_GRANT_COLUMNS.map((c) => `tp_${c}`)]

/** The columns of `pairs` a slice of a batch's pairs reads: the team's place, the workspace, and the ids of its grants. */
const REACHED_COLUMNS = ['position', 'team_id', 'workspace_id', 'workspace_name', 'project_id', 'project_name', 'row_id', 'tp_id'] as const

/** The rows of a `jsonArrayOf`, as objects of its `columns`. */
function rowsOf<T> (text: string, columns: readonly string[]): T[] {
  return (JSON.parse(text) as unknown[][]).map((values) => {
    const row: Record<string, unknown> = {}
    for (let i = 0; i < columns.length; i++) row[columns[i]!] = values[i]
    return row as T
  })
}

/** Which grants of which team a workspace holds: the team, its row there and its project row, if any. */
const grantKey = (row: Pick<PairRow, 'team_id' | 'row_id' | 'tp_id'>): string => `${row.team_id} ${row.row_id ?? ''} ${row.tp_id ?? ''}`

/** A row of `pairs` as its entry; `members` the team's usernames. */
export function reviewEntryOf (row: PairRow, members: string[]): ReviewEntry {
  return { team: { id: row.team_id, name: row.team_name, visibility: row.visibility, members }, workspace: workspaceOf(row), ...explanationOf(row) }
}

/** The workspace of a row of `pairs`, as an entry names it. */
const workspaceOf = (row: Pick<PairRow, 'workspace_id' | 'workspace_name' | 'project_id' | 'project_name'>): ReviewEntry['workspace'] =>
  ({ id: row.workspace_id, name: row.workspace_name, projectId: row.project_id, projectName: row.project_name })

/** What a team's grants on a workspace (a row of `pairs`) give, and why. */
const explanationOf = (row: GrantRow): Explanation => explainAccess([teamGrantsOf(row)])

/** How a stream runs each of its statements: by default at once; the routes, each in a turn of admission's (`inTurn`). */
export type ReadInTurn = <T>(read: () => Promise<T>) => Promise<T>

/**
 * A stream's caller is no longer an owner of the organization (its token revoked, its membership
 * removed): the stream stops where it is, and its answer ends unfinished, never as if it were whole.
 */
export class NoLongerOwner extends ApiError {
  constructor () { super(404, 'not found', 'The caller no longer reads this organization\'s access review.') }
}

/**
 * The teams of a stream, in order, in batches read together: consecutive teams that reach at most
 * `slice` workspaces in all (a team that reaches more, alone), and at most `slice` teams a batch.
 */
function batchesOf (teams: Array<{ team: ReviewTeam, reaches: number }>, slice: number): ReviewTeam[][] {
  const batches: ReviewTeam[][] = []
  let batch: ReviewTeam[] = []
  let reached = 0
  for (const { team, reaches } of teams) {
    if (batch.length > 0 && (reached + reaches > slice || batch.length >= slice)) {
      batches.push(batch)
      batch = []
      reached = 0
    }
    batch.push(team)
    reached += reaches
  }
  if (batch.length > 0) batches.push(batch)
  return batches
}

export class AccessReviewRepository {
  private readonly shapes = new QueryShapes()

  constructor (private readonly db: Kysely<Database>) {}

  /** The organization of this name when the caller is one of its owners; undefined otherwise (404). */
  async organization (caller: Caller, name: string): Promise<{ id: string, name: string } | undefined> {
    return await withGrants(this.db, caller).selectFrom('organizations as o')
      .where('o.name', '=', name).where(isOwnerOf('o.id'))
      .select(['o.id', 'o.name']).executeTakeFirst()
  }

  /**
   * A page of the organization's entries, by team name, then workspace name, and how many there
   * are; undefined when there is no such organization or the caller is not its owner.
   *
   * A page costs what it returns, not what the organization holds (issue 43): the teams, each
   * with how many workspaces it reaches (`teamCounts`, counted without being listed), stand end to
   * end in the pages' order; only the teams the page overlaps (`chosen`, at most its size) read
   * their slice of workspaces (`pageSlices`), and only those pairs are joined to their grants. One
   * statement, so the count and the page are one snapshot.
   */
  async page (caller: Caller, organizationName: string, page: PageRequest): Promise<{ entries: ReviewEntry[], total: number } | undefined> {
    const from = (page.number - 1) * page.size
    const to = from + page.size
    const rows = await withGrants(this.db, caller)
      .with('team_grants', (qc) => teamGrants(qc))
      .with('org', (qc) => qc.selectFrom('organizations as o').where('o.name', '=', organizationName).where(isOwnerOf('o.id')).select('o.id'))
      .with('counted', () => teamCounts)
      .with('chosen', () => sql<ChosenTeam>`(select c.team_id, c.wide, greatest(${from} - c.start, 0) as skip,
          least(c.start + c.n, ${to}) - greatest(c.start, ${from}) as take, ${membersOf('c.team_id')} as members
        from (select team_id, wide, n, sum(n) over (order by team_name, team_id) - n as start from counted where n > 0) c
        where c.start < ${to} and c.start + c.n > ${from})`)
      .with('slice', () => pageSlices)
      .with('reached', (qc) => slicePairs(qc as QueryCreator<any>))
      .selectFrom('org')
      .leftJoin('reached as x', (join) => join.onTrue())
      .selectAll('x')
      .select(sql<number | string>`(select coalesce(sum(n), 0) from counted)`.as('total'))
      .orderBy('x.team_name').orderBy('x.team_id').orderBy('x.workspace_name').orderBy('x.workspace_id')
      .execute()
    if (rows.length === 0) return undefined
    return {
      total: Number(rows[0]!.total),
      entries: rows.filter((row) => row.team_id !== null).map((row) => reviewEntryOf(row as unknown as PairRow, row.members ?? []))
    }
  }

  /**
   * The organization's teams by name, each with its members' usernames, sorted, and how many
   * workspaces it reaches (`teamCounts`), while `caller` owns it (NoLongerOwner otherwise).
   */
  private async ownedTeams (caller: Caller, organizationId: string): Promise<Array<{ team: ReviewTeam, reaches: number }>> {
    const rows = await withGrants(this.db, caller)
      .with('team_grants', (qc) => teamGrants(qc))
      .with('org', (qc) => ownedOrganization(qc as QueryCreator<any>, organizationId))
      .with('counted', () => teamCounts)
      .selectFrom('org')
      .leftJoin('teams as t', 't.organization_id', 'org.id')
      .leftJoin('counted as c', 'c.team_id', 't.id')
      .select(['t.id', 't.name', 't.visibility', membersOf('t.id').as('members'), 'c.n'])
      .orderBy('t.name').orderBy('t.id')
      .execute()
    if (rows.length === 0) throw new NoLongerOwner()
    return rows.filter((row) => row.id !== null).map((row) => ({
      team: { id: row.id!, name: row.name!, visibility: row.visibility!, members: row.members ?? [] },
      reaches: Number(row.n ?? 0)
    }))
  }

  /**
   * Every entry of the organization, in the pages' order, a slice at a time: the teams in batches
   * (`batchesOf`: as many teams together as reach about `slice` workspaces in all, a big team
   * alone), each batch's pairs `slice` at a time (by the team's place, then workspace name and id),
   * each only the workspace and the ids of the grants it holds there, with those grants in the same
   * statement, each combination explained once. So the whole organization streams with one slice
   * of small entries in memory, whatever its size, in about one statement per `slice` entries (not
   * one per team: an organization of many small teams), and each slice as its statement read it
   * (the review is not one snapshot: a team's slices are not; a team's count only places it in a
   * batch, and its workspaces are those its batch's statements read).
   * Every statement asks again whether `caller` owns the organization, in the statement itself: a
   * caller who stops being an owner (a token revoked, a membership removed) gets nothing read after
   * that — the stream throws NoLongerOwner. Each statement runs through `inTurn`.
   */
  async * entries (caller: Caller, organizationId: string, slice: number, inTurn: ReadInTurn = async (read) => await read()): AsyncGenerator<ReviewEntry[]> {
    for (const batch of batchesOf(await inTurn(async () => await this.ownedTeams(caller, organizationId)), slice)) {
      const teams = new Map(batch.map((team) => [team.id, team]))
      let after: ReachedRow | undefined
      for (;;) {
        const read = await inTurn(async () => await this.sliceOf(caller, organizationId, [...teams.keys()], slice, after))
        const explanations = new Map(read.grants.map((grant) => [grantKey(grant), explanationOf(grant)]))
        if (read.rows.length > 0) yield read.rows.map((row) => ({ team: teams.get(row.team_id)!, workspace: workspaceOf(row), ...explanations.get(grantKey(row))! }))
        if (read.rows.length < slice) break
        after = read.rows[read.rows.length - 1]
      }
    }
  }

  /**
   * At most `limit` of the pairs of a batch of teams (`teams`, in order), after the pair `after`, by
   * the team's place in the batch, then workspace name and id: the workspace and the ids of its
   * grants; and those grants, each combination of them once (a team's flags, with one of its rows
   * or none, with one of its project rows or none).
   */
  private async sliceOf (caller: Caller, organizationId: string, teams: string[], limit: number, after?: ReachedRow): Promise<{ rows: ReachedRow[], grants: PairRow[] }> {
    const values = [...callerValues(caller), teams, organizationId, limit, ...(after === undefined ? [] : [after.position, after.workspace_name, after.workspace_id])]
    const query = this.shapes.compile(this.db, `slice:${after === undefined ? 'first' : 'after'}:${caller.kind}`, values, ([subject, token, batch, organization, max, position, name, id]) =>
      this.reached(callerOfKind(caller.kind, [subject, token]), batch!, organization!, sliceOfCandidates(batch, max, name === undefined ? undefined : [position, name, id]))
        .selectNoFrom([
          sql<boolean>`exists (select 1 from org)`.as('owner'),
          jsonArrayOf(sql`(select * from reached)`, REACHED_COLUMNS, ['position', 'workspace_name', 'workspace_id']).as('rows'),
          jsonArrayOf(sql`(select distinct on (team_id, row_id, tp_id) * from reached)`, GRANT_COLUMNS).as('grants')
        ]))
    const [read] = (await this.db.executeQuery<{ owner: boolean, rows: string, grants: string }>(query)).rows
    if (read!.owner !== true) throw new NoLongerOwner()
    return { rows: rowsOf<ReachedRow>(read!.rows, REACHED_COLUMNS), grants: rowsOf<PairRow>(read!.grants, GRANT_COLUMNS) }
  }

  /** The `reached` CTE of a batch of teams of an organization the caller owns (none otherwise): the pairs of its `slice`, with their grants. */
  private reached (caller: Caller, teams: unknown, organization: string, slice: RawBuilder<unknown>) {
    return withGrants(this.db, caller)
      .with('team_grants', (qc) => teamGrants(qc).where(sql<boolean>`teams.id = any(${teams}::text[])`))
      .with('org', (qc) => ownedOrganization(qc as QueryCreator<any>, organization))
      .with('reached', (qc) => pairs(qc as QueryCreator<any>, slice))
  }
}
