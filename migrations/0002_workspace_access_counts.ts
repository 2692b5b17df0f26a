import { sql, type Kysely } from 'kysely'

// How many team-workspace rows each workspace has, in all and of organization-visible teams,
// kept by triggers, so that a paginated list counts its rows in O(1) instead of O(rows): the
// list must not get slower as a workspace grows. A member's count is the organization-visible
// rows plus the rows of the secret teams they act through (a handful of index lookups).

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.createTable('workspace_access_counts')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
    .addColumn('total', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('organization_visible', 'integer', (c) => c.notNull().defaultTo(0))
    .addCheckConstraint('workspace_access_counts_check', sql`total >= 0 and organization_visible between 0 and total`)
    .execute()

  // a row in or out of a workspace; the team may be gone already (cascade from a team delete,
  // whose own trigger below has taken its rows out of organization_visible)
  await sql`
    create function team_access_count_rows() returns trigger language plpgsql as $$
    begin
      if tg_op in ('DELETE', 'UPDATE') then
        update workspace_access_counts set
          total = total - 1,
          organization_visible = organization_visible
            - coalesce((select (visibility = 'organization')::int from teams where id = old.team_id), 0)
        where workspace_id = old.workspace_id;
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        insert into workspace_access_counts as c (workspace_id, total, organization_visible)
        values (new.workspace_id, 1, (select (visibility = 'organization')::int from teams where id = new.team_id))
        on conflict (workspace_id) do update set
          total = c.total + 1,
          organization_visible = c.organization_visible + excluded.organization_visible;
      end if;
      return null;
    end $$`.execute(db)
  await sql`
    create trigger team_workspaces_count after insert or delete or update of team_id, workspace_id
    on team_workspaces for each row execute function team_access_count_rows()`.execute(db)

  // a team that changes visibility, or goes away, moves its rows in or out of organization_visible
  await sql`
    create function team_access_count_team() returns trigger language plpgsql as $$
    declare
      delta int;
    begin
      if tg_op = 'DELETE' then
        delta := -(old.visibility = 'organization')::int;
      else
        delta := (new.visibility = 'organization')::int - (old.visibility = 'organization')::int;
      end if;
      if delta <> 0 then
        update workspace_access_counts c set organization_visible = c.organization_visible + delta
        from team_workspaces tw
        where tw.team_id = old.id and c.workspace_id = tw.workspace_id;
      end if;
      return case when tg_op = 'DELETE' then old else new end;
    end $$`.execute(db)
  await sql`
    create trigger teams_count_visibility after update of visibility on teams
    for each row when (old.visibility is distinct from new.visibility) execute function team_access_count_team()`.execute(db)
  await sql`
    create trigger teams_count_delete before delete on teams
    for each row execute function team_access_count_team()`.execute(db)

  await sql`
    insert into workspace_access_counts (workspace_id, total, organization_visible)
    select tw.workspace_id, count(*), count(*) filter (where t.visibility = 'organization')
    from team_workspaces tw join teams t on t.id = tw.team_id
    group by tw.workspace_id`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await sql`drop trigger teams_count_delete on teams`.execute(db)
  await sql`drop trigger teams_count_visibility on teams`.execute(db)
  await sql`drop trigger team_workspaces_count on team_workspaces`.execute(db)
  await sql`drop function team_access_count_team()`.execute(db)
  await sql`drop function team_access_count_rows()`.execute(db)
  await db.schema.dropTable('workspace_access_counts').execute()
}
