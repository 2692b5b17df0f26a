import t from 'tap'
import { sql } from 'kysely'
import { applySeed } from '../../src/directory/seed.js'
import { freshDatabase, ENGINE } from '../helper.js'
import { world } from '../fixtures/world.js'
import { table } from '../../src/db/tables.js'

/**
 * The trigger-kept counts (migration 0002) must equal the rows they count after every kind of
 * change: rows in and out, a row moved to another team, teams changing visibility, teams and
 * workspaces and organizations deleted (cascades), seeds applied again.
 */
t.test(`workspace access counts stay exact on ${ENGINE}`, async (t) => {
  const { db } = await freshDatabase(t)
  await applySeed(db, world)

  const check = async (t: Tap, step: string) => {
    const { rows: actual } = await sql<{ workspace_id: string, total: number, organization_visible: number }>`
      select w.id as workspace_id, count(tw.id)::int as total,
             (count(tw.id) filter (where t.visibility = 'organization'))::int as organization_visible
      from ${table.workspaces} w
      left join ${table.team_workspaces} tw on tw.workspace_id = w.id
      left join ${table.teams} t on t.id = tw.team_id
      group by w.id`.execute(db)
    const kept = await db.selectFrom('workspace_access_counts').selectAll().execute()
    const keptBy = new Map(kept.map((k) => [k.workspace_id, k]))
    for (const row of actual) {
      const k = keptBy.get(row.workspace_id) ?? { total: 0, organization_visible: 0 }
      t.same({ total: Number(k.total), organization_visible: Number(k.organization_visible) },
        { total: row.total, organization_visible: row.organization_visible }, `${step}: ${row.workspace_id}`)
    }
    t.ok(kept.every((k) => actual.some((a) => a.workspace_id === k.workspace_id)), `${step}: no counts for deleted workspaces`)
  }
  type Tap = typeof t

  await check(t, 'after the seed')
  const row = (id: string, team: string, workspace: string) => ({
    id,
    organization_id: 'org-acme',
    team_id: team,
    workspace_id: workspace,
    access: 'read' as const,
    runs: 'read' as const,
    variables: 'read' as const,
    state_versions: 'read' as const,
    sentinel_mocks: 'none' as const,
    workspace_locking: false,
    run_tasks: false
  })
  await db.insertInto('team_workspaces').values([row('tws-c1', 'team-green', 'ws-dev'), row('tws-c2', 'team-red', 'ws-dev')]).execute()
  await check(t, 'rows added')
  await db.updateTable('team_workspaces').set({ team_id: 'team-green', workspace_id: 'ws-prod' }).where('id', '=', 'tws-c2').execute()
  await check(t, 'a row moved to another team and workspace')
  await db.updateTable('teams').set({ visibility: 'organization' }).where('id', '=', 'team-red').execute()
  await check(t, 'a secret team made visible')
  await db.updateTable('teams').set({ visibility: 'secret' }).where('id', 'in', ['team-writers', 'team-green']).execute()
  await check(t, 'visible teams made secret')
  await db.updateTable('teams').set({ name: 'renamed' }).where('id', '=', 'team-blue').execute()
  await check(t, 'a change that is not visibility')
  await db.deleteFrom('team_workspaces').where('id', '=', 'tws-c1').execute()
  await check(t, 'a row removed')
  await db.deleteFrom('teams').where('id', '=', 'team-green').execute()
  await check(t, 'a team deleted (its rows cascade)')
  await db.deleteFrom('workspaces').where('id', '=', 'ws-dev').execute()
  await check(t, 'a workspace deleted')
  await applySeed(db, world)
  await check(t, 'the seed applied again (rows upserted, teams reset)')
  // a team changing visibility while rows of it come and go, from concurrent transactions
  await db.insertInto('workspaces').values(Array.from({ length: 10 }, (_, i) => ({ id: `ws-race-${i}`, organization_id: 'org-acme', name: `race${i}` }))).execute()
  await Promise.all([
    ...Array.from({ length: 10 }, (_, i) => db.updateTable('teams').set({ visibility: i % 2 === 0 ? 'organization' : 'secret' }).where('id', '=', 'team-blue').execute()),
    ...Array.from({ length: 10 }, (_, i) => db.insertInto('team_workspaces').values(row(`tws-race-${i}`, 'team-blue', `ws-race-${i}`)).execute()
      .then(() => i % 3 === 0 ? db.deleteFrom('team_workspaces').where('id', '=', `tws-race-${i}`).execute() : undefined))
  ])
  await check(t, 'visibility changes racing rows in and out')
  await db.deleteFrom('organizations').where('id', '=', 'org-acme').execute()
  await check(t, 'an organization deleted')
})
