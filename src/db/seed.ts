import type { ValidateFunction } from 'ajv'
import type { Kysely, Transaction } from 'kysely'
import { SeedDocument, type SeedToken } from '../../schemas/seed.js'
import { createAjv, errorMessage, errorPointer } from '../validation.js'
import { customOnlyViolations, permissionsOnAdd, type Permissions } from '../access/permissions.js'
import { tokenDigest } from '../auth/token-digest.js'
import type { Database, TokenKind } from './database.js'
import { newId } from './ids.js'

/** A seed that breaks a rule: `entry` names the offending entry, e.g. `organizations[0] "acme" › teams[2] "red"`. */
export class SeedError extends Error {
  constructor (readonly entry: string, readonly problem: string) {
    super(entry === '' ? problem : `${entry}: ${problem}`)
    this.name = 'SeedError'
  }
}

export interface SeedSummary {
  users: number
  organizations: number
  teams: number
  workspaces: number
  teamAccess: number
  tokens: number
}

// compiled on first use, not on import: a start with nothing to seed does not pay for it (~50 ms)
let validateDocument: ValidateFunction<SeedDocument> | undefined

/**
 * Applies a seed document (DESIGN §6) in one transaction: everything or nothing.
 * Upserts by id, or by name where no id is given, so applying it twice changes nothing.
 */
export async function applySeed (db: Kysely<Database>, document: unknown): Promise<SeedSummary> {
  const seed = validateSeed(document)
  return await db.transaction().execute((trx) => new SeedWriter(trx).write(seed))
}

export function validateSeed (document: unknown): SeedDocument {
  validateDocument ??= createAjv().compile<SeedDocument>(SeedDocument)
  if (!validateDocument(document)) {
    const error = validateDocument.errors![0]!
    throw new SeedError(pointerToEntry(document, errorPointer(error)), errorMessage(error))
  }
  checkDuplicates(document)
  return document
}

/** Turns `/organizations/0/teams/2` into `organizations[0] "acme" › teams[2] "red"`, naming entries by their names. */
function pointerToEntry (document: unknown, pointer: string): string {
  const parts: string[] = []
  let node: any = document
  const segments = pointer.split('/').slice(1)
  for (let i = 0; i < segments.length; i++) {
    const key = segments[i]!.replace(/~1/g, '/').replace(/~0/g, '~')
    const next = segments[i + 1]
    if (next !== undefined && /^\d+$/.test(next)) {
      const item = node?.[key]?.[Number(next)]
      parts.push(`${key}[${next}]${labelOf(item)}`)
      node = item
      i++
    } else {
      parts.push(key)
      node = node?.[key]
    }
  }
  return parts.join(' › ')
}

function labelOf (item: unknown): string {
  if (typeof item === 'string') return ` "${item}"`
  if (item === null || typeof item !== 'object') return ''
  const entry = item as Record<string, unknown>
  const name = entry.name ?? entry.username ?? (entry.team !== undefined ? `${String(entry.team)} on ${String(entry.workspace)}` : undefined)
  return typeof name === 'string' ? ` "${name}"` : ''
}

const entry = (list: string, index: number, item: unknown, parent = ''): string =>
  `${parent === '' ? '' : `${parent} › `}${list}[${index}]${labelOf(item)}`

/** The rules a schema cannot say: names and secrets that must be unique within the document. */
function checkDuplicates (seed: SeedDocument): void {
  const secrets = new Map<string, string>()
  const once = <T>(items: T[] | undefined, list: string, key: (item: T) => string | undefined, what: string, parent = '') => {
    const seen = new Set<string>()
    items?.forEach((item, i) => {
      const k = key(item)
      if (k === undefined) return
      if (seen.has(k)) throw new SeedError(entry(list, i, item, parent), `duplicate ${what}`)
      seen.add(k)
    })
  }
  const tokensOnce = (tokens: SeedToken[] | undefined, where: string) => tokens?.forEach((token, i) => {
    const secret = typeof token === 'string' ? token : token.token
    const first = secrets.get(secret)
    if (first !== undefined) throw new SeedError(`${where} › tokens[${i}]`, `token already given to ${first}`)
    secrets.set(secret, where)
  })
  once(seed.users, 'users', (u) => u.username, 'username')
  once(seed.users, 'users', (u) => u.id, 'id')
  seed.users?.forEach((u, i) => tokensOnce(u.tokens, entry('users', i, u)))
  once(seed.organizations, 'organizations', (o) => o.name, 'organization name')
  once(seed.organizations, 'organizations', (o) => o.id, 'id')
  seed.organizations?.forEach((org, i) => {
    const where = entry('organizations', i, org)
    tokensOnce(org.tokens, where)
    once(org.teams, 'teams', (t) => t.name, 'team name', where)
    once(org.teams, 'teams', (t) => t.id, 'id', where)
    once(org.teams, 'teams', (t) => (t.owners === true ? 'owners' : undefined), 'owners team (an organization has one)', where)
    org.teams?.forEach((team, j) => {
      tokensOnce(team.tokens, entry('teams', j, team, where))
      once(team.members?.map((m) => ({ name: m })), 'members', (m) => m.name, 'member', entry('teams', j, team, where))
    })
    once(org.workspaces, 'workspaces', (w) => w.name, 'workspace name', where)
    once(org.workspaces, 'workspaces', (w) => w.id, 'id', where)
    once(org['team-access'], 'team-access', (a) => `${a.team}\u0000${a.workspace}`, 'team access (the team already has access to this workspace)', where)
    once(org['team-access'], 'team-access', (a) => a.id, 'id', where)
    org['team-access']?.forEach((access, j) => {
      const violation = customOnlyViolations(access.access, permissionsOf(access))[0]
      if (violation) throw new SeedError(entry('team-access', j, access, where), violation.detail)
    })
  })
}

