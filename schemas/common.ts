import { Type, type Static, type SchemaOptions } from '@sinclair/typebox'

// TypeBox only: the single source of validation, types and the OpenAPI document.
// Never imports src/.

/** A string enum as plain JSON Schema (`enum`), so errors name the allowed values and OpenAPI shows them. */
export const StringEnum = <const T extends readonly string[]>(values: T, options: SchemaOptions = {}) =>
  Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] })

export const Access = StringEnum(['read', 'plan', 'write', 'admin', 'custom'],
  { description: "The team's access level on the workspace; permission attributes are editable only under 'custom'." })
export const Runs = StringEnum(['read', 'plan', 'apply'],
  { description: "Permission on the workspace's runs." })
export const Variables = StringEnum(['none', 'read', 'write'],
  { description: "Permission on the workspace's variables." })
export const StateVersions = StringEnum(['none', 'read-outputs', 'read', 'write'],
  { description: "Permission on the workspace's state versions." })
export const SentinelMocks = StringEnum(['none', 'read'],
  { description: "Permission on the workspace's Sentinel policy mocks." })
export const WorkspaceLocking = Type.Boolean({ description: 'Whether the team may lock and unlock the workspace by hand.' })
export const RunTasks = Type.Boolean({ description: 'Whether the team may manage run tasks on the workspace.' })
export const PolicyOverrides = Type.Boolean({ description: 'Whether the team may override soft-mandatory policy checks, provided the organization delegates policy overrides.' })
export const Visibility = StringEnum(['secret', 'organization'],
  { description: "'secret' teams are visible only to their members and to owners; 'organization' teams to every member." })

/** The permission attributes as request members: each optional, editable only under `custom`. */
export const OptionalPermissions = {
  runs: Type.Optional(Runs),
  variables: Type.Optional(Variables),
  'state-versions': Type.Optional(StateVersions),
  'sentinel-mocks': Type.Optional(SentinelMocks),
  'workspace-locking': Type.Optional(WorkspaceLocking),
  'run-tasks': Type.Optional(RunTasks),
  'policy-overrides': Type.Optional(PolicyOverrides)
}

export type Access = Static<typeof Access>
export type Runs = Static<typeof Runs>
export type Variables = Static<typeof Variables>
export type StateVersions = Static<typeof StateVersions>
export type SentinelMocks = Static<typeof SentinelMocks>
export type Visibility = Static<typeof Visibility>

/** An id as the API serves it: the entity's prefix, then letters, digits, `-` or `_` (DESIGN §6). */
export const idOf = (prefix: string, description: string) =>
  Type.String({ pattern: `^${prefix}-[A-Za-z0-9_-]+$`, minLength: prefix.length + 2, maxLength: 64, description })

/** URL-safe names, as HCP Terraform allows for organizations and workspaces. */
export const UrlSafeName = (description: string) =>
  Type.String({ pattern: '^[A-Za-z0-9_-]+$', minLength: 1, maxLength: 90, description })
