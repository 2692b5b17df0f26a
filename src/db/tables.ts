import { IdentifierNode, OperationNodeTransformer, sql, type Kysely, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type SchemableIdentifierNode, type UnknownRow } from 'kysely'
import type { QueryId } from 'kysely'
import type { Database } from './database.js'

/**
 * The plugin's tables live in a PostgreSQL schema of their own (default `team_access`; the
 * `schema` option, `DATABASE_SCHEMA`), so that a host whose database already has `users` or
 * `teams` of its own can embed the plugin beside them.
 *
 * Statements name the tables bare — `selectFrom('teams')`, and in raw SQL `${table.teams}` —
 * and the Kysely the plugin works with qualifies every one of them as it compiles: a Kysely
 * plugin that puts the schema in front of these names, and of no other (a CTE, an alias, the
 * host's own tables). No statement depends on `search_path`, so the host's connections, pool
 * and settings stay the host's.
 */
export const DEFAULT_SCHEMA = 'team_access'

/** The tables of the plugin (the migrations' tables are qualified by the Migrator itself). */
export const TABLE_NAMES = [
  'organizations', 'users', 'teams', 'team_memberships', 'workspaces', 'tokens', 'team_workspaces',
  'workspace_access_counts', 'seed_grants', 'audit_events', 'revoked_tokens', 'projects', 'team_projects',
  'organization_memberships', 'organization_membership_teams', 'mirrors'
] as const satisfies ReadonlyArray<keyof Database>

export type TableName = typeof TABLE_NAMES[number]

/** A table named in raw SQL (`sql\`select … from ${table.teams} t\``): qualified like any other. */
export const table = Object.fromEntries(TABLE_NAMES.map((name) => [name, sql.table(name)])) as Record<TableName, ReturnType<typeof sql.table>>

const OWN_TABLES: ReadonlySet<string> = new Set(TABLE_NAMES)

class QualifyOwnTables extends OperationNodeTransformer {
  constructor (private readonly schema: IdentifierNode) { super() }

  protected override transformSchemableIdentifier (node: SchemableIdentifierNode, queryId?: QueryId): SchemableIdentifierNode {
    const transformed = super.transformSchemableIdentifier(node, queryId)
    if (transformed.schema !== undefined || !OWN_TABLES.has(transformed.identifier.name)) return transformed
    return { ...transformed, schema: this.schema }
  }
}

/** Qualifies the plugin's tables with its schema, in every statement of the Kysely it is added to. */
export class TeamAccessSchema implements KyselyPlugin {
  private readonly transformer: QualifyOwnTables

  constructor (readonly schema: string) {
    this.transformer = new QualifyOwnTables(IdentifierNode.create(schema))
  }

  transformQuery (args: PluginTransformQueryArgs): RootOperationNode {
    return this.transformer.transformNode(args.node, args.queryId)
  }

  async transformResult (args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result
  }
}

const schemas = new WeakMap<Kysely<any>, string>()

/**
 * The Kysely the plugin works with: the given one (the host's, of any schema, or the plugin's
 * own) with the plugin's tables qualified by `schema`. One already made for that schema is
 * returned as it is.
 */
export function inSchema (db: Kysely<any>, schema?: string): Kysely<Database> {
  const current = schemas.get(db)
  if (current !== undefined) {
    if (schema === undefined || schema === current) return db as Kysely<Database>
    throw new Error(`this database handle works in the schema "${current}", not "${schema}"`)
  }
  const name = schema ?? DEFAULT_SCHEMA
  validSchemaName(name)
  const qualified = db.withPlugin(new TeamAccessSchema(name)) as Kysely<Database>
  schemas.set(qualified, name)
  return qualified
}

/** The schema a Kysely made by inSchema qualifies with; the default for any other. */
export function schemaOf (db: Kysely<any>): string {
  return schemas.get(db) ?? DEFAULT_SCHEMA
}

/** A schema name is an identifier of a few plain characters: it is quoted wherever it appears, and shown in messages. */
export function validSchemaName (name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_$]{0,62}$/.test(name)) {
    throw new Error(`the schema name "${name}" is not a plain identifier (letters, digits, _ and $; at most 63 characters; not starting with a digit)`)
  }
  return name
}
