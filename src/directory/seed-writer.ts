import { randomUUID } from 'node:crypto'
import { sql, type Transaction } from 'kysely'
import type { SeedDocument, SeedToken } from '../../schemas/seed.js'
import { tokenDigest } from '../auth/token-digest.js'
import type { Database, TokenKind } from '../db/database.js'
import { newId } from '../db/ids.js'
import { Removals } from './removals.js'
import { missingPrerequisite, ORGANIZATION_ACCESS_COLUMN_NAMES, organizationAccessColumns } from '../access/organization-access.js'
import { applyGrant } from './seed-grants.js'
import { madeBy, makeRoom, notDeclared, type Named } from './seed-names.js'
import { SeedProjects } from './seed-projects.js'
import { SeedWorkspaces } from './seed-workspaces.js'
import { leaveUnlisted, removeUndeclaredUsers, writeUser } from './seed-users.js'
import type { ChangeSource } from './source.js'
import { entry, noChanges, SeedError, type SeedChanges, type SeedSummary } from './seed-entries.js'

type Subject = { kind: TokenKind, id: string, label: string }
type Organization = NonNullable<SeedDocument['organizations']>[number]

/** The workspace ids the Terraform provider takes (`workspace_id` must match it: DESIGN §2). */
const PROVIDER_WORKSPACE_ID = /^ws-[a-zA-Z0-9]{16}$/

/** The seed writes every row it names as its own: created, or adopted when it exists (DESIGN §9.1). */
const SEED = 'seed' as const

/**
 * Writes a validated seed inside one transaction; every database error is reported against its
 * entry. The document is the whole truth for what the seed manages (DESIGN §9.1): seed-managed
 * rows it no longer declares are removed, with what hangs on them, and every row it creates,
 * changes or removes is named in the summary — which a dry run computes by this very code, in a
 * transaction it rolls back.
 */
export class SeedWriter {
  private readonly summary: SeedSummary
  private readonly userIds = new Map<string, string>()
  /** Every secret the document declares, by digest: a token that moves to another subject is moved, never removed (and so revoked). */
  private declaredTokens: string[] = []
  /** The audit events of one application share an id, as a request's would: the changes that came together. */
  private readonly applicationId = randomUUID()

  /** The removals of rows the document no longer declares, every source's: the seed's are System events, `seed`. */
  private readonly directory: Removals
  private readonly projects: SeedProjects // projects, placements, project grants (DESIGN §11.5)
  /** Who makes the changes: the seed, System events that share the application's id. */
  private readonly source: ChangeSource

  constructor (private readonly trx: Transaction<Database>, dryRun = false) {
    this.summary = { users: 0, organizations: 0, teams: 0, workspaces: 0, teamAccess: 0, teamAccessAlreadyApplied: 0, tokens: 0, dryRun, created: noChanges(), changed: noChanges(), removed: noChanges(), warnings: [] }
    this.source = { by: 'seed', requestId: this.applicationId }
    this.directory = new Removals(trx, this.source, this.summary.removed)
    this.projects = new SeedProjects(trx, this.source, this.summary)
  }

