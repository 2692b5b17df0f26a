import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { readFile } from 'node:fs/promises'
import fp from 'fastify-plugin'
import { projectFile } from './project-file.js'
import type { Kysely } from 'kysely'
import type { Redis } from 'ioredis'
import { connect, type DatabaseLocation } from './db/connect.js'
import type { Database } from './db/database.js'
import { inSchema } from './db/tables.js'
import { noticeNamedStatements } from './db/named-statements.js'
import { migrate as applyMigrations } from './db/migrate.js'
import { registerUi, UI_PATH } from './ui.js'
import authentication, { type Authenticate } from './auth/authentication.js'
import { registerRateLimit } from './limits/rate-limit.js'
import admission, { type AdmissionOptions } from './limits/admission.js'
import { linkOrigin } from './jsonapi/origin.js'
import { ApiError, errorHandler, JSONAPI_TYPE, loggable, notFoundHandler } from './jsonapi/errors.js'
import { compileOnFirstUse, createAjv } from './validation.js'
import teamWorkspaceRoutes from './team-workspaces/team-workspaces-routes.js'
import { TeamWorkspacesRepository } from './team-workspaces/team-workspaces-repository.js'
import workspaceRoutes from './workspaces/workspaces-routes.js'
import { WorkspacesRepository } from './workspaces/workspaces-repository.js'
import teamRoutes from './teams/teams-routes.js'
import projectRoutes from './projects/projects-routes.js'
import teamProjectRoutes from './projects/team-projects-routes.js'
import { ProjectsRepository } from './projects/projects-repository.js'
import { TeamProjectsRepository } from './projects/team-projects-repository.js'
import { TeamsRepository } from './teams/teams-repository.js'
import teamMemberRoutes from './teams/team-members-routes.js'
import { TeamMembersRepository } from './teams/team-members-repository.js'
import peopleRoutes from './people/people-routes.js'
import { MembershipsRepository } from './people/memberships-repository.js'
import auditRoutes from './audit/audit-routes.js'
import tokenRoutes from './tokens/tokens-routes.js'
import { TokensRepository } from './tokens/tokens-repository.js'
import { AuditRepository } from './audit/audit-repository.js'
import auditRetention from './audit/audit-retention.js'
import { combineAccess, type EffectiveAccess } from './access/effective-access.js'
import { resolveToken, type Caller } from './auth/caller.js'
import { tokenDigest } from './auth/token-digest.js'
import { directory, DirectoryError, validated, type Directory } from './directory/host-directory.js'
import effectiveAccessRoutes from './effective-access/effective-access-routes.js'
import { EffectiveAccessRepository } from './effective-access/effective-access-repository.js'
import accessReviewRoutes from './effective-access/access-review-routes.js'
import { AccessReviewRepository } from './effective-access/access-review-repository.js'
import { explainer, type Explain, type ExplainQuery } from './effective-access/explain.js'
import accessSetRoutes from './team-workspaces/access-set-routes.js'
import { AccessSetRepository } from './team-workspaces/access-set-repository.js'
import { AccessSetError, forHost, setWorkspaceAccess, type SetWorkspaceAccessInput, type WorkspaceAccessSet } from './team-workspaces/access-set.js'
import { setProjectAccess, type ProjectAccessSet, type SetProjectAccessInput } from './projects/project-access-set.js'