function permissionsOf (a: Partial<Permissions>): Partial<Permissions> {
  return {
    runs: a.runs,
    variables: a.variables,
    'state-versions': a['state-versions'],
    'sentinel-mocks': a['sentinel-mocks'],
    'workspace-locking': a['workspace-locking'],
    'run-tasks': a['run-tasks']
  }
}

type Subject = { kind: TokenKind, id: string }

/** Writes a validated seed inside one transaction; every database error is reported against its entry. */
class SeedWriter {
  private readonly summary: SeedSummary = { users: 0, organizations: 0, teams: 0, workspaces: 0, teamAccess: 0, tokens: 0 }
  private readonly userIds = new Map<string, string>()

  constructor (private readonly trx: Transaction<Database>) {}

  async write (seed: SeedDocument): Promise<SeedSummary> {
    for (const [i, user] of (seed.users ?? []).entries()) {
      const where = entry('users', i, user)
      const id = await this.at(where, () => this.trx.insertInto('users')
        .values({ id: user.id ?? newId('user'), username: user.username })
        .onConflict((oc) => oc.column(user.id === undefined ? 'username' : 'id')
          .doUpdateSet((eb) => ({ username: eb.ref('excluded.username') })))
        .returning('id').executeTakeFirstOrThrow())
      this.userIds.set(user.username, id.id)
      this.summary.users++
      await this.tokens(user.tokens, { kind: 'user', id: id.id }, where)
    }
    for (const [i, org] of (seed.organizations ?? []).entries()) {
      await this.organization(org, entry('organizations', i, org))
    }
    return this.summary
  }