  async write (seed: SeedDocument): Promise<SeedSummary> {
    const secrets = (tokens: SeedToken[] | undefined) => (tokens ?? []).map((token) => tokenDigest(typeof token === 'string' ? token : token.token))
    this.declaredTokens = [...(seed.users ?? []).flatMap((user) => secrets(user.tokens)), ...(seed.organizations ?? []).flatMap((org) =>
      [...secrets(org.tokens), ...(org.teams ?? []).flatMap((team) => secrets(team.tokens))])]
    const users = seed.users ?? []
    // users are global: first the seed's users the document no longer declares (an entry may take a removed one's name)
    await removeUndeclaredUsers(this.trx, this.directory, this.summary, users.map((u) => ({ id: u.id, name: u.username })))
    for (const [i, user] of users.entries()) {
      const where = entry('users', i, user)
      // an email an invitation waits for: the person arrives, with the teams the invitation gave them (DESIGN §14.2)
      const { id, before, added } = await writeUser(this.trx, this.source, user, async (write) => await this.at(where, write))
      this.note('users', user.username, before, { username: user.username, email: user.email ?? null })
      this.summary.created.memberships.push(...added)
      this.userIds.set(user.username, id)
      this.summary.users++
      // an invitation's placeholder taken over is the person arriving, not a row adopted
      await this.adopting(before?.username === null ? undefined : before, `user ${user.username}`, async (adopted) => {
        await this.tokens(user.tokens, { kind: 'user', id, label: `user ${user.username}` }, where, adopted)
      })
    }
    for (const [i, org] of (seed.organizations ?? []).entries()) {
      await this.organization(org, entry('organizations', i, org))
    }
    // the HTTP API serves any explicit id; the Terraform provider refuses a workspace id of another shape
    const unusable = (seed.organizations ?? []).flatMap((org) => (org.workspaces ?? []).flatMap((ws) =>
      ws.id === undefined || PROVIDER_WORKSPACE_ID.test(ws.id) ? [] : [`${org.name}/${ws.name} (${ws.id})`]))
    if (unusable.length > 0) {
      this.summary.warnings.push(`workspace ids the Terraform provider refuses (it takes only ws- and 16 letters or digits): ${unusable.join(', ')} — the HTTP API serves them, Terraform's workspace_id does not; give new ids of that shape (or none) to workspaces you manage with Terraform`)
    }
    return this.summary
  }

