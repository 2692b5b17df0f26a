import { readFileSync } from 'node:fs'
import { Ajv, type ValidateFunction } from 'ajv'

/**
 * HashiCorp's own OpenAPI description of the team-workspaces endpoints (../shared/reference),
 * compiled so that tests can check every success response against it.
 */
const reference = JSON.parse(readFileSync(new URL('../../shared/reference/hcp-terraform-team-workspaces.openapi.json', import.meta.url), 'utf8'))

export type Operation = 'list' | 'show' | 'add' | 'update' | 'remove'
const OPERATIONS: Record<Operation, [string, string, string]> = {
  list: ['/team-workspaces', 'get', '200'],
  show: ['/team-workspaces/{team_workspace_id}', 'get', '200'],
  // the reference says 201; HCP Terraform answers 200 (the seed spec), with the same document
  add: ['/team-workspaces', 'post', '201'],
  update: ['/team-workspaces/{team_workspace_id}', 'patch', '200'],
  remove: ['/team-workspaces/{team_workspace_id}', 'delete', '204']
}

/** OpenAPI 3.0's `nullable` is not JSON Schema: turn it into a `null` alternative. */
function toJsonSchema (node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema)
  if (node === null || typeof node !== 'object') return node
  const { nullable, example, readOnly, ...rest } = node as Record<string, unknown>
  const out = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, toJsonSchema(v)]))
  return nullable === true ? { anyOf: [out, { type: 'null' }] } : out
}

const ajv = new Ajv({ strict: false, allErrors: true })
const validators = new Map<Operation, ValidateFunction | null>()

export function referenceValidator (operation: Operation): ValidateFunction | null {
  if (!validators.has(operation)) {
    const [path, method, status] = OPERATIONS[operation]
    const response = reference[path][method].responses[status]
    const schema = response.content?.['application/vnd.api+json']?.schema
    validators.set(operation, schema === undefined ? null : ajv.compile(toJsonSchema(schema) as object))
  }
  return validators.get(operation)!
}

/** Whether a response body matches the reference schema of its operation; the errors when not. */
export function validateAgainstReference (operation: Operation, body: unknown): { valid: boolean, errors: unknown } {
  const validate = referenceValidator(operation)
  if (validate === null) return { valid: body === '' || body === undefined, errors: 'expected no body' }
  const valid = validate(body)
  return { valid, errors: validate.errors }
}
