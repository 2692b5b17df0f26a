import { prerequisiteMessage, type OrganizationAccessFlag } from '../access/organization-access.js'
import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type Selectable } from 'kysely'
import { organizationAccessColumns, organizationAccessOf, type OrganizationAccessColumn } from '../access/organization-access.js'
import { newTokenSecret } from '../auth/token-secret.js'
import type { Database } from '../db/database.js'
import { impossibleId } from '../db/ids.js'
import { inSchema } from '../db/tables.js'
import { asDirectoryError, DirectoryError, notFound, UNIQUE } from './errors.js'
import { isoDate, validated } from './host-input.js'
import type {
  Directory, DirectoryCallOptions, DirectoryOrganization, DirectoryProject, DirectoryTeam, DirectoryUser, DirectoryWorkspace, TeamChange
} from './host-types.js'
import { changeProject, createProject, PROJECT_ROW, removeProject, type ProjectRefusal } from './projects.js'
import { renameRow } from './locks.js'
import { addMembers, removeMembers, type MembersRefusal } from './memberships.js'
import { changeUser, createOrganization, createUser, removeOrganization, removeUser } from './organizations.js'
import { hostMemberships } from './host-memberships.js'
import type { ChangeSource } from './source.js'
import { changeTeam, createTeam, removeTeam, TEAM_ROW, type TeamRefusal, type TeamValues } from './teams.js'
import { createToken, revokeTokens, subjectOf, subjectOfToken, type TokenSubject } from './tokens.js'
import { changeWorkspace, createWorkspace, removeWorkspace, WORKSPACE_ROW, type WorkspaceRefusal } from './workspaces.js'

export { DirectoryError, validated }
export type * from './host-types.js'
export type { DirectoryErrorCode } from './errors.js'

/**
 * The host's directory (DESIGN §9.1): the embedding app creates, changes and removes its
 * organizations, users (and their emails), teams, memberships (a team's, and an organization's:
 * DESIGN §14.2, src/directory/host-memberships.ts), workspaces and tokens one at a time — a typed façade
 * over the directory's changes (src/directory/), asked by the host: each call checks its input
 * (schemas/directory.ts), then runs one transaction, with the cascades of a removal and the audit
 * events (System, the call's `actor`, default `host`) every source records. Rows it creates are
 * managed by the host: no seed removes them. The host is trusted code: it may change or remove any
 * row, a seed's or the API's included; a change keeps the row's source. What a change refuses
 * becomes a DirectoryError (`not-found`, `conflict`, `invalid`).
 */
