import { randomUUID } from 'node:crypto'
import type { ValidateFunction } from 'ajv'
import { sql, type Kysely, type Selectable, type Transaction, type Updateable } from 'kysely'
import type { Static, TSchema } from '@sinclair/typebox'
import type { Visibility } from '../../schemas/common.js'
import { DIRECTORY_SCHEMAS } from '../../schemas/directory.js'
import { recordDirectoryEvents, tokenEvents } from '../audit/audit-record.js'
import { tokenDigest } from '../auth/token-digest.js'
import type { Database, ManagedBy, TeamTable } from '../db/database.js'
import { DirectoryWriter, type DirectoryChangeSource } from './removals.js'
import { impossibleId, newId } from '../db/ids.js'
import {
  ORGANIZATION_ACCESS_COLUMN_NAMES, organizationAccessColumns, organizationAccessOf,
  type OrganizationAccess, type OrganizationAccessColumn, type OrganizationAccessFlag
} from '../access/organization-access.js'
import { newTokenSecret } from '../auth/token-secret.js'
import { inSchema } from '../db/tables.js'
import { createAjv, errorMessage, errorPointer } from '../validation.js'

/**
 * The host's directory (DESIGN §9.1): the embedding app creates, changes and removes its
 * organizations, users, teams, memberships, workspaces and tokens one at a time. Each call is one
 * transaction, with the cascades of a removal and the audit events of §9.5 (System, the call's
 * `actor`, default `host`), through the removals the seed uses (src/db/directory-writer.ts).
 * Rows it creates are managed by the host: no seed removes them. The host is trusted code: it may
 * change or remove any row, a seed's or the API's included; a change keeps the row's source.
 */

/** Why a directory call changed nothing. */
export type DirectoryErrorCode = 'not-found' | 'conflict' | 'invalid'

/**
 * A directory call that changed nothing: `not-found` (an id names no row), `conflict` (a name,
 * username, id or secret already taken), `invalid` (bad input, or a rule of the owners team).
 */
export class DirectoryError extends Error {
  constructor (readonly code: DirectoryErrorCode, message: string) {
    super(message)
    this.name = 'DirectoryError'
  }
}

/** Every call's last, optional argument: who is acting and the request, as the audit events record them. */
export interface DirectoryCallOptions {
  /** The accessor's description in the audit events (`auth.type` `System`); default `host`. */
  actor?: string | undefined
  /** The request id the audit events carry; default a new random UUID. */
  requestId?: string | undefined
}

export interface DirectoryOrganization {
  id: string
  name: string
  managedBy: ManagedBy
  createdAt: Date
}

export interface DirectoryUser {
  id: string
  username: string
  managedBy: ManagedBy
  createdAt: Date
}

export interface DirectoryTeam {
  id: string
  organizationId: string
  name: string
  visibility: Visibility
  /** The organization's owners team. */
  owners: boolean
  /** Every flag, by its wire name. */
  organizationAccess: OrganizationAccess
  ssoTeamId: string | null
  allowMemberTokenManagement: boolean
  managedBy: ManagedBy
  createdAt: Date
}

export interface DirectoryMembership {
  teamId: string
  userId: string
  managedBy: ManagedBy
}

export interface DirectoryWorkspace {
  id: string
  organizationId: string
  name: string
  managedBy: ManagedBy
  createdAt: Date
}

/** A new token: its id, and its secret — the only time it is seen (only its digest is stored). */
export interface DirectoryToken {
  id: string
  secret: string
}

/** Organization-access flags by their wire names (`manage-workspaces`, …); absent or undefined: not given. */
export type OrganizationAccessInput = { [flag in OrganizationAccessFlag]?: boolean | undefined }

export interface NewOrganization {
  /** URL-safe, unique. */
  name: string
  /** An explicit id (`org-…`); generated when absent. */
  id?: string | undefined
}
export interface OrganizationChange { name?: string | undefined }

export interface NewUser {
  /** Unique. */
  username: string
  /** An explicit id (`user-…`); generated when absent. */
  id?: string | undefined
}
export interface UserChange { username?: string | undefined }