export interface TeamAccessOptions {
  /** Where the API is mounted (Fastify's own option); links in documents follow it. */
  prefix?: string
  /**
   * A Kysely instance the host owns (of the host's own schema type: the plugin's tables are not
   * in it), or where to connect: `{ url }` (PostgreSQL) or `{ dataDir }` (PGlite).
   */
  database: Kysely<any> | DatabaseLocation
  /**
   * The PostgreSQL schema of the plugin's tables, created when missing (default `team_access`): the
   * host's own tables, in `public` or elsewhere, are never touched. The standalone service sets it
   * from DATABASE_SCHEMA.
   */
  schema?: string
  /** Replaces the bearer-token lookup; return null to answer 401. */
  authenticate?: Authenticate
  /** Apply the migrations on registration (default true). */
  migrate?: boolean
  /** On the host's own Kysely, run the hot statements as named prepared statements when its driver takes them (`pg` does; default true): false behind a pooler that drops them (PgBouncer < 1.21, transaction mode). */
  namedStatements?: boolean
  /** Largest request body accepted, bytes (default 64 KiB). */
  bodyLimit?: number
  /**
   * Requests per second per caller (the user, team or organization behind the token; per
   * client address without a valid one); 0 or absent switches it off. The standalone service
   * sets it from RATE_LIMIT (default 30, as HCP Terraform).
   */
  rateLimit?: number
  /**
   * How much work runs at once, how long a request may wait for its turn, and how many requests
   * of one caller may be in service at once — its others wait their turn (see
   * src/limits/admission.ts). Defaults: 10 at once, 200 waiting for at most 2 s, no per-caller cap.
   */
  admission?: Partial<AdmissionOptions>
  /**
   * The origin of absolute links (pagination), e.g. `https://tfe.example.com`. Absent: the
   * request's own scheme and `Host`, which must then be a well-formed `host[:port]` (else 400).
   */
  publicUrl?: string
  /**
   * A Redis client (ioredis) holding the rate-limit budget, so that every replica counts against
   * one budget per caller; when Redis fails, requests go through (the limit fails open).
   * Absent: each process counts on its own.
   */
  rateLimitRedis?: Redis
  /**
   * Audit events older than this many days are purged in the background (on start, then hourly);
   * 0 or absent keeps every event. The standalone service sets it from AUDIT_RETENTION_DAYS
   * (default 90).
   */
  auditRetentionDays?: number
  /** How often the purge runs after the first, ms (default one hour). */
  auditPurgeEveryMs?: number
  /**
   * Serve the API's OpenAPI document at `<prefix>/openapi.json` (no token needed), its paths under
   * the prefix — for the host's own docs page (swagger-ui or any other). Default false.
   */
  openapi?: boolean
  /**
   * Serve the access review's page (DESIGN §12.2) at `<prefix>/ui/` (no token needed to load it;
   * the person pastes one). Default false.
   */
  ui?: boolean
}

/** What the plugin adds to the host: the question a host asks on every request of its own. */
export interface TeamAccessDecorator {
  /**
   * The caller's effective access on a workspace (one query): the highest level it holds and the
   * attribute-wise strongest permissions across every grant. `{ access: null, permissions: null }`
   * when it holds none, or the workspace does not exist.
   */
  effectiveAccess: (query: { caller: Caller, workspaceId: string }) => Promise<EffectiveAccess>
  /**
   * `effectiveAccess` for many workspaces in one statement (a page of them, say): every id asked
   * is a key of the map, with nulls where the caller holds nothing or the workspace does not exist.
   */
  effectiveAccessMany: (query: { caller: Caller, workspaceIds: readonly string[] }) => Promise<Map<string, EffectiveAccess>>
  /**
   * Why (DESIGN §10.2), as the API answers it: `{ caller, workspaceId }` — every team that holds
   * access on the workspace, with its level, strongest permissions and grants; `{ caller,
   * workspaceId, username }` — that user's access through its teams; `{ caller, teamId, page? }` —
   * the workspaces the team reaches (a page, or all). Undefined when the workspace or team does
   * not exist or the caller may not ask (owners and workspace admins; for a team, owners and who
   * acts through it).
   */
  explain: Explain
  /**
   * The host's directory (DESIGN §9.1): create, change and remove organizations, users, teams,
   * memberships, workspaces and tokens one at a time, each call one transaction with its cascades
   * and audit events; the rows it creates are the host's, which no seed removes. Errors are
   * `DirectoryError`s (`not-found`, `conflict`, `invalid`).
   */
  directory: Directory
  /**
   * Makes a workspace's team access equal to a complete set (DESIGN §10.1), as
   * `PUT /workspaces/:id/team-access` does, for the caller given: one transaction, an audit event
   * per row added, changed or removed. `dryRun`: change nothing, answer what would change;
   * `ifMatch`: an ETag from an earlier answer, change only if the set is still that one. Refusals
   * are `AccessSetError`s (`not-found`, `precondition-failed`, `invalid` with the entries' problems).
   */
  setWorkspaceAccess: (input: SetWorkspaceAccessInput) => Promise<WorkspaceAccessSet>
  /**
   * Makes a project's team access equal to a complete set (DESIGN §11.5), as `setWorkspaceAccess`
   * does for a workspace, for the caller given — a project admin: one transaction, each row added,
   * changed or removed by the API's own statement (its rules, its audit event). `dryRun` and
   * `ifMatch` as there. Refusals are `AccessSetError`s (`not-found`, `precondition-failed`,
   * `invalid` with the entries' problems; entry -1: a row the set leaves out that the caller may
   * not remove).
   */
  setProjectAccess: (input: SetProjectAccessInput) => Promise<ProjectAccessSet>
  /**
   * The caller a token of the plugin's stands for (a bearer secret: one the directory or the API
   * made, or a seed's), or null when it is unknown, expired or revoked — for an `authenticate` that
   * also takes the `Authorization: Bearer` the access review's page (`ui`) and go-tfe send.
   */
  callerOfToken: (secret: string) => Promise<Caller | null>
}