export function directory (database: Kysely<any>, options: { schema?: string } = {}): Directory {
  const db = inSchema(database, options.schema)
  /** One call: its input checked, then one transaction; a constraint the database enforces becomes a DirectoryError. */
  const call = async <T>(options: DirectoryCallOptions | undefined, work: (trx: Kysely<Database>, source: ChangeSource) => Promise<T>): Promise<T> => {
    const given = validated('CallOptions', options ?? {}, 'options')
    const source: ChangeSource = { by: 'host', actor: given.actor ?? 'host', requestId: given.requestId ?? randomUUID() }
    try {
      return await db.transaction().execute(async (trx) => await work(trx, source))
    } catch (err) {
      throw asDirectoryError(err)
    }
  }
  const found = <T>(row: T | undefined, what: string, id: string): T => {
    if (row === undefined) throw notFound(what, id)
    return row
  }
  /** An id no row can have (empty, not a string, a NUL, too long) names nothing: not found, before any statement. */
  const possible = (id: string, what: string): string => {
    if (typeof id !== 'string' || id === '' || impossibleId(id)) throw notFound(what, id)
    return id
  }
  /** A rename of an organization or a workspace: written only when the name differs. */
  const rename = <T extends 'organizations' | 'workspaces', R>(schema: 'ChangeOrganization' | 'ChangeWorkspace', table: T, what: string,
    to: (row: Selectable<Database[T]>) => R) => async (id: string, change: unknown, options?: DirectoryCallOptions): Promise<R> => {
      const input = validated(schema, change, 'change') as { name?: string }
      return await call(options, async (trx) => to(found(await renameRow(trx, table, id, 'name' as T extends 'users' ? 'username' : 'name', input.name), what, id)))
    }

  return {
    createOrganization: async (organization, options) => {
      const input = validated('CreateOrganization', organization, 'organization')
      return await call(options, async (trx, source) => toOrganization(await createOrganization(trx, source, input)))
    },
    changeOrganization: rename('ChangeOrganization', 'organizations', 'organization', toOrganization),
    removeOrganization: async (id, options) => {
      await call(options, async (trx, source) => found(await removeOrganization(trx, source, id) || undefined, 'organization', id))
    },

    createUser: async (user, options) => {
      const input = validated('CreateUser', user, 'user')
      return await call(options, async (trx, source) => toUser(await createUser(trx, source, input)))
    },
    changeUser: async (id, change, options) => {
      const input = validated('ChangeUser', change, 'change')
      return await call(options, async (trx, source) => toUser(found(await changeUser(trx, source, possible(id, 'user'), input), 'user', id)))
    },
    removeUser: async (id, options) => {
      await call(options, async (trx, source) => {
        const result = await removeUser(trx, source, id)
        if (result.lastOwnerOf !== undefined) {
          const { username, organization } = result.lastOwnerOf
          throw new DirectoryError('invalid', `user "${username}" is the last member of the owners team of organization "${organization}": an organization always keeps an owner`)
        }
        found(result.removed || undefined, 'user', id)
      })
    },
    ...hostMemberships(call, possible),

    createTeam: async (team, options) => {
      const input = validated('CreateTeam', team, 'team')
      if (input.owners === true && Object.values(organizationAccessColumns(input.organizationAccess ?? {})).some((value) => value)) {
        throw new DirectoryError('invalid', 'the owners team has no organization-access flags')
      }
      return await call(options, async (trx, source) => toTeam(teamOf(await createTeam<TeamRow>(trx, source, { id: input.organizationId },
        { ...teamValues(input), name: input.name, ...(input.id === undefined ? {} : { id: input.id }), owners: input.owners ?? false }, TEAM_ROW), 'organization', input.organizationId)))
    },
    changeTeam: async (id, change, options) => {
      const input = validated('ChangeTeam', change, 'change')
      return await call(options, async (trx, source) => toTeam(teamOf(await changeTeam<TeamRow>(trx, source, possible(id, 'team'), teamValues(input), TEAM_ROW), 'team', id)))
    },
    removeTeam: async (id, options) => {
      await call(options, async (trx, source) => teamOf(await removeTeam(trx, source, possible(id, 'team')), 'team', id,
        (name) => `the owners team "${name}" cannot be removed: an organization always keeps an owner (remove the organization instead)`))
    },

    addMember: async (membership, options) => {
      const input = validated('Membership', membership, 'membership')
      return await call(options, async (trx, source) => {
        const added = await addMembers(trx, source, input.teamId, { ids: [input.userId] })
        if ('reason' in added) throw membersRefusal(added, input)
        // a membership another call added meanwhile is not in this statement's snapshot: read it now
        const managedBy = added.managedBy ?? (await trx.selectFrom('team_memberships').select('managed_by')
          .where('team_id', '=', input.teamId).where('user_id', '=', input.userId).executeTakeFirstOrThrow()).managed_by
        return { teamId: input.teamId, userId: input.userId, managedBy }
      })
    },
    removeMember: async (membership, options) => {
      const input = validated('Membership', membership, 'membership')
      await call(options, async (trx, source) => {
        const refusal = await removeMembers(trx, source, input.teamId, { ids: [input.userId] })
        if (refusal !== undefined) throw membersRefusal(refusal, input)
      })
    },

    createWorkspace: async (workspace, options) => {
      const { projectId, ...input } = validated('CreateWorkspace', workspace, 'workspace')
      return await call(options, async (trx, source) => {
        const created = await createWorkspace<WorkspaceRow>(trx, source, { id: input.organizationId }, { ...input, ...(projectId === undefined ? {} : { projectId }) }, WORKSPACE_ROW)
        if ('workspace' in created) return toWorkspace(created.workspace)
        // nothing to create in: the organization, or the project in it, is not there
        if (created.refusal === 'hidden' && await trx.selectFrom('organizations').select('id').where('id', '=', input.organizationId).executeTakeFirst() === undefined) throw notFound('organization', input.organizationId)
        throw workspaceRefusal(created.refusal === 'hidden' ? 'project' : created.refusal, input.organizationId, projectId)
      })
    },
    changeWorkspace: async (id, change, options) => {
      const { name, projectId } = validated('ChangeWorkspace', change, 'change')
      // renamed and moved in one statement, with its update event
      return await call(options, async (trx, source) => {
        const changed = await changeWorkspace<WorkspaceRow>(trx, source, { id: possible(id, 'workspace') }, { ...(name === undefined ? {} : { name }), ...(projectId === undefined ? {} : { projectId }) }, WORKSPACE_ROW)
        if ('workspace' in changed) return toWorkspace(changed.workspace)
        throw workspaceRefusal(changed.refusal, id, projectId)
      })
    },
    removeWorkspace: async (id, options) => {
      await call(options, async (trx, source) => {
        const { refusal } = await removeWorkspace(trx, source, { id: possible(id, 'workspace') })
        if (refusal !== undefined) throw workspaceRefusal(refusal, id)
      })
    },

    createProject: async (project, options) => {
      const input = validated('CreateProject', project, 'project')
      return await call(options, async (trx, source) => toProject(projectOf(await createProject<ProjectRow>(trx, source, { id: input.organizationId }, input, PROJECT_ROW), 'organization', input.organizationId)))
    },
    changeProject: async (id, change, options) => {
      const input = validated('ChangeProject', change, 'change')
      return await call(options, async (trx, source) => toProject(projectOf(await changeProject<ProjectRow>(trx, source, possible(id, 'project'), input, PROJECT_ROW), 'project', id)))
    },
    removeProject: async (id, options) => {
      await call(options, async (trx, source) => projectOf(await removeProject(trx, source, possible(id, 'project')), 'project', id))
    },

    createToken: async (subject, token, options) => {
      const who = validated('TokenSubject', subject, 'subject')
      const expiresAt = token?.expiresAt instanceof Date ? isoDate(token.expiresAt) : token?.expiresAt
      const input = validated('CreateToken', { ...token, expiresAt }, 'token')
      const secret = input.secret ?? newTokenSecret()
      const [of, what, id]: [TokenSubject, string, string] = 'teamId' in who
        ? [{ kind: 'team', teamId: who.teamId }, 'team', who.teamId]
        : 'organizationId' in who
          ? [{ kind: 'organization', organizationId: who.organizationId }, 'organization', who.organizationId]
          : [{ kind: 'user', userId: who.userId }, 'user', who.userId]
      return await call(options, async (trx, source) => {
        const result = await createToken(trx, source, subjectOf(source, of),
          { secret, description: input.description ?? null, expiresAt: input.expiresAt == null ? null : new Date(input.expiresAt) })
        // never the secret or its digest in a message
        if (result.created !== undefined) return { id: result.created.id, secret }
        if (result.revoked) throw new DirectoryError('invalid', 'this secret was revoked, and is revoked for good: use another')
        if (result.taken) throw new DirectoryError('conflict', UNIQUE.tokens_team_description_key!)
        throw notFound(what, id)
      })
    },
    removeToken: async (id, options) => {
      await call(options, async (trx, source) => {
        const revoked = await revokeTokens(trx, source, subjectOfToken(source, possible(id, 'token')), sql<boolean>`tk.id = s.token_id`)
        found(revoked[0], 'token', id)
      })
    }
  }
}

