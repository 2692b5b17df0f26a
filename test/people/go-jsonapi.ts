/**
 * What go-tfe's JSON:API decoding (`jsonapi.UnmarshalPayload` / `UnmarshalManyPayload` into its
 * structs) makes of an answer, and the errors it would raise: `data.type` must be the struct's
 * primary type (when there is an id), each attribute present must have the Go type its struct tag
 * names (null or absent: the zero value), a relation's `data` null is left nil, and a related
 * node is filled from `included` (by type and id) when it is there, else from its shallow node.
 * The structs below are go-tfe v1's (organization_membership.go, user.go, team.go, organization.go)
 * as far as these tests need them.
 * @see https://github.com/hashicorp/go-tfe/blob/v1.109.0/organization_membership.go
 */

export type GoField = 'string' | 'bool' | 'int' | 'time' | { object: Record<string, GoField> }

export interface GoStruct {
  type: string
  attributes: Record<string, GoField>
  relations: Record<string, { struct: () => GoStruct, many: boolean }>
}

/** A decoded node: its id, attributes and relations, as the struct holds them. */
export interface Decoded { id: string, attributes: Record<string, unknown>, relations: Record<string, Decoded | Decoded[] | null> }

export const USER: GoStruct = {
  type: 'users',
  attributes: {
    'avatar-url': 'string',
    email: 'string',
    'is-service-account': 'bool',
    'two-factor': { object: { enabled: 'bool', verified: 'bool' } },
    'unconfirmed-email': 'string',
    username: 'string',
    'v2-only': 'bool',
    'is-site-admin': 'bool',
    'is-admin': 'bool',
    'is-sso-login': 'bool',
    'is-scim-managed': 'bool',
    'scim-username': 'string',
    'scim-updated-at': 'time'
  },
  relations: {}
}

export const TEAM: GoStruct = {
  type: 'teams',
  attributes: {
    'is-unified': 'bool',
    name: 'string',
    visibility: 'string',
    'users-count': 'int',
    'sso-team-id': 'string',
    'allow-member-token-management': 'bool',
    permissions: { object: { 'can-destroy': 'bool', 'can-update-membership': 'bool' } }
  },
  relations: { users: { struct: () => USER, many: true }, 'organization-memberships': { struct: () => MEMBERSHIP, many: true } }
}

export const PROJECT: GoStruct = { type: 'projects', attributes: { name: 'string', description: 'string' }, relations: {} }

export const ORGANIZATION: GoStruct = {
  type: 'organizations',
  attributes: {
    'assessments-enforced': 'bool',
    'collaborator-auth-policy': 'string',
    'cost-estimation-enabled': 'bool',
    'created-at': 'time',
    'default-execution-mode': 'string',
    email: 'string',
    'external-id': 'string',
    'is-unified': 'bool',
    'owners-team-saml-role-id': 'string',
    'saml-enabled': 'bool',
    'session-remember': 'int',
    'session-timeout': 'int',
    'trial-expires-at': 'time',
    'two-factor-conformant': 'bool'
  },
  relations: { 'default-project': { struct: () => PROJECT, many: false } }
}

export const MEMBERSHIP: GoStruct = {
  type: 'organization-memberships',
  attributes: { status: 'string', email: 'string' },
  relations: {
    organization: { struct: () => ORGANIZATION, many: false },
    user: { struct: () => USER, many: false },
    teams: { struct: () => TEAM, many: true }
  }
}

/** RFC 3339, as Go's time parse takes it (go-tfe's iso8601 attributes). */
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/

function fieldErrors (value: unknown, type: GoField, path: string): string[] {
  if (value === null || value === undefined) return []
  if (type === 'string') return typeof value === 'string' ? [] : [`${path}: not a string`]
  if (type === 'bool') return typeof value === 'boolean' ? [] : [`${path}: not a bool`]
  if (type === 'int') return typeof value === 'number' && Number.isSafeInteger(value) ? [] : [`${path}: not an int`]
  if (type === 'time') return typeof value === 'string' && RFC3339.test(value) ? [] : [`${path}: not an RFC 3339 time`]
  if (typeof value !== 'object' || Array.isArray(value)) return [`${path}: not an object`]
  return Object.entries(type.object).flatMap(([name, field]) => fieldErrors((value as Record<string, unknown>)[name], field, `${path}.${name}`))
}

/** One node into `struct`, its relations resolved from `included`; `errors` collects what the decoder would raise. */
export function decode (node: any, struct: GoStruct, included: any[], errors: string[], path = 'data', depth = 0): Decoded {
  if (typeof node?.id === 'string' && node.id !== '' && node.type !== struct.type) {
    errors.push(`${path}: Trying to Unmarshal an object of type "${String(node?.type)}", but "${struct.type}" does not match`)
  }
  const attributes: Record<string, unknown> = {}
  for (const [name, type] of Object.entries(struct.attributes)) {
    const value = node?.attributes?.[name]
    errors.push(...fieldErrors(value, type, `${path}.attributes.${name}`))
    attributes[name] = value ?? null
  }
  const relations: Decoded['relations'] = {}
  for (const [name, relation] of Object.entries(struct.relations)) {
    const data = node?.relationships?.[name]?.data
    if (data === undefined || data === null) { relations[name] = relation.many ? [] : null; continue }
    if (relation.many !== Array.isArray(data)) { errors.push(`${path}.relationships.${name}: ${relation.many ? 'not an array' : 'an array'}`); continue }
    // a related node's own relations are decoded one level down only (go-tfe resolves them from included the same way)
    const one = (shallow: any, i?: number) => {
      const full = included.find((x) => x.type === shallow?.type && x.id === shallow?.id) ?? shallow
      return depth > 1 ? { id: full?.id, attributes: {}, relations: {} } : decode(full, relation.struct(), included, errors, `${path}.relationships.${name}${i === undefined ? '' : `[${i}]`}`, depth + 1)
    }
    relations[name] = relation.many ? (data as any[]).map(one) : one(data)
  }
  return { id: node?.id, attributes, relations }
}

/** `UnmarshalPayload`: one resource. */
export function decodeOne (document: any, struct: GoStruct): { errors: string[], value: Decoded } {
  const errors: string[] = []
  return { value: decode(document?.data, struct, document?.included ?? [], errors), errors }
}

/** `UnmarshalManyPayload` and the list's `Pagination` (from meta.pagination, ints; null is 0). */
export function decodeMany (document: any, struct: GoStruct): { errors: string[], items: Decoded[], pagination: Record<string, number> } {
  const errors: string[] = []
  if (!Array.isArray(document?.data)) errors.push('data: not an array')
  const items = (document?.data ?? []).map((node: any, i: number) => decode(node, struct, document?.included ?? [], errors, `data[${i}]`))
  const pagination = document?.meta?.pagination ?? {}
  for (const key of ['current-page', 'prev-page', 'next-page', 'total-count', 'total-pages']) errors.push(...fieldErrors(pagination[key], 'int', `meta.pagination.${key}`))
  return { errors, items, pagination: Object.fromEntries(Object.entries(pagination).map(([key, value]) => [key, typeof value === 'number' ? value : 0])) }
}