  private async organization (org: Organization, where: string): Promise<void> {
    const before = await this.trx.selectFrom('organizations').select(['name', 'managed_by'])
      .where(org.id === undefined ? 'name' : 'id', '=', org.id ?? org.name).executeTakeFirst()
    const { id: orgId } = await this.at(where, () => this.trx.insertInto('organizations')
      .values({ id: org.id ?? newId('org'), name: org.name, managed_by: SEED })
      .onConflict((oc) => oc.column(org.id === undefined ? 'name' : 'id')
        .doUpdateSet((eb) => ({ name: eb.ref('excluded.name'), managed_by: SEED })))
      .returning('id').executeTakeFirstOrThrow())
    this.note('organizations', org.name, before, { name: org.name })
    this.summary.organizations++
    await this.adopting(before, `organization ${org.name}`, async (adopted) => {
      await this.tokens(org.tokens, { kind: 'organization', id: orgId, label: `organization ${org.name}` }, where, adopted)
    })

    // removals first: a declared team or workspace may take the name (or the owners flag) of one removed
    await this.removeTeams(orgId, org.teams ?? [])
    const teamIds = new Map<string, string>()
    for (const [j, team] of (org.teams ?? []).entries()) {
      const at = entry('teams', j, team, where)
      const lacking = missingPrerequisite(team['organization-access'] ?? {})
      if (lacking !== undefined) throw new SeedError(`${at} › organization-access`, lacking.message)
      const values = {
        organization_id: orgId,
        name: team.name,
        visibility: team.visibility ?? 'secret',
        is_owners: team.owners ?? false,
        // every flag the document does not give is false: the seed is the whole truth for its team
        ...Object.fromEntries(ORGANIZATION_ACCESS_COLUMN_NAMES.map((column) => [column, false])),
        ...organizationAccessColumns(team['organization-access'] ?? {}),
        managed_by: SEED
      }
      // a name the document gives a team by id, held by another team (the API's, say), is the seed's
      if (team.id !== undefined) await makeRoom(this.trx, this.source, this.summary, 'teams', { id: orgId, name: org.name }, { id: team.id, name: team.name }, (org.teams ?? []).map((x) => x.name))
      const previous = await this.trx.selectFrom('teams')
        .select(['organization_id', 'name', 'visibility', 'is_owners', ...ORGANIZATION_ACCESS_COLUMN_NAMES, 'managed_by'])
        .$call((q) => team.id === undefined ? q.where('organization_id', '=', orgId).where('name', '=', team.name) : q.where('id', '=', team.id))
        .executeTakeFirst()
      const row = await this.at(at, () => this.trx.insertInto('teams')
        .values({ id: team.id ?? newId('team'), ...values })
        .onConflict((oc) => (team.id === undefined ? oc.columns(['organization_id', 'name']) : oc.column('id'))
          .doUpdateSet(values)
          // an explicit id of another organization's team is not silently moved
          .where('teams.organization_id', '=', orgId))
        .returning('id').executeTakeFirst())
      if (row === undefined) throw new SeedError(at, `id "${team.id!}" belongs to a team of another organization`)
      const label = `${org.name}/${team.name}`
      this.note('teams', label, previous, values)
      teamIds.set(team.name, row.id)
      this.summary.teams++
      await this.adopting(previous, `team ${label}`, async (adopted) => {
        if (adopted && team.owners === true && (team.members ?? []).length === 0 && await this.hasMembers(row.id)) {
          throw new SeedError(at, `the owners team "${team.name}" was made ${madeBy(previous!)} and has members: declare its members, or the organization would be left without an owner`)
        }
        await this.members(row.id, label, team.members ?? [], at, adopted)
        await this.tokens(team.tokens, { kind: 'team', id: row.id, label: `team ${label}` }, at, adopted)
      })
    }

    // a person the document lists in none of the organization's teams leaves it (DESIGN §14.2)
    await leaveUnlisted(this.trx, this.source, this.summary, { id: orgId, name: org.name })

    const projectIds = await this.projects.declare(orgId, org, where, async (name) => teamIds.get(name) ?? await this.idByName('teams', orgId, name))
    await this.removeWorkspaces(orgId, org.workspaces ?? [])
    const workspaceIds = await new SeedWorkspaces(this.trx, this.source, this.summary, this.directory).declare({ id: orgId, name: org.name }, org, where,
      async (at, write) => await this.at(at, write), (label, before, after) => this.note('workspaces', label, before, after),
      async (name) => teamIds.get(name) ?? await this.idByName('teams', orgId, name))
    await this.projects.placeAndPrune(orgId, org, workspaceIds, projectIds, where)

    for (const [j, grant] of (org['team-access'] ?? []).entries()) {
      const at = entry('team-access', j, grant, where)
      const teamId = teamIds.get(grant.team) ?? await this.undeclaredTeam(orgId, grant.team, at)
      if (teamId === undefined) throw new SeedError(at, `no team named "${grant.team}" in organization "${org.name}"`)
      const workspaceId = workspaceIds.get(grant.workspace) ?? await this.undeclaredWorkspace(orgId, grant.workspace, at)
      if (workspaceId === undefined) throw new SeedError(at, `no workspace named "${grant.workspace}" in organization "${org.name}"`)
      await applyGrant(this.trx, grant, { organizationId: orgId, teamId, workspaceId }, `${grant.team} on ${org.name}/${grant.workspace}`, this.summary, this.applicationId)
    }
    await this.projects.grants(orgId, org, projectIds, async (name, at) => teamIds.get(name) ?? await this.undeclaredTeam(orgId, name, at), where)
  }

  /**
   * A row the API or the host made, which the document names, becomes the seed's whole (DESIGN
   * §9.1): what the document does not declare on it — memberships, tokens — is removed by `write`
   * (which is told whether the row is adopted now), and the apply warns, naming the row and what
   * went. A team somebody made through the API before the operator's seed named it hands its new
   * grants to nobody.
   */
  private async adopting (before: { managed_by: string } | undefined, label: string, write: (adopted: boolean) => Promise<void>): Promise<void> {
    const { memberships, tokens } = this.summary.removed
    const [members, secrets] = [memberships.length, tokens.length]
    const adopted = before !== undefined && before.managed_by !== SEED
    await write(adopted)
    if (!adopted) return
    const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`
    const removed = [...(label.startsWith('team ') ? [count(memberships.length - members, 'membership')] : []), count(tokens.length - secrets, 'token')]
    this.summary.warnings.push(`${label}: made ${madeBy(before!)}, now the seed's — ${removed.join(' and ')} it does not declare removed`)
  }