declare module 'fastify' {
  interface FastifyInstance {
    teamAccess: TeamAccessDecorator
  }
  interface FastifyContextConfig {
    /** The route answers plain JSON, not JSON:API (the audit trail, as HCP Terraform); its errors are error documents still. */
    plainJson?: boolean
    /** The route answers CSV when it is asked for (the access review); its errors are error documents still. */
    csv?: boolean
  }
}

/**
 * The embeddable plugin. The host sees one decorator, `teamAccess`; everything else — content
 * types, validation, error documents, authentication, the routes — lives in an encapsulated
 * child under `prefix`, so the host's own routes are untouched.
 */
const teamAccess = fp<TeamAccessOptions>(async (app, options) => {
  const db = await openDatabase(app, options.database, options.schema, options.namedStatements ?? true)
  if (options.migrate ?? true) await applyMigrations(db)
  // one repository per resource and registration: their statements are built once and replayed
  const repositories = { teamWorkspaces: new TeamWorkspacesRepository(db), workspaces: new WorkspacesRepository(db), teams: new TeamsRepository(db), accessSet: new AccessSetRepository(db) }
  const repository = repositories.teamWorkspaces
  // the routes of DESIGN §10.2 and the host ask through the same function
  const explain = explainer(new EffectiveAccessRepository(db))
  // every question of the host's is checked as the directory's calls are (a DirectoryError `invalid`), before any statement
  app.decorate('teamAccess', {
    effectiveAccess: async (query) => {
      const { caller, workspaceId } = validated('EffectiveAccessQuery', query, 'query')
      return combineAccess((await repository.grantsOn(caller, [workspaceId])).get(workspaceId) ?? [])
    },
    effectiveAccessMany: async (query) => {
      const { caller, workspaceIds } = validated('EffectiveAccessManyQuery', query, 'query')
      const unique = [...new Set(workspaceIds)]
      const grants = unique.length === 0 ? new Map() : await repository.grantsOn(caller, unique)
      return new Map(unique.map((id) => [id, combineAccess(grants.get(id) ?? [])]))
    },
    explain: checkedExplain(explain),
    directory: directory(db),
    callerOfToken: async (secret) => {
      const caller = typeof secret === 'string' ? await resolveToken(db, secret) : null
      // with its token's digest, as the plugin's own authentication makes it: every statement checks the token again
      return caller === null ? null : { ...caller, token: tokenDigest(secret) }
    },
    setWorkspaceAccess: async (input) => {
      validatedSetArguments('SetWorkspaceAccessArguments', input)
      return forHost(await setWorkspaceAccess(repositories.accessSet, input))
    },
    setProjectAccess: async (input) => {
      validatedSetArguments('SetProjectAccessArguments', input)
      return await setProjectAccess(db, input)
    }
  } satisfies TeamAccessDecorator)
  await app.register(auditRetention, { db, retentionDays: options.auditRetentionDays ?? 0, everyMs: options.auditPurgeEveryMs })
  await app.register(teamAccessApi, { ...options, prefix: options.prefix ?? '', db, repositories, explain })
  // the page beside the API, not in its scope: its files are not JSON:API documents
  if (options.ui === true) await app.register(async (page) => { await registerUi(page, { path: UI_PATH, apiBase: page.prefix }) }, { prefix: options.prefix ?? '' })
}, { name: 'team-access', fastify: '5.x' })

