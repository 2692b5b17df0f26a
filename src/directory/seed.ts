import type { ErrorObject, ValidateFunction } from 'ajv'
import type { Kysely } from 'kysely'
import { SeedDocument, type SeedToken } from '../../schemas/seed.js'
import { createAjv, errorMessage, errorPointer } from '../validation.js'
import { customOnlyViolations } from '../access/permissions.js'
import { inSchema } from '../db/tables.js'
import { pickPermissions } from '../access/permission-columns.js'
import { SeedWriter } from './seed-writer.js'
import { entry, formatSeedSummary, labelOf, SeedError, type SeedChanges, type SeedSummary } from './seed-entries.js'

export { formatSeedSummary, SeedError, type SeedChanges, type SeedSummary, type SeedDocument }

export interface ApplySeedOptions {
  /** Plan only: run the apply in a transaction that is rolled back, and return what it would do. */
  dryRun?: boolean
  /** The PostgreSQL schema of the plugin's tables (default: the one `db` works in, else `team_access`). */
  schema?: string
}

/** Carries a dry run's summary out of the transaction it rolls back. */
class RolledBack extends Error {
  constructor (readonly summary: SeedSummary) {
    super('dry run: rolled back')
  }
}

// compiled on first use, not on import: a start with nothing to seed does not pay for it (~50 ms)
let validateDocument: ValidateFunction<SeedDocument> | undefined

/**
 * Applies a seed document (DESIGN §6, §9.1) in one transaction: everything or nothing.
 * Upserts by id, or by name where no id is given, so applying it twice changes nothing; removes
 * the seed-managed rows the document no longer declares. Returns what it created, changed and
 * removed. With `dryRun`, the very same apply runs and is rolled back: the summary is the plan.
 */
export async function applySeed (db: Kysely<any>, document: SeedDocument, options: ApplySeedOptions = {}): Promise<SeedSummary> {
  return await applySeedDocument(db, document, options)
}

/** applySeed for a document of unknown shape (a file's JSON): the same validation decides. */
export async function applySeedDocument (db: Kysely<any>, document: unknown, options: ApplySeedOptions = {}): Promise<SeedSummary> {
  // a document typed in TypeScript is checked too: it may still break a rule of §6 (duplicates, custom-only)
  const seed = validateSeed(document)
  const dryRun = options.dryRun === true
  try {
    return await inSchema(db, options.schema).transaction().execute(async (trx) => {
      const summary = await new SeedWriter(trx, dryRun).write(seed)
      if (dryRun) throw new RolledBack(summary)
      return summary
    })
  } catch (err) {
    if (err instanceof RolledBack) return err.summary
    throw err
  }
}

export function validateSeed (document: unknown): SeedDocument {
  validateDocument ??= createAjv().compile<SeedDocument>(SeedDocument)
  if (!validateDocument(document)) {
    const error = reportedError(validateDocument.errors!)
    throw new SeedError(pointerToEntry(document, errorPointer(error)), seedErrorMessage(error))
  }
  checkDuplicates(document)
  return document
}

/**
 * The error worth reporting. Where a value may take one of several forms (`anyOf`: a token is a
 * string or an object), Ajv lists every form's complaint before its own "must match a schema in
 * anyOf": the forms the value's type does not fit complain only of that type ("must be string"),
 * so the complaint of the form it does fit is the one that says what is wrong. When it fits none,
 * one error names the types it may take.
 */
function reportedError (errors: ErrorObject[]): ErrorObject {
  const union = errors.find((error) => error.keyword === 'anyOf')
  if (union === undefined) return errors[0]!
  const forms = errors.filter((error) => error !== union && error.schemaPath.startsWith(union.schemaPath))
  const wrongType = (error: ErrorObject) => error.keyword === 'type' && error.instancePath === union.instancePath
  const fitting = forms.find((error) => !wrongType(error))
  if (fitting !== undefined) return fitting
  const types = forms.map((error) => (error.params as { type: string }).type)
  return { ...union, keyword: 'type', params: { type: types.join(',') }, message: `must be ${types.join(' or ')}` }
}

/** errorMessage, and for an unknown member the members that entry may have (from the schema the error is about). */
function seedErrorMessage (error: ErrorObject): string {
  const message = errorMessage(error)
  if (error.keyword !== 'additionalProperties') return message
  const members = Object.keys(schemaAt(SeedDocument, error.schemaPath)?.properties ?? {})
  return members.length === 0 ? message : `${message} (it may have ${members.map((m) => `"${m}"`).join(', ')})`
}

/** The object schema that owns a keyword, from the keyword's schema path (`#/properties/users/items/additionalProperties`). */
function schemaAt (schema: unknown, schemaPath: string): { properties?: Record<string, unknown> } | undefined {
  let node: any = schema
  for (const segment of schemaPath.split('/').slice(1, -1)) node = node?.[segment.replace(/~1/g, '/').replace(/~0/g, '~')]
  return typeof node === 'object' && node !== null ? node : undefined
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
      // a token is a secret: never echoed, whatever is wrong with it
      parts.push(`${key}[${next}]${key === 'tokens' ? '' : labelOf(item)}`)
      node = item
      i++
    } else {
      parts.push(key)
      node = node?.[key]
    }
  }
  return parts.join(' › ')
}

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
  once(seed.users, 'users', (u) => u.email?.toLowerCase(), 'email (emails are unique, case-insensitively)')
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
      const violation = customOnlyViolations(access.access, pickPermissions(access))[0]
      if (violation) throw new SeedError(entry('team-access', j, access, where), violation.detail)
    })
  })
}