  /**
   * Makes `usernames` the team's complete list of seed-managed members; members the API or the host
   * added stay — unless the seed adopts the team now (`adopted`): then it keeps only the declared ones.
   */
  private async members (teamId: string, teamLabel: string, usernames: string[], where: string, adopted: boolean): Promise<void> {
    const userIds: string[] = []
    for (const [k, username] of usernames.entries()) {
      const id = this.userIds.get(username) ??
        (await this.trx.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst())?.id
      if (id === undefined) throw new SeedError(`${where} › members[${k}] "${username}"`, `no user named "${username}"`)
      userIds.push(id)
    }
    await this.directory.removeMemberships(sql<boolean>`m.team_id = ${teamId} and (${adopted}::boolean or m.managed_by = ${SEED})
      and not m.user_id = any(${userIds}::text[])`)
    if (userIds.length === 0) return
    const existing = new Map((await this.trx.selectFrom('team_memberships').select(['user_id', 'managed_by'])
      .where('team_id', '=', teamId).execute()).map((m) => [m.user_id, m]))
    await this.trx.insertInto('team_memberships')
      .values(userIds.map((user_id) => ({ team_id: teamId, user_id, managed_by: SEED })))
      .onConflict((oc) => oc.columns(['team_id', 'user_id']).doUpdateSet({ managed_by: SEED })).execute()
    usernames.forEach((username, k) => this.note('memberships', `${teamLabel}: ${username}`, existing.get(userIds[k]!), {}))
  }

  /**
   * Makes `tokens` the subject's complete list of seed-managed tokens (by digest); tokens the API or
   * the host made stay — unless the seed adopts the subject now (`adopted`): then only the declared
   * ones stay, and the others are revoked.
   */
  private async tokens (tokens: SeedToken[] | undefined, subject: Subject, where: string, adopted: boolean): Promise<void> {
    const column = ({ organization: 'organization_id', team: 'team_id', user: 'user_id' } as const)[subject.kind]
    const declared = (tokens ?? []).map((token) => tokenDigest(typeof token === 'string' ? token : token.token))
    await this.directory.removeTokens(sql<boolean>`tk.${sql.id(column)} = ${subject.id} and (${adopted}::boolean or tk.managed_by = ${SEED})
      and not tk.digest = any(${this.declaredTokens}::text[])`)
    // a revoked secret is revoked for good, whoever revoked it (DESIGN §9.1): left out, with a warning naming its owner
    const revoked = new Set(declared.length === 0
      ? []
      : (await this.trx.selectFrom('revoked_tokens').select('digest').where('digest', 'in', declared).execute()).map((r) => r.digest))
    for (const [k, token] of (tokens ?? []).entries()) {
      if (revoked.has(declared[k]!)) {
        this.summary.warnings.push(`token of ${subject.label} (${where} › tokens[${k}]): revoked, left out — remove it from the document`)
        continue
      }
      const expiresAt = typeof token === 'string' || token['expires-at'] === undefined ? null : new Date(token['expires-at'])
      const values = {
        kind: subject.kind,
        organization_id: subject.kind === 'organization' ? subject.id : null,
        team_id: subject.kind === 'team' ? subject.id : null,
        user_id: subject.kind === 'user' ? subject.id : null,
        expires_at: expiresAt,
        managed_by: SEED
      }
      const before = await this.trx.selectFrom('tokens').select(['kind', 'organization_id', 'team_id', 'user_id', 'expires_at', 'managed_by'])
        .where('digest', '=', declared[k]!).executeTakeFirst()
      await this.at(`${where} › tokens[${k}]`, () => this.trx.insertInto('tokens')
        .values({ id: newId('at'), digest: declared[k]!, ...values })
        .onConflict((oc) => oc.column('digest').doUpdateSet(values))
        .execute())
      this.note('tokens', subject.label, before, values)
      this.summary.tokens++
    }
  }

