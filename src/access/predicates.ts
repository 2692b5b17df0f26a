import { sql, type RawBuilder } from 'kysely'

/**
 * The rules of DESIGN §3 — membership, workspace admin, visibility — stated once, as SQL
 * predicates that every statement composes. Each reads the `grants` CTE (./grants.ts) that the
 * statement starts with; the arguments name the columns of the row being judged, so one rule
 * serves a row of any table. Nothing else in src/ restates them.
 */

/** The caller acts in the organization: it is a member, or holds its organization token. */
export const isMemberOf = (organization: string): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from grants g where g.organization_id = ${sql.ref(organization)})`

/** The caller is an owner of the organization, or acts through a team with manage-workspaces: admin on all its workspaces. */
export const administersWorkspacesOf = (organization: string): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from grants g where g.organization_id = ${sql.ref(organization)} and (g.is_owner or g.manage_workspaces))`

/** The caller acts through a team with read-workspaces: read on all the organization's workspaces. */
export const readsWorkspacesOf = (organization: string): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from grants g where g.organization_id = ${sql.ref(organization)} and g.read_workspaces)`

/** The caller acts through this team. */
export const actsThrough = (team: string): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from grants g where g.team_id = ${sql.ref(team)})`

/** A workspace admin: effective access `admin` — organization-wide, or through a team row with access admin. */
export const isAdminOf = (workspace: string, organization: string): RawBuilder<boolean> => sql<boolean>`(
  ${administersWorkspacesOf(organization)}
  or exists (select 1 from team_workspaces a join grants g on g.team_id = a.team_id
             where a.workspace_id = ${sql.ref(workspace)} and a.access = 'admin'))`

/**
 * Whether a member sees a team without being an admin: the team is visible to the organization,
 * or is one the caller acts through. (Owners and workspace admins see every team on top.)
 */
export const seesTeam = (teamId: string, visibility: string | RawBuilder<string>): RawBuilder<boolean> =>
  sql<boolean>`(${typeof visibility === 'string' ? sql.ref(visibility) : visibility} = 'organization' or ${actsThrough(teamId)})`