type TeamRow = Selectable<Database['teams']>

/** A team change's input as the directory takes it: an empty sso-team-id clears it, as the API's does. */
const teamValues = (input: TeamChange): TeamValues => ({
  ...(input.name === undefined ? {} : { name: input.name }),
  ...(input.visibility === undefined ? {} : { visibility: input.visibility }),
  organizationAccess: Object.fromEntries(Object.entries(input.organizationAccess ?? {}).filter(([, value]) => value !== undefined)),
  ...(input.ssoTeamId === undefined ? {} : { ssoTeamId: input.ssoTeamId === '' ? null : input.ssoTeamId }),
  ...(input.allowMemberTokenManagement === undefined ? {} : { allowMemberTokenManagement: input.allowMemberTokenManagement })
})

/**
 * A team change's answer for the host: the row, or its refusal as a DirectoryError (`hidden`: `what`
 * `id` is not there; `owners`: what `owners` says of the owners team, by its name).
 */
function teamOf<T> (result: { team: T } | { refusal?: TeamRefusal, name?: string }, what: string, id: string,
  owners = (name: string) => `the owners team "${name}" cannot be renamed, and has no organization-access flags`): T {
  if ('team' in result) return result.team
  switch (result.refusal) {
    case undefined: return undefined as T
    case 'hidden': throw notFound(what, id)
    case 'taken': throw new DirectoryError('conflict', UNIQUE.teams_organization_name_key!)
    case 'prerequisite': throw new DirectoryError('invalid', prerequisiteMessage(result.name as OrganizationAccessFlag))
    default: throw new DirectoryError('invalid', owners(result.name ?? id))
  }
}