  private async organization (org: NonNullable<SeedDocument['organizations']>[number], where: string): Promise<void> {
    const { id: orgId } = await this.at(where, () => this.trx.insertInto('organizations')
      .values({ id: org.id ?? newId('org'), name: org.name })
      .onConflict((oc) => oc.column(org.id === undefined ? 'name' : 'id')
        .doUpdateSet((eb) => ({ name: eb.ref('excluded.name') })))
      .returning('id').executeTakeFirstOrThrow())
    this.summary.organizations++
    await this.tokens(org.tokens, { kind: 'organization', id: orgId }, where)

    const teamIds = new Map<string, string>()
    for (const [j, team] of (org.teams ?? []).entries()) {
      const at = entry('teams', j, team, where)
      const access = team['organization-access'] ?? {}
      const values = {
        organization_id: orgId,
        name: team.name,
        visibility: team.visibility ?? 'secret',
        is_owners: team.owners ?? false,
        manage_workspaces: access['manage-workspaces'] ?? false,
        read_workspaces: access['read-workspaces'] ?? false
      }
      const row = await this.at(at, () => this.trx.insertInto('teams')
        .values({ id: team.id ?? newId('team'), ...values })
        .onConflict((oc) => (team.id === undefined ? oc.columns(['organization_id', 'name']) : oc.column('id'))
          .doUpdateSet(values)
          // an explicit id of another organization's team is not silently moved
          .where('teams.organization_id', '=', orgId))
        .returning('id').executeTakeFirst())
      if (row === undefined) throw new SeedError(at, `id "${team.id!}" belongs to a team of another organization`)
      teamIds.set(team.name, row.id)
      this.summary.teams++
      if (team.members !== undefined) await this.members(row.id, team.members, at)
      await this.tokens(team.tokens, { kind: 'team', id: row.id }, at)
    }

    const workspaceIds = new Map<string, string>()
    for (const [j, ws] of (org.workspaces ?? []).entries()) {
      const at = entry('workspaces', j, ws, where)
      const row = await this.at(at, () => this.trx.insertInto('workspaces')
        .values({ id: ws.id ?? newId('ws'), organization_id: orgId, name: ws.name })
        .onConflict((oc) => (ws.id === undefined ? oc.columns(['organization_id', 'name']) : oc.column('id'))
          .doUpdateSet({ name: ws.name })
          .where('workspaces.organization_id', '=', orgId))
        .returning('id').executeTakeFirst())
      if (row === undefined) throw new SeedError(at, `id "${ws.id!}" belongs to a workspace of another organization`)
      workspaceIds.set(ws.name, row.id)
      this.summary.workspaces++
    }

    for (const [j, grant] of (org['team-access'] ?? []).entries()) {
      const at = entry('team-access', j, grant, where)
      const teamId = teamIds.get(grant.team) ?? await this.idByName('teams', orgId, grant.team)
      if (teamId === undefined) throw new SeedError(at, `no team named "${grant.team}" in organization "${org.name}"`)
      const workspaceId = workspaceIds.get(grant.workspace) ?? await this.idByName('workspaces', orgId, grant.workspace)
      if (workspaceId === undefined) throw new SeedError(at, `no workspace named "${grant.workspace}" in organization "${org.name}"`)
      const p = permissionsOnAdd(grant.access, permissionsOf(grant))
      const values = {
        organization_id: orgId,
        team_id: teamId,
        workspace_id: workspaceId,
        access: grant.access,
        runs: p.runs,
        variables: p.variables,
        state_versions: p['state-versions'],
        sentinel_mocks: p['sentinel-mocks'],
        workspace_locking: p['workspace-locking'],
        run_tasks: p['run-tasks']
      }
      const row = await this.at(at, () => this.trx.insertInto('team_workspaces')
        .values({ id: grant.id ?? newId('tws'), ...values })
        .onConflict((oc) => (grant.id === undefined ? oc.columns(['team_id', 'workspace_id']) : oc.column('id'))
          .doUpdateSet(values)
          .where('team_workspaces.organization_id', '=', orgId))
        .returning('id').executeTakeFirst())
      if (row === undefined) throw new SeedError(at, `id "${grant.id!}" belongs to team access of another organization`)
      this.summary.teamAccess++
    }
  }

  /** Makes `usernames` the team's complete member list. */
  private async members (teamId: string, usernames: string[], where: string): Promise<void> {
    const userIds: string[] = []
    for (const [k, username] of usernames.entries()) {
      const id = this.userIds.get(username) ??
        (await this.trx.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst())?.id
      if (id === undefined) throw new SeedError(`${where} › members[${k}] "${username}"`, `no user named "${username}"`)
      userIds.push(id)
    }
    let stale = this.trx.deleteFrom('team_memberships').where('team_id', '=', teamId)
    if (userIds.length > 0) stale = stale.where('user_id', 'not in', userIds)
    await stale.execute()
    if (userIds.length > 0) {
      await this.trx.insertInto('team_memberships')
        .values(userIds.map((user_id) => ({ team_id: teamId, user_id })))
        .onConflict((oc) => oc.doNothing()).execute()
    }
  }

  private async tokens (tokens: SeedToken[] | undefined, subject: Subject, where: string): Promise<void> {
    for (const [k, token] of (tokens ?? []).entries()) {
      const secret = typeof token === 'string' ? token : token.token
      const expiresAt = typeof token === 'string' || token['expires-at'] === undefined ? null : new Date(token['expires-at'])
      const values = {
        kind: subject.kind,
        organization_id: subject.kind === 'organization' ? subject.id : null,
        team_id: subject.kind === 'team' ? subject.id : null,
        user_id: subject.kind === 'user' ? subject.id : null,
        expires_at: expiresAt
      }
      await this.at(`${where} › tokens[${k}]`, () => this.trx.insertInto('tokens')
        .values({ id: newId('at'), digest: tokenDigest(secret), ...values })
        .onConflict((oc) => oc.column('digest').doUpdateSet(values))
        .execute())
      this.summary.tokens++
    }
  }

  private async idByName (table: 'teams' | 'workspaces', organizationId: string, name: string): Promise<string | undefined> {
    const row = await this.trx.selectFrom(table).select('id')
      .where('organization_id', '=', organizationId).where('name', '=', name).executeTakeFirst()
    return row?.id
  }

  /** Runs one write; a constraint the database enforces is reported against the entry that broke it. */
  private async at<T> (where: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write()
    } catch (err) {
      const e = err as { code?: string, constraint?: string, detail?: string, message?: string }
      if (typeof e.code === 'string' && e.code.startsWith('23')) {
        throw new SeedError(where, `conflicts with an existing row (${e.constraint ?? e.code}${e.detail ? `: ${e.detail}` : ''})`)
      }
      throw err
    }
  }
}