/** A team's attributes that a change may name; absent (or undefined) ones keep their value. */
export interface TeamChange {
  /** Unique within the organization; the owners team's is fixed. */
  name?: string | undefined
  /** Default `secret`. */
  visibility?: Visibility | undefined
  /** Merged flag by flag; on create, absent flags are false. The owners team has none. */
  organizationAccess?: OrganizationAccessInput | undefined
  /** Kept and answered; null or empty clears it. */
  ssoTeamId?: string | null | undefined
  /** Kept and answered; default true. */
  allowMemberTokenManagement?: boolean | undefined
}

export interface NewTeam extends TeamChange {
  organizationId: string
  name: string
  /** An explicit id (`team-…`); generated when absent. */
  id?: string | undefined
  /** The organization's owners team (at most one per organization). */
  owners?: boolean | undefined
}

export interface Membership {
  teamId: string
  userId: string
}

export interface NewWorkspace {
  organizationId: string
  /** URL-safe, unique within the organization. */
  name: string
  /** An explicit id (`ws-…`); generated when absent. */
  id?: string | undefined
}
export interface WorkspaceChange { name?: string | undefined }

/** Whose token: a team's, an organization's or a user's, by id. */
export type TokenSubject = { teamId: string } | { organizationId: string } | { userId: string }

export interface NewToken {
  /** The bearer secret (8 to 512 characters); generated as the API does when absent. A revoked secret is refused. */
  secret?: string | undefined
  /** Unique per team. */
  description?: string | null | undefined
  /** When the token stops working. */
  expiresAt?: Date | string | null | undefined
}

/** The host's directory functions: `app.teamAccess.directory`, or `directory(db)` in a script. */
export interface Directory {
  /** Creates an organization, managed by the host. */
  createOrganization: (organization: NewOrganization, options?: DirectoryCallOptions) => Promise<DirectoryOrganization>
  /** Renames an organization; a change that changes nothing writes nothing. */
  changeOrganization: (id: string, change: OrganizationChange, options?: DirectoryCallOptions) => Promise<DirectoryOrganization>
  /**
   * Removes an organization and everything in it: its teams (with their memberships, tokens and
   * team access), workspaces and tokens, each removal with its audit events.
   */
  removeOrganization: (id: string, options?: DirectoryCallOptions) => Promise<void>

  /** Creates a user, managed by the host. */
  createUser: (user: NewUser, options?: DirectoryCallOptions) => Promise<DirectoryUser>
  /** Renames a user. */
  changeUser: (id: string, change: UserChange, options?: DirectoryCallOptions) => Promise<DirectoryUser>
  /** Removes a user with its memberships (`remove_member`) and tokens (`destroy`); refused while it is an owners team's last member. */
  removeUser: (id: string, options?: DirectoryCallOptions) => Promise<void>

  /** Creates a team, managed by the host (`create` event). */
  createTeam: (team: NewTeam, options?: DirectoryCallOptions) => Promise<DirectoryTeam>
  /** Changes what `change` names, nothing else (`update` event; none when nothing differs). */
  changeTeam: (id: string, change: TeamChange, options?: DirectoryCallOptions) => Promise<DirectoryTeam>
  /** Removes a team with its memberships, tokens and team access (`remove_team` per row, `destroy`); never the owners team. */
  removeTeam: (id: string, options?: DirectoryCallOptions) => Promise<void>

  /** Adds a user to a team (`add_member`); a present member is left as it is. */
  addMember: (membership: Membership, options?: DirectoryCallOptions) => Promise<DirectoryMembership>
  /** Removes a user from a team (`remove_member`); an absent member is no error; never the owners team's last member. */
  removeMember: (membership: Membership, options?: DirectoryCallOptions) => Promise<void>

