import { sql, type Kysely } from 'kysely'

// The row trigger of 0002 read its team's visibility without a lock: a row added while its team
// changed visibility in another transaction could be counted against the old visibility for
// good. Reading it FOR SHARE waits for such a change to commit and then sees it; the team's
// own trigger, in turn, waits for the row's transaction and then sees the row.

export async function up (db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function team_access_count_rows() returns trigger language plpgsql as $$
    declare
      visible int;
    begin
      if tg_op in ('DELETE', 'UPDATE') then
        -- the team may be gone already (a cascade from its delete, whose trigger has counted it out)
        select (visibility = 'organization')::int into visible from teams where id = old.team_id for share;
        update workspace_access_counts set
          total = total - 1,
          organization_visible = organization_visible - coalesce(visible, 0)
        where workspace_id = old.workspace_id;
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        select (visibility = 'organization')::int into visible from teams where id = new.team_id for share;
        insert into workspace_access_counts as c (workspace_id, total, organization_visible)
        values (new.workspace_id, 1, coalesce(visible, 0))
        on conflict (workspace_id) do update set
          total = c.total + 1,
          organization_visible = c.organization_visible + excluded.organization_visible;
      end if;
      return null;
    end $$`.execute(db)
}

export async function down (_db: Kysely<any>): Promise<void> {
  // 0002's function is replaced by 0003's; going back leaves the locking version in place,
  // which counts the same rows
}
