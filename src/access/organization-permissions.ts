import { sql, type RawBuilder } from 'kysely'
import { table } from '../db/tables.js'

/**
 * What the caller may do with an organization, as HCP Terraform answers it in an organization's
 * `permissions` (DESIGN §13.1: the mirror reads `can-update` — an owner's, the organization token's
 * — to know a token reads the whole organization): from the caller's `grants` CTE, for the
 * organization whose id `organizationId` refers to. A jsonb object of wire names.
 */
export const organizationPermissions = (organizationId: string): RawBuilder<Record<string, boolean>> => {
  const holds = (flag: RawBuilder<boolean>) => sql`coalesce(bool_or(${flag}), false)`
  return sql<Record<string, boolean>>`(select jsonb_build_object(
      'can-update', ${holds(sql`g.is_owner`)},
      'can-destroy', ${holds(sql`g.is_owner`)},
      'can-create-team', ${holds(sql`g.is_owner or g.manage_teams`)},
      'can-create-workspace', ${holds(sql`g.is_owner or g.manage_workspaces`)},
      'can-create-project', ${holds(sql`g.is_owner or g.manage_projects`)},
      'can-manage-users', ${holds(sql`g.is_owner or g.manage_membership`)})
    from grants g where g.organization_id = ${sql.ref(organizationId)})`
}

/** A mirrored organization's origin (DESIGN §12.2, §13): the host and its last successful run, as jsonb; null for any other. */
export const mirrorOf = (organizationId: string): RawBuilder<{ host: string, succeeded_at: string } | null> =>
  sql`(select jsonb_build_object('host', m.host, 'succeeded_at', m.succeeded_at) from ${table.mirrors} m where m.organization_id = ${sql.ref(organizationId)})`
