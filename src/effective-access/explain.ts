import type { Caller } from '../auth/caller.js'
import type { PageRequest } from '../jsonapi/pagination.js'
import type { EffectiveAccessRepository, TeamExplanation, UserExplanation } from './effective-access-repository.js'

/** Every team that holds access on a workspace. */
export interface ExplainWorkspaceQuery { caller: Caller, workspaceId: string }
/** One user's access on a workspace, through its teams (by username). */
export interface ExplainUserQuery { caller: Caller, workspaceId: string, username: string }
/** The workspaces a team reaches: one page, or (no page) all of them. */
export interface ExplainTeamQuery { caller: Caller, teamId: string, page?: PageRequest }

export type ExplainQuery = ExplainWorkspaceQuery | ExplainUserQuery | ExplainTeamQuery

/**
 * The answers of DESIGN §10.2 for the routes and for the host (`app.teamAccess.explain`), one code
 * path: undefined when the workspace or team does not exist, or the caller may not ask — owners
 * and workspace admins for a workspace, owners and those who act through the team for a team.
 */
export interface Explain {
  (query: ExplainUserQuery): Promise<UserExplanation | undefined>
  (query: ExplainWorkspaceQuery): Promise<TeamExplanation[] | undefined>
  (query: ExplainTeamQuery): Promise<{ rows: TeamExplanation[], total: number } | undefined>
}

export function explainer (repository: EffectiveAccessRepository): Explain {
  async function explain (query: ExplainUserQuery): Promise<UserExplanation | undefined>
  async function explain (query: ExplainWorkspaceQuery): Promise<TeamExplanation[] | undefined>
  async function explain (query: ExplainTeamQuery): Promise<{ rows: TeamExplanation[], total: number } | undefined>
  async function explain (query: ExplainQuery): Promise<UserExplanation | TeamExplanation[] | { rows: TeamExplanation[], total: number } | undefined> {
    if ('teamId' in query) return await repository.ofTeam(query.caller, query.teamId, query.page)
    if ('username' in query) return await repository.ofUser(query.caller, query.workspaceId, query.username)
    return await repository.ofWorkspace(query.caller, query.workspaceId)
  }
  return explain
}
