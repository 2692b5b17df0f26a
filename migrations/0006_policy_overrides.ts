import type { Kysely } from 'kysely'

// `policy-overrides`: may the team override soft-mandatory policy checks. HCP Terraform's current
// description of team access has it and the current Terraform provider sends and reads it. Like
// the other permissions it is custom-only; no fixed level implies it, so existing rows read false.
export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('team_workspaces')
    .addColumn('policy_overrides', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('team_workspaces').dropColumn('policy_overrides').execute()
}