function membersRefusal (refusal: MembersRefusal, input: { teamId: string, userId: string }): DirectoryError {
  switch (refusal.reason) {
    case 'hidden': return notFound('team', input.teamId)
    case 'unknown': return notFound('user', input.userId)
    case 'last-owner': return new DirectoryError('invalid', `user "${refusal.users.join('", "')}" is the last member of the owners team "${refusal.team}": an organization always keeps an owner`)
    default: return new DirectoryError('invalid', `${refusal.reason}: ${refusal.users.join(', ')}`)
  }
}

// rows → the small objects the host gets

function toOrganization (row: Selectable<Database['organizations']>): DirectoryOrganization {
  return { id: row.id, name: row.name, managedBy: row.managed_by, createdAt: row.created_at }
}

function toUser (row: Selectable<Database['users']>): DirectoryUser {
  return { id: row.id, username: row.username, email: row.email, managedBy: row.managed_by, createdAt: row.created_at }
}

function toWorkspace (row: Selectable<Database['workspaces']>): DirectoryWorkspace {
  return { id: row.id, organizationId: row.organization_id, name: row.name, projectId: row.project_id, managedBy: row.managed_by, createdAt: row.created_at }
}

type ProjectRow = Selectable<Database['projects']>

function toProject (row: ProjectRow): DirectoryProject {
  return { id: row.id, organizationId: row.organization_id, name: row.name, description: row.description, isDefault: row.is_default, managedBy: row.managed_by, createdAt: row.created_at }
}

type WorkspaceRow = Selectable<Database['workspaces']>

/** A workspace change's refusal for the host (which may change what any source manages): not found, or a name taken. */
function workspaceRefusal (refusal: WorkspaceRefusal, id: string, projectId?: string): DirectoryError {
  switch (refusal) {
    case 'taken': return new DirectoryError('conflict', UNIQUE.workspaces_organization_name_key!)
    case 'project': return notFound('project in the workspace\'s organization', projectId)
    default: return notFound('workspace', id)
  }
}

/** A project change's answer for the host: the row, or its refusal as a DirectoryError. */
function projectOf<T> (result: { project: T } | { refusal?: ProjectRefusal, name?: string, workspaces?: number }, what: string, id: string): T {
  if ('project' in result) return result.project
  switch (result.refusal) {
    case undefined: return undefined as T
    case 'hidden': throw notFound(what, id)
    case 'taken': throw new DirectoryError('conflict', 'the organization already has a project with this name')
    case 'default': throw new DirectoryError('invalid', `the default project "${result.name ?? id}" cannot be removed`)
    case 'holds': throw new DirectoryError('invalid', `project "${result.name ?? id}" still holds ${result.workspaces ?? 'some'} workspace(s): move them first`)
    case 'seed': throw new DirectoryError('invalid', 'managed by the seed file')
  }
}

function toTeam (row: TeamRow): DirectoryTeam {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    visibility: row.visibility,
    owners: row.is_owners,
    organizationAccess: organizationAccessOf(row as Record<OrganizationAccessColumn, boolean>),
    ssoTeamId: row.sso_team_id,
    allowMemberTokenManagement: row.allow_member_token_management,
    managedBy: row.managed_by,
    createdAt: row.created_at
  }
}