/** An access set's arguments checked before any statement; a bad one is the access set's own error, as every other refusal of the call. */
function validatedSetArguments (name: 'SetWorkspaceAccessArguments' | 'SetProjectAccessArguments', input: unknown): void {
  try {
    validated(name, input, 'input')
  } catch (err) {
    throw err instanceof DirectoryError ? new AccessSetError('invalid', err.message) : err
  }
}

/** `explain` for the host: each shape of question checked before it is asked. */
function checkedExplain (explain: Explain): Explain {
  const query = (q: unknown): ExplainQuery => {
    const shape = q !== null && typeof q === 'object' ? q : {}
    if ('teamId' in shape) return validated('ExplainTeamQuery', q, 'query')
    if ('username' in shape) return validated('ExplainUserQuery', q, 'query')
    return validated('ExplainWorkspaceQuery', q, 'query')
  }
  return (async (q: unknown) => await explain(query(q) as never)) as Explain
}

const DEFAULT_ADMISSION: AdmissionOptions = { concurrency: 10, queueLength: 200, maxWaitMs: 2000, perCaller: 0 }

interface ApiOptions extends TeamAccessOptions {
  db: Kysely<Database>
  repositories: { teamWorkspaces: TeamWorkspacesRepository, workspaces: WorkspacesRepository, teams: TeamsRepository, accessSet: AccessSetRepository }
  explain: Explain
}

/**
 * The API itself, encapsulated. A request flows top to bottom: JSON:API plumbing (content types,
 * validator, the one error handler) → authentication (`request.caller`, or 401) → the caller's
 * rate-limit budget → validation → admission (a turn to run) → the route → the repository, whose
 * statement applies the rules → a document.
 */
const teamAccessApi: FastifyPluginAsync<ApiOptions> = async (app, options) => {
  jsonApiPlumbing(app, options.bodyLimit ?? 64 * 1024)
  // a 404 scope of its own only exists under a prefix; at the root the host's handler stays the host's
  if ((options.prefix ?? '') !== '') app.setNotFoundHandler(notFoundHandler)

  if (options.openapi === true) {
    const prefix = options.prefix ?? ''
    app.get('/openapi.json', { schema: { hide: true } }, async () => await openApiUnder(prefix))
  }

  // go-tfe calls this on start to learn the API version; it needs no token.
  app.get('/ping', {
    schema: { tags: ['discovery'], summary: 'API version (go-tfe asks on start)', response: { 204: { type: 'null', description: 'TFP-API-Version: 2.6' } } }
  }, async (_request, reply) => {
    void reply.header('TFP-API-Version', '2.6').status(204).send()
  })

  await app.register(async (api) => {
    await api.register(authentication, { db: options.db, authenticate: options.authenticate, failuresPerSecond: options.rateLimit ?? 0 })
    if (options.rateLimit !== undefined && options.rateLimit > 0) await registerRateLimit(api, options.rateLimit, options.rateLimitRedis)
    await api.register(admission, { ...DEFAULT_ADMISSION, ...options.admission })
    const origin = linkOrigin(options.publicUrl)
    await api.register(teamWorkspaceRoutes, { repository: options.repositories.teamWorkspaces, origin })
    await api.register(workspaceRoutes, { repository: options.repositories.workspaces, origin })
    await api.register(accessSetRoutes, { repository: options.repositories.accessSet })
    const memberships = new MembershipsRepository(options.db)
    await api.register(teamRoutes, { repository: options.repositories.teams, memberships, origin })
    await api.register(teamMemberRoutes, { repository: new TeamMembersRepository(options.db) })
    await api.register(auditRoutes, { repository: new AuditRepository(options.db) })
    await api.register(tokenRoutes, { repository: new TokensRepository(options.db), origin })
    await api.register(effectiveAccessRoutes, { explain: options.explain, origin })
    await api.register(accessReviewRoutes, { repository: new AccessReviewRepository(options.db), origin })
    await api.register(projectRoutes, { repository: new ProjectsRepository(options.db), origin })
    await api.register(teamProjectRoutes, { repository: new TeamProjectsRepository(options.db), origin })
    await api.register(peopleRoutes, { repository: memberships, origin })
  })
}

