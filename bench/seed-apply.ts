/**
 * A seed of 1,000 teams applied with 100 removals, and its dry run (issue 23), through the seed
 * function (src/db/seed.ts, as `team-access seed [--dry-run] FILE` and SEED_FILE apply it), on a
 * database of its own (a seed's users are global: the bench's own database is not a place for a
 * second document).
 *
 * The document: one organization, 1,000 users, 1,000 teams (team i with user i as its member),
 * one workspace where each team holds read. Applied once (the first apply: every row created),
 * then `rounds` times, timed: the document again (nothing changes: the reference), a dry run of
 * the document without its last 100 teams, that document applied (100 teams removed, with their
 * memberships and team-access rows, each row's removal an audit event), and the whole document
 * applied again (the 100 teams back, for the next round).
 */
import type { Kysely } from 'kysely'
import { connect, type DatabaseLocation } from '../src/db/connect.js'
import { migrate } from '../src/db/migrate.js'
import { applySeed, type SeedDocument, type SeedSummary } from '../src/directory/seed.js'

export const SEED_TEAMS = 1_000
export const SEED_REMOVED = 100

function document (teams: number): SeedDocument {
  return {
    users: Array.from({ length: SEED_TEAMS }, (_, i) => ({ id: `user-seed-${i}`, username: `seeduser${i}` })),
    organizations: [{
      id: 'org-seed',
      name: 'seed',
      teams: Array.from({ length: teams }, (_, i) => ({ id: `team-seed-${i}`, name: `seed${i}`, members: [`seeduser${i}`] })),
      workspaces: [{ id: 'ws-seed', name: 'seeded' }],
      'team-access': Array.from({ length: teams }, (_, i) => ({ team: `seed${i}`, workspace: 'seeded', access: 'read' }))
    }]
  } as unknown as SeedDocument
}

export interface SeedTimes { first: number, unchanged: number[], dryRun: number[], apply: number[], restore: number[] }

async function timed (db: Kysely<any>, doc: SeedDocument, dryRun: boolean): Promise<{ ms: number, summary: SeedSummary }> {
  const began = performance.now()
  const summary = await applySeed(db, doc, { dryRun })
  return { ms: performance.now() - began, summary }
}

export async function measureSeed (location: DatabaseLocation, rounds: number): Promise<SeedTimes> {
  const { db, close } = await connect(location)
  try {
    await migrate(db)
    const whole = document(SEED_TEAMS)
    const fewer = document(SEED_TEAMS - SEED_REMOVED)
    const first = await timed(db, whole, false)
    if (first.summary.created.teams.length !== SEED_TEAMS) throw new Error(`the first apply created ${first.summary.created.teams.length} teams, not ${SEED_TEAMS}`)
    const times: SeedTimes = { first: first.ms, unchanged: [], dryRun: [], apply: [], restore: [] }
    for (let round = 0; round < rounds; round++) {
      times.unchanged.push((await timed(db, whole, false)).ms)
      const plan = await timed(db, fewer, true)
      const applied = await timed(db, fewer, false)
      for (const [what, run] of [['dry run', plan], ['apply', applied]] as const) {
        if (run.summary.removed.teams.length !== SEED_REMOVED) throw new Error(`the ${what} removes ${run.summary.removed.teams.length} teams, not ${SEED_REMOVED}`)
      }
      times.dryRun.push(plan.ms)
      times.apply.push(applied.ms)
      times.restore.push((await timed(db, whole, false)).ms)
    }
    return times
  } finally {
    await close()
  }
}
