import { createHash, randomUUID } from 'node:crypto'
import { sql, type Transaction } from 'kysely'
import type { SeedDocument, SeedTeamAccess, SeedToken } from '../../schemas/seed.js'
import { PERMISSION_NAMES, permissionsOnAdd } from '../access/permissions.js'
import { tokenDigest } from '../auth/token-digest.js'
import type { Database, TokenKind } from './database.js'
import { newId } from './ids.js'
import { PERMISSION_COLUMN_NAMES, permissionColumns, pickPermissions } from './permission-columns.js'
import { recordEvents } from '../audit/audit-record.js'
import { entry, SeedError, type SeedSummary } from './seed-entries.js'

type Subject = { kind: TokenKind, id: string }

/** Writes a validated seed inside one transaction; every database error is reported against its entry. */
export class SeedWriter {
  private readonly summary: SeedSummary = { users: 0, organizations: 0, teams: 0, workspaces: 0, teamAccess: 0, teamAccessAlreadyApplied: 0, tokens: 0 }
  private readonly userIds = new Map<string, string>()
  /** The audit events of one application share an id, as a request's would: the grants that came together. */
  private readonly applicationId = randomUUID()

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
      await this.grant(grant, orgId, teamId, workspaceId)
    }
  }

  /**
   * A `team-access` entry is a grant to make once (DESIGN §6, "a seed never undoes the API"):
   * remembered by its fingerprint — team, workspace, permissions — and skipped ever after, so a
   * grant the API removed or changed stays as the API left it. A new or edited entry sets the
   * (team, workspace) row to what it says, whatever that row's id, or adds it: it never fails on
   * what the API did. Applying it records its audit event (System, `seed`) in the same statement.
   */
  private async grant (grant: SeedTeamAccess, organizationId: string, teamId: string, workspaceId: string): Promise<void> {
    const permissions = permissionsOnAdd(grant.access, pickPermissions(grant))
    const fingerprint = createHash('sha256')
      .update(JSON.stringify([teamId, workspaceId, grant.access, PERMISSION_NAMES.map((name) => permissions[name])]))
      .digest('hex')
    const first = await this.trx.insertInto('seed_grants').values({ fingerprint })
      .onConflict((oc) => oc.column('fingerprint').doNothing())
      .returning('fingerprint').executeTakeFirst()
    if (first === undefined) {
      this.summary.teamAccessAlreadyApplied++
      return
    }
    const values = { access: grant.access, ...permissionColumns(permissions) }
    // an explicit id is kept unless another row has it by now (the API may have re-added the pair)
    const idTaken = grant.id !== undefined &&
      (await this.trx.selectFrom('team_workspaces').select('id').where('id', '=', grant.id).executeTakeFirst()) !== undefined
    const applied = this.trx.with('applied', (qc) => qc.insertInto('team_workspaces')
      .values({ id: grant.id === undefined || idTaken ? newId('tws') : grant.id, organization_id: organizationId, team_id: teamId, workspace_id: workspaceId, ...values })
      .onConflict((oc) => oc.columns(['team_id', 'workspace_id']).doUpdateSet(values))
      // which the upsert did: a row it inserted has xmax 0, a row it updated was locked by this transaction first
      .returning(['organization_id', 'team_id', 'workspace_id', 'access', ...PERMISSION_COLUMN_NAMES, sql<boolean>`xmax = 0`.as('added')]))
    await recordEvents(applied, 'applied', {
      action: sql`case when applied.added then 'add_team' else 'update_team_permissions' end`,
      accessor: { kind: 'system', description: 'seed' },
      requestId: this.applicationId,
      permissions: true
    }).execute()
    this.summary.teamAccess++
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