  /** Creates a workspace, managed by the host. */
  createWorkspace: (workspace: NewWorkspace, options?: DirectoryCallOptions) => Promise<DirectoryWorkspace>
  /** Renames a workspace. */
  changeWorkspace: (id: string, change: WorkspaceChange, options?: DirectoryCallOptions) => Promise<DirectoryWorkspace>
  /** Removes a workspace with its team access (`remove_team` per row). */
  removeWorkspace: (id: string, options?: DirectoryCallOptions) => Promise<void>

  /** Creates a token of a team, an organization or a user, managed by the host (`create` event); its secret is answered once. */
  createToken: (subject: TokenSubject, token?: NewToken, options?: DirectoryCallOptions) => Promise<DirectoryToken>
  /** Removes a token (`destroy` event): it answers 401 from the next request on, and its secret is revoked for good. */
  removeToken: (id: string, options?: DirectoryCallOptions) => Promise<void>
}

const HOST = 'host' as const

type Trx = Transaction<Database>
type TeamRow = Selectable<TeamTable>

/**
 * The host's directory over a database handle: the plugin's, or a script's own Kysely (of any
 * schema type), its tables in `schema` (default: the one `db` works in, else `team_access`).
 */
export function directory (database: Kysely<any>, options: { schema?: string } = {}): Directory {
  const db = inSchema(database, options.schema)
  /** One call: its input checked, then one transaction; a constraint the database enforces becomes a DirectoryError. */
  const call = async <T>(options: DirectoryCallOptions | undefined, work: (trx: Trx, writer: DirectoryWriter, source: DirectoryChangeSource) => Promise<T>): Promise<T> => {
    const given = validated('CallOptions', options ?? {}, 'options')
    const source: DirectoryChangeSource = {
      by: 'host',
      accessor: { kind: 'system', description: given.actor ?? HOST },
      requestId: given.requestId ?? randomUUID()
    }
    try {
      return await db.transaction().execute(async (trx) => await work(trx, new DirectoryWriter(trx, source), source))
    } catch (err) {
      throw asDirectoryError(err)
    }
  }

  return {
    createOrganization: async (organization, options) => {
      const input = validated('CreateOrganization', organization, 'organization')
      return await call(options, async (trx) => toOrganization(await trx.insertInto('organizations')
        .values({ id: input.id ?? newId('org'), name: input.name, managed_by: HOST })
        .returningAll().executeTakeFirstOrThrow()))
    },

    changeOrganization: async (id, change, options) => {
      const input = validated('ChangeOrganization', change, 'change')
      return await call(options, async (trx) => {
        const row = await lock(trx, 'organizations', id, 'organization')
        if (input.name === undefined || input.name === row.name) return toOrganization(row)
        return toOrganization(await trx.updateTable('organizations').set({ name: input.name }).where('id', '=', row.id)
          .returningAll().executeTakeFirstOrThrow())
      })
    },

    removeOrganization: async (id, options) => {
      await call(options, async (trx, writer) => {
        const row = await lock(trx, 'organizations', id, 'organization')
        const teams = await trx.selectFrom('teams').select('id').where('organization_id', '=', row.id).orderBy('id').forUpdate().execute()
        const workspaces = await trx.selectFrom('workspaces').select('id').where('organization_id', '=', row.id).orderBy('id').forUpdate().execute()
        await writer.removeTeams(teams.map((t) => t.id))
        await writer.removeWorkspaces(workspaces.map((w) => w.id))
        await writer.removeTokens((eb) => eb('organization_id', '=', row.id))
        await trx.deleteFrom('organizations').where('id', '=', row.id).execute()
      })
    },

    createUser: async (user, options) => {
      const input = validated('CreateUser', user, 'user')
      return await call(options, async (trx) => toUser(await trx.insertInto('users')
        .values({ id: input.id ?? newId('user'), username: input.username, managed_by: HOST })
        .returningAll().executeTakeFirstOrThrow()))
    },

    changeUser: async (id, change, options) => {
      const input = validated('ChangeUser', change, 'change')
      return await call(options, async (trx) => {
        const row = await lock(trx, 'users', id, 'user')
        if (input.username === undefined || input.username === row.username) return toUser(row)
        return toUser(await trx.updateTable('users').set({ username: input.username }).where('id', '=', row.id)
          .returningAll().executeTakeFirstOrThrow())
      })
    },

    removeUser: async (id, options) => {
      await call(options, async (trx, writer) => {
        const row = await lock(trx, 'users', id, 'user')
        const owners = await trx.selectFrom('team_memberships as m').innerJoin('teams as t', 't.id', 'm.team_id')
          .innerJoin('organizations as o', 'o.id', 't.organization_id')
          .select(['t.id', 'o.name as organization'])
          .where('m.user_id', '=', row.id).where('t.is_owners', '=', true).forUpdate('t').execute()
        for (const team of owners) {
          if (await memberCount(trx, team.id) <= 1) {
            throw new DirectoryError('invalid', `user "${row.username}" is the last member of the owners team of organization "${team.organization}": an organization always keeps an owner`)
          }
        }
        await writer.removeUsers([row.id])
      })
    },

    createTeam: async (team, options) => {
      const input = validated('CreateTeam', team, 'team')
      const flags = organizationAccessColumns(input.organizationAccess ?? {})
      if (input.owners === true && Object.values(flags).some((value) => value)) {
        throw new DirectoryError('invalid', 'the owners team has no organization-access flags')
      }
      return await call(options, async (trx, _writer, source) => {
        await lock(trx, 'organizations', input.organizationId, 'organization', 'share')
        const values = {
          id: input.id ?? newId('team'),
          organization_id: input.organizationId,
          name: input.name,
          visibility: input.visibility ?? 'secret',
          is_owners: input.owners ?? false,
          ...Object.fromEntries(ORGANIZATION_ACCESS_COLUMN_NAMES.map((column) => [column, false])),
          ...flags,
          sso_team_id: ssoTeamId(input.ssoTeamId) ?? null,
          allow_member_token_management: input.allowMemberTokenManagement ?? true,
          managed_by: HOST
        }
        return toTeam(await trx
          .with('written', (qc) => qc.insertInto('teams').values(values).returningAll())
          .with('events', (qc) => qc.selectFrom('written')
            .select(['written.organization_id', 'written.id as resource_id', sql<string>`jsonb_build_object('team', written.name)`.as('meta')]))
          .with('audit', (qc) => recordDirectoryEvents(qc, 'events', { resourceType: 'team', action: 'create', ...source }))
          .selectFrom('written').selectAll().executeTakeFirstOrThrow())
      })
    },

    changeTeam: async (id, change, options) => {
      const input = validated('ChangeTeam', change, 'change')
      return await call(options, async (trx, _writer, source) => {
        const row = await lock(trx, 'teams', id, 'team')
        const wanted: Updateable<TeamTable> = {
          ...(input.name === undefined ? {} : { name: input.name }),
          ...(input.visibility === undefined ? {} : { visibility: input.visibility }),
          ...organizationAccessColumns(input.organizationAccess ?? {}),
          ...(input.ssoTeamId === undefined ? {} : { sso_team_id: ssoTeamId(input.ssoTeamId) ?? null }),
          ...(input.allowMemberTokenManagement === undefined ? {} : { allow_member_token_management: input.allowMemberTokenManagement })
        }
        // only what differs is written: a change that changes nothing writes nothing and records nothing
        const set = Object.fromEntries(Object.entries(wanted).filter(([column, value]) => row[column as keyof TeamRow] !== value)) as Updateable<TeamTable>
        if (Object.keys(set).length === 0) return toTeam(row)
        if (row.is_owners && set.name !== undefined) throw new DirectoryError('invalid', `the owners team "${row.name}" cannot be renamed`)
        if (row.is_owners && ORGANIZATION_ACCESS_COLUMN_NAMES.some((column) => column in set)) {
          throw new DirectoryError('invalid', `the owners team "${row.name}" has no organization-access flags`)
        }
        return toTeam(await trx
          .with('written', (qc) => qc.updateTable('teams').set(set).where('id', '=', row.id).returningAll())
          .with('events', (qc) => qc.selectFrom('written')
            .select(['written.organization_id', 'written.id as resource_id', sql<string>`jsonb_build_object('team', written.name)`.as('meta')]))
          .with('audit', (qc) => recordDirectoryEvents(qc, 'events', { resourceType: 'team', action: 'update', ...source }))
          .selectFrom('written').selectAll().executeTakeFirstOrThrow())
      })
    },

    removeTeam: async (id, options) => {
      await call(options, async (trx, writer) => {
        // locked first: no team access or member is added to it meanwhile
        const row = await lock(trx, 'teams', id, 'team')
        if (row.is_owners) throw new DirectoryError('invalid', `the owners team "${row.name}" cannot be removed: an organization always keeps an owner (remove the organization instead)`)
        await writer.removeTeams([row.id])
      })
    },

    addMember: async (membership, options) => {
      const input = validated('Membership', membership, 'membership')
      return await call(options, async (trx, _writer, source) => {
        await lock(trx, 'teams', input.teamId, 'team', 'share')
        await lock(trx, 'users', input.userId, 'user', 'share')
        const added = await trx
          .with('inserted', (qc) => qc.insertInto('team_memberships').values({ team_id: input.teamId, user_id: input.userId, managed_by: HOST })
            .onConflict((oc) => oc.columns(['team_id', 'user_id']).doNothing()).returningAll())
          .with('events', (qc) => qc.selectFrom('inserted').innerJoin('teams as t', 't.id', 'inserted.team_id').innerJoin('users as u', 'u.id', 'inserted.user_id')
            .select(['t.organization_id', 't.id as resource_id', sql<string>`jsonb_build_object('team', t.name, 'user', u.username)`.as('meta')]))
          .with('audit', (qc) => recordDirectoryEvents(qc, 'events', { resourceType: 'team', action: 'add_member', ...source }))
          .selectFrom('inserted').selectAll().executeTakeFirst()
        const row = added ?? await trx.selectFrom('team_memberships').selectAll()
          .where('team_id', '=', input.teamId).where('user_id', '=', input.userId).executeTakeFirstOrThrow()
        return { teamId: row.team_id, userId: row.user_id, managedBy: row.managed_by }
      })
    },

    removeMember: async (membership, options) => {
      const input = validated('Membership', membership, 'membership')
      await call(options, async (trx, writer) => {
        // the team is locked: concurrent removals cannot each leave "one other" owner
        const team = await lock(trx, 'teams', input.teamId, 'team')
        const user = await lock(trx, 'users', input.userId, 'user', 'share')
        const present = await trx.selectFrom('team_memberships').select('user_id')
          .where('team_id', '=', team.id).where('user_id', '=', user.id).executeTakeFirst()
        if (present === undefined) return
        if (team.is_owners && await memberCount(trx, team.id) <= 1) {
          throw new DirectoryError('invalid', `user "${user.username}" is the last member of the owners team "${team.name}": an organization always keeps an owner`)
        }
        await writer.removeMemberships((eb) => eb.and([eb('team_id', '=', team.id), eb('user_id', '=', user.id)]))
      })
    },

    createWorkspace: async (workspace, options) => {
      const input = validated('CreateWorkspace', workspace, 'workspace')
      return await call(options, async (trx) => {
        await lock(trx, 'organizations', input.organizationId, 'organization', 'share')
        return toWorkspace(await trx.insertInto('workspaces')
          .values({ id: input.id ?? newId('ws'), organization_id: input.organizationId, name: input.name, managed_by: HOST })
          .returningAll().executeTakeFirstOrThrow())
      })
    },

    changeWorkspace: async (id, change, options) => {
      const input = validated('ChangeWorkspace', change, 'change')
      return await call(options, async (trx) => {
        const row = await lock(trx, 'workspaces', id, 'workspace')
        if (input.name === undefined || input.name === row.name) return toWorkspace(row)
        return toWorkspace(await trx.updateTable('workspaces').set({ name: input.name }).where('id', '=', row.id)
          .returningAll().executeTakeFirstOrThrow())
      })
    },

    removeWorkspace: async (id, options) => {
      await call(options, async (trx, writer) => {
        const row = await lock(trx, 'workspaces', id, 'workspace')
        await writer.removeWorkspaces([row.id])
      })
    },

    createToken: async (subject, token, options) => {
      const who = validated('TokenSubject', subject, 'subject')
      const expiresAt = token?.expiresAt instanceof Date ? isoDate(token.expiresAt) : token?.expiresAt
      const input = validated('CreateToken', { ...token, expiresAt }, 'token')
      const secret = input.secret ?? newTokenSecret()
      const digest = tokenDigest(secret)
      return await call(options, async (trx, _writer, source) => {
        const [kind, subjectId] = 'teamId' in who
          ? ['team', (await lock(trx, 'teams', who.teamId, 'team', 'share')).id] as const
          : 'organizationId' in who
            ? ['organization', (await lock(trx, 'organizations', who.organizationId, 'organization', 'share')).id] as const
            : ['user', (await lock(trx, 'users', who.userId, 'user', 'share')).id] as const
        const revoked = await trx.selectFrom('revoked_tokens').select('digest').where('digest', '=', digest).executeTakeFirst()
        // never the secret or its digest in a message
        if (revoked !== undefined) throw new DirectoryError('invalid', 'this secret was revoked, and is revoked for good: use another')
        const created = await trx
          .with('inserted', (qc) => qc.insertInto('tokens').values({
            id: newId('at'),
            kind,
            organization_id: kind === 'organization' ? subjectId : null,
            team_id: kind === 'team' ? subjectId : null,
            user_id: kind === 'user' ? subjectId : null,
            digest,
            expires_at: input.expiresAt == null ? null : new Date(input.expiresAt),
            description: input.description ?? null,
            managed_by: HOST
          }).returning(['id', 'kind', 'organization_id', 'team_id', 'user_id']))
          .with('events', (qc) => qc.selectFrom(tokenEvents('inserted').as('e')).selectAll())
          .with('audit', (qc) => recordDirectoryEvents(qc, 'events', { resourceType: 'authentication-token', action: 'create', ...source }))
          .selectFrom('inserted').select('inserted.id').executeTakeFirstOrThrow()
        return { id: created.id, secret }
      })
    },

    removeToken: async (id, options) => {
      await call(options, async (trx, writer) => {
        const row = await lock(trx, 'tokens', id, 'token')
        await writer.removeTokens((eb) => eb('id', '=', row.id))
      })
    }
  }
}