let openApiDocument: Promise<{ paths: Record<string, unknown> }> | undefined

/** The package's OpenAPI document (schemas/openapi.json, written from the standalone service's routes under /api/v2), its paths under `prefix`. */
async function openApiUnder (prefix: string): Promise<unknown> {
  openApiDocument ??= readFile(projectFile('schemas/openapi.json'), 'utf8').then((text) => JSON.parse(text) as { paths: Record<string, unknown> })
  const document = await openApiDocument
  return { ...document, paths: Object.fromEntries(Object.entries(document.paths).map(([path, item]) => [path.replace(/^\/api\/v2/, prefix), item])) }
}

async function openDatabase (app: FastifyInstance, database: TeamAccessOptions['database'], schema: string | undefined, named: boolean): Promise<Kysely<Database>> {
  // the host's own Kysely: the hot statements named on it when its driver takes names (src/db/named-statements.ts)
  if (!('url' in database) && !('dataDir' in database)) return await noticeNamedStatements(inSchema(database, schema), named)
  // a location: the plugin owns the connection and closes it with the app
  const connection = await connect(database, { ...(schema === undefined ? {} : { schema }), onPoolError: (err) => app.log.warn({ err: loggable(err) }, 'database pool error') })
  app.addHook('onClose', async () => await connection.close())
  return connection.db
}

/** Content types, validator and error documents of the JSON:API wire format (DESIGN §4). */
function jsonApiPlumbing (app: FastifyInstance, bodyLimit: number): void {
  const ajv = createAjv()
  app.setValidatorCompiler(compileOnFirstUse(ajv))
  app.setErrorHandler(errorHandler)

  // Only JSON bodies: anything else on POST/PATCH is 415. Clients send a Content-Type on DELETE
  // with an empty body, or the body `null`: both are accepted.
  app.removeAllContentTypeParsers()
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.addContentTypeParser(['application/json', JSONAPI_TYPE], { parseAs: 'string', bodyLimit }, (request, body, done) => {
    if ((body as string).trim() === '') return done(null, undefined)
    parseJson(request, body as string, (err, parsed) => {
      if (err) return done(new ApiError(400, 'bad request', 'The request body is not valid JSON.'), undefined)
      done(null, parsed)
    })
  })
  // a callback hook: on every answer it costs a comparison, no promise
  app.addHook('onSend', (request, reply, payload, done) => {
    const { plainJson, csv } = request.routeOptions.config
    const plain = (plainJson === true || (csv === true && String(reply.getHeader('content-type')).startsWith('text/csv'))) && reply.statusCode < 400
    if (reply.statusCode !== 204 && !plain) void reply.type(JSONAPI_TYPE)
    done(null, payload)
  })
}

export default teamAccess
