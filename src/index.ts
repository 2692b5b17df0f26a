/** The public face: the plugin (default export), buildApp, migrate, applySeed, the host's directory and their types. */
import teamAccess from './plugin.js'

export default teamAccess
export type { TeamAccessOptions, TeamAccessDecorator } from './plugin.js'
export type { Caller } from './auth/caller.js'
export type { EffectiveAccess, Explanation, GrantKind, GrantSource } from './access/effective-access.js'
export type { Explain, ExplainQuery, ExplainTeamQuery, ExplainUserQuery, ExplainWorkspaceQuery } from './effective-access/explain.js'
export type { TeamExplanation, UserExplanation, WorkspaceName } from './effective-access/effective-access-repository.js'
export type { Permissions } from './access/permissions.js'
export type { PageRequest } from './jsonapi/pagination.js'
export type { Authenticate } from './auth/authentication.js'
export type { Database } from './db/database.js'
export type { DatabaseLocation, PoolUsage } from './db/connect.js'
export { connect, preparedStatements } from './db/connect.js'
export { registerPoolMetrics } from './metrics.js'
export { buildApp, API_PREFIX } from './app.js'
export { loadConfig, type Config } from './config.js'
export { applySeed, formatSeedSummary, SeedError, type ApplySeedOptions, type SeedChanges, type SeedDocument, type SeedSummary } from './directory/seed.js'
export { DatabaseNewer, migrate, type MigrateOptions } from './db/migrate.js'
export { DEFAULT_SCHEMA } from './db/tables.js'
export {
  directory, DirectoryError, type Directory, type DirectoryErrorCode, type DirectoryCallOptions,
  type DirectoryOrganization, type DirectoryUser, type DirectoryTeam, type DirectoryMembership, type DirectoryWorkspace, type DirectoryToken,
  type NewOrganization, type OrganizationChange, type NewUser, type UserChange, type NewTeam, type TeamChange, type OrganizationAccessInput,
  type Membership, type NewWorkspace, type WorkspaceChange, type TokenSubject, type NewToken,
  type DirectoryOrganizationMembership, type NewOrganizationMembership
} from './directory/host-directory.js'
export {
  AccessSetError, type AccessSetErrorCode, type AccessSetEntry, type AccessSetProblem, type AccessSetRow,
  type SetWorkspaceAccessInput, type WorkspaceAccessSet
} from './team-workspaces/access-set.js'
export type { ProjectAccessEntry, ProjectAccessRow, ProjectAccessSet, SetProjectAccessInput } from './projects/project-access-set.js'