  /**
   * The organization's seed-managed teams or workspaces the document no longer declares, locked,
   * each with its label (`organization/name`), in name order.
   */
  private async undeclared (table: 'teams' | 'workspaces', organizationId: string, declared: Named[]): Promise<Array<{ id: string, label: string }>> {
    return await this.trx.selectFrom(`${table} as r` as 'teams as r').innerJoin('organizations as o', 'o.id', 'r.organization_id')
      .select(['r.id', sql<string>`o.name || '/' || r.name`.as('label')])
      .where('r.organization_id', '=', organizationId).where('r.managed_by', '=', SEED)
      .where((eb) => notDeclared(eb, 'r.name', declared, 'r.id')).orderBy('r.name').forUpdate().execute()
  }

  /** Removes the organization's seed-managed teams the document no longer declares, with their team access, memberships and tokens. */
  private async removeTeams (organizationId: string, declared: Named[]): Promise<void> {
    const doomed = await this.undeclared('teams', organizationId, declared)
    if (doomed.length === 0) return
    await this.directory.removeTeams(doomed.map((team) => team.id))
    this.summary.removed.teams.push(...doomed.map((team) => team.label))
  }

  /** Removes the organization's seed-managed workspaces the document no longer declares, with their team access. */
  private async removeWorkspaces (organizationId: string, declared: Named[]): Promise<void> {
    const doomed = await this.undeclared('workspaces', organizationId, declared)
    if (doomed.length === 0) return
    await this.directory.removeWorkspaces(doomed.map((ws) => ws.id))
    this.summary.removed.workspaces.push(...doomed.map((ws) => ws.label))
  }

  /** Counts a written row: created when it did not exist, changed when a value (or its source) was different. */
  private note (kind: keyof SeedChanges, label: string, before: Record<string, unknown> | undefined, after: Record<string, unknown>): void {
    if (before === undefined) {
      this.summary.created[kind].push(label)
    } else if (before.managed_by !== SEED || Object.entries(after).some(([key, value]) => !sameValue(before[key], value))) {
      this.summary.changed[kind].push(label)
    }
  }

  /**
   * A team a `team-access` entry names that the document does not declare: the seed's or the host's
   * (trusted), by name. A team made through the API is refused — anyone who manages teams may have
   * taken the name — unless the document declares it (and so adopts it whole).
   */
  private async undeclaredTeam (organizationId: string, name: string, at: string): Promise<string | undefined> {
    const row = await this.trx.selectFrom('teams').select(['id', 'managed_by'])
      .where('organization_id', '=', organizationId).where('name', '=', name).executeTakeFirst()
    if (row?.managed_by === 'api') {
      throw new SeedError(at, `team "${name}" was made through the API: declare it under "teams" to grant it access (the seed then takes it over whole)`)
    }
    return row?.id
  }

  /**
   * A workspace a `team-access` entry names that the document does not declare: the seed's or the
   * host's, by name. One made through the API is refused, as such a team is: anyone who may create
   * workspaces may have taken the name — unless the document declares it (and so adopts it whole).
   */
  private async undeclaredWorkspace (organizationId: string, name: string, at: string): Promise<string | undefined> {
    const row = await this.trx.selectFrom('workspaces').select(['id', 'managed_by'])
      .where('organization_id', '=', organizationId).where('name', '=', name).executeTakeFirst()
    if (row?.managed_by === 'api') {
      throw new SeedError(at, `workspace "${name}" was made through the API: declare it under "workspaces" to grant access to it (the seed then takes it over whole)`)
    }
    return row?.id
  }

  private async hasMembers (teamId: string): Promise<boolean> {
    return (await this.trx.selectFrom('team_memberships').select('user_id').where('team_id', '=', teamId).limit(1).executeTakeFirst()) !== undefined
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

const sameValue = (a: unknown, b: unknown): boolean =>
  a instanceof Date || b instanceof Date
    ? (a instanceof Date ? a.getTime() : a) === (b instanceof Date ? b.getTime() : b)
    : a === b