type Locked = 'organizations' | 'users' | 'teams' | 'workspaces' | 'tokens'

/**
 * The row `id` of `table`, locked for the rest of the call (`update`: the call changes or removes
 * it; `share`: the call adds to it, and keeps it from going meanwhile). Not-found when there is none.
 */
async function lock<T extends Locked> (trx: Trx, table: T, id: string, what: string, mode: 'update' | 'share' = 'update'): Promise<Selectable<Database[T]>> {
  if (typeof id !== 'string' || id === '' || impossibleId(id)) throw notFound(what, id)
  const query = trx.selectFrom(table as 'teams').selectAll().where('id', '=', id)
  const row = await (mode === 'update' ? query.forUpdate() : query.forKeyShare()).executeTakeFirst()
  if (row === undefined) throw notFound(what, id)
  return row as unknown as Selectable<Database[T]>
}

const notFound = (what: string, id: unknown) => new DirectoryError('not-found', `no ${what} with id ${JSON.stringify(id)}`)

async function memberCount (trx: Trx, teamId: string): Promise<number> {
  const { count } = await trx.selectFrom('team_memberships').select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('team_id', '=', teamId).executeTakeFirstOrThrow()
  return Number(count)
}

/** An empty sso-team-id clears it, as the API does. */
const ssoTeamId = (value: string | null | undefined): string | null | undefined => value === '' ? null : value

