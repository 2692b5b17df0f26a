import { sql, type Kysely } from 'kysely'

// Each team-workspace row carries its team's visibility, so that a member's page reads an index
// in order — the rows of organization-visible teams, and the rows of its own teams — instead of
// judging every row of the workspace it skips: a page costs its offset and size, never the
// number of rows the caller may not see.
//
// The counts of 0002/0003 now read the row's own visibility, and a team's change of visibility
// updates its rows and the counts from exactly the rows it changed. Locks are taken in one order
// only — a team-workspace row, then the counts — so that a visibility change racing rows added
// and removed can neither deadlock nor miscount: a row added waits for the team (FOR SHARE) before
// it exists; a row removed needs no team at all.
export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('team_workspaces')
    .addColumn('team_visibility', 'text', (c) => c.notNull().defaultTo('secret'))
    .execute()
  await sql`update team_workspaces tw set team_visibility = t.visibility from teams t where t.id = tw.team_id`.execute(db)

  // a row takes its team's visibility when it is added or moves to another team
  await sql`
    create function team_access_row_visibility() returns trigger language plpgsql as $$
    begin
      select visibility into new.team_visibility from teams where id = new.team_id for share;
      return new;
    end $$`.execute(db)
  await sql`
    create trigger team_workspaces_visibility before insert or update of team_id on team_workspaces
    for each row execute function team_access_row_visibility()`.execute(db)

  // the counts follow each row by its own visibility (0003 read the team's, under a lock)
  await sql`
    create or replace function team_access_count_rows() returns trigger language plpgsql as $$
    begin
      if tg_op in ('DELETE', 'UPDATE') then
        update workspace_access_counts set
          total = total - 1,
          organization_visible = organization_visible - (old.team_visibility = 'organization')::int
        where workspace_id = old.workspace_id;
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        insert into workspace_access_counts as c (workspace_id, total, organization_visible)
        values (new.workspace_id, 1, (new.team_visibility = 'organization')::int)
        on conflict (workspace_id) do update set
          total = c.total + 1,
          organization_visible = c.organization_visible + excluded.organization_visible;
      end if;
      return null;
    end $$`.execute(db)

  // a team that changes visibility: its rows, then the counts of exactly the rows it changed
  await sql`drop trigger teams_count_visibility on teams`.execute(db)
  await sql`drop trigger teams_count_delete on teams`.execute(db) // a deleted team's rows count themselves out
  await sql`drop function team_access_count_team()`.execute(db)
  await sql`
    create function team_access_team_visibility() returns trigger language plpgsql as $$
    begin
      with changed as (
        update team_workspaces set team_visibility = new.visibility
        where team_id = new.id and team_visibility is distinct from new.visibility
        returning workspace_id
      )
      update workspace_access_counts c
      set organization_visible = c.organization_visible + d.n * (case when new.visibility = 'organization' then 1 else -1 end)
      from (select workspace_id, count(*)::int as n from changed group by workspace_id) d
      where c.workspace_id = d.workspace_id;
      return null;
    end $$`.execute(db)
  await sql`
    create trigger teams_row_visibility after update of visibility on teams
    for each row when (old.visibility is distinct from new.visibility) execute function team_access_team_visibility()`.execute(db)

  await db.schema.createIndex('team_workspaces_visible_idx').on('team_workspaces')
    .columns(['workspace_id', 'team_visibility', 'created_at', 'id']).execute()
}

export async function down (_db: Kysely<any>): Promise<void> {
  // the counts' functions of 0002/0003 are replaced for good: going back keeps this version
}