function isoDate (date: Date): string {
  if (Number.isNaN(date.getTime())) throw new DirectoryError('invalid', 'token › expiresAt: is not a valid date')
  return date.toISOString()
}

// ---- validation: the TypeBox schemas of schemas/directory.ts, compiled once, on first use ----

type SchemaName = keyof typeof DIRECTORY_SCHEMAS
type Input<N extends SchemaName> = Static<typeof DIRECTORY_SCHEMAS[N]>

const validators = new Map<SchemaName, ValidateFunction>()
let ajv: ReturnType<typeof createAjv> | undefined

/**
 * The input, its undefined members dropped (absent and undefined mean the same), if the schema
 * accepts it; else a DirectoryError `invalid` naming what is wrong — for every call of the host's,
 * the directory's and the plugin's questions (src/plugin.ts) alike, so that no bad argument reaches
 * a statement.
 */
export function validated<N extends SchemaName> (name: N, value: unknown, what: string): Input<N> {
  let validate = validators.get(name)
  if (validate === undefined) {
    ajv ??= createAjv()
    validate = ajv.compile(DIRECTORY_SCHEMAS[name] as TSchema)
    validators.set(name, validate)
  }
  const input = withoutUndefined(value)
  if (!validate(input)) {
    const error = validate.errors![0]!
    const at = errorPointer(error).split('/').filter((part) => part !== '').join(' › ')
    throw new DirectoryError('invalid', `${what}${at === '' ? '' : ` › ${at}`}: ${errorMessage(error)}`)
  }
  return input as Input<N>
}

function withoutUndefined (value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Date) return value
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).map(([k, v]) => [k, withoutUndefined(v)]))
}

// ---- rows → the small objects the host gets ----

function toOrganization (row: Selectable<Database['organizations']>): DirectoryOrganization {
  return { id: row.id, name: row.name, managedBy: row.managed_by, createdAt: row.created_at }
}

function toUser (row: Selectable<Database['users']>): DirectoryUser {
  return { id: row.id, username: row.username, managedBy: row.managed_by, createdAt: row.created_at }
}

function toWorkspace (row: Selectable<Database['workspaces']>): DirectoryWorkspace {
  return { id: row.id, organizationId: row.organization_id, name: row.name, managedBy: row.managed_by, createdAt: row.created_at }
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

// ---- database errors → DirectoryError ----

/** What a unique constraint (or index) keeps unique, for a conflict's message. */
const UNIQUE: Record<string, string> = {
  organizations_pkey: 'an organization with this id already exists',
  organizations_name_key: 'an organization with this name already exists',
  users_pkey: 'a user with this id already exists',
  users_username_key: 'a user with this username already exists',
  teams_pkey: 'a team with this id already exists',
  teams_organization_name_key: 'the organization already has a team with this name',
  teams_one_owners_team: 'the organization already has an owners team',
  workspaces_pkey: 'a workspace with this id already exists',
  workspaces_organization_name_key: 'the organization already has a workspace with this name',
  tokens_pkey: 'a token with this id already exists',
  tokens_digest_key: 'this secret is already the secret of another token',
  tokens_team_description_key: 'the team already has a token with this description'
}

/**
 * A unique violation is a conflict, named by what it keeps unique (never with the row's values:
 * a token's would be its digest); a row that went while the call waited for it (a foreign key
 * finds nothing) is not found. Anything else is thrown as it is.
 */
function asDirectoryError (err: unknown): unknown {
  if (err instanceof DirectoryError) return err
  const e = err as { code?: unknown, constraint?: unknown, message?: unknown } | null
  if (e === null || typeof e !== 'object') return err
  const constraint = typeof e.constraint === 'string'
    ? e.constraint
    : Object.keys(UNIQUE).find((name) => typeof e.message === 'string' && e.message.includes(`"${name}"`))
  if (e.code === '23505') return new DirectoryError('conflict', (constraint === undefined ? undefined : UNIQUE[constraint]) ?? 'conflicts with an existing row')
  if (e.code === '23503') return new DirectoryError('not-found', 'a row this call refers to is gone')
  return err
}
