import { readFileSync } from 'node:fs'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default

/**
 * The project's own OpenAPI document (schemas/openapi.json, generated from the route schemas and
 * checked by `npm run schemas:check`), compiled so that tests check every success response
 * against what the API says it answers. (HashiCorp's description is compared by
 * `npm run check:reference`, outside the suite.)
 */
const document = JSON.parse(readFileSync(new URL('../schemas/openapi.json', import.meta.url), 'utf8'))

export type Operation = 'list' | 'show' | 'add' | 'update' | 'remove' | 'auditTrail' |
  'showTeam' | 'listTeams' | 'createTeam' | 'updateTeam' | 'deleteTeam' | 'addTeamMembers' | 'removeTeamMembers' |
  'workspaceEffectiveAccess' | 'teamEffectiveAccess' |
  'showAccessSet' | 'replaceAccessSet' |
  'listProjects' | 'createProject' | 'showProject' | 'updateProject' |
  'listTeamProjects' | 'showTeamProject' | 'addTeamProjectAccess' | 'updateTeamProjectAccess' |
  'showWorkspace' | 'showWorkspaceByName' | 'listWorkspaces' | 'createWorkspace' | 'updateWorkspace' | 'updateWorkspaceByName' |
  'listOrganizationMemberships' | 'createOrganizationMembership' | 'showOrganizationMembership' | 'deleteOrganizationMembership' |
  'addTeamOrganizationMemberships' | 'removeTeamOrganizationMemberships' | 'listTeamOrganizationMemberships' | 'listOrganizations'
const OPERATIONS: Record<Operation, [string, string, string]> = {
  auditTrail: ['/api/v2/organization/audit-trail', 'get', '200'],
  list: ['/api/v2/team-workspaces', 'get', '200'],
  show: ['/api/v2/team-workspaces/{id}', 'get', '200'],
  add: ['/api/v2/team-workspaces', 'post', '200'],
  update: ['/api/v2/team-workspaces/{id}', 'patch', '200'],
  remove: ['/api/v2/team-workspaces/{id}', 'delete', '204'],
  showTeam: ['/api/v2/teams/{id}', 'get', '200'],
  listTeams: ['/api/v2/organizations/{organization}/teams', 'get', '200'],
  createTeam: ['/api/v2/organizations/{organization}/teams', 'post', '201'],
  updateTeam: ['/api/v2/teams/{id}', 'patch', '200'],
  deleteTeam: ['/api/v2/teams/{id}', 'delete', '204'],
  addTeamMembers: ['/api/v2/teams/{id}/relationships/users', 'post', '204'],
  removeTeamMembers: ['/api/v2/teams/{id}/relationships/users', 'delete', '204'],
  workspaceEffectiveAccess: ['/api/v2/workspaces/{id}/effective-access', 'get', '200'],
  teamEffectiveAccess: ['/api/v2/teams/{id}/effective-access', 'get', '200'],
  showAccessSet: ['/api/v2/workspaces/{id}/team-access', 'get', '200'],
  replaceAccessSet: ['/api/v2/workspaces/{id}/team-access', 'put', '200'],
  listProjects: ['/api/v2/organizations/{organization}/projects', 'get', '200'],
  createProject: ['/api/v2/organizations/{organization}/projects', 'post', '201'],
  showProject: ['/api/v2/projects/{id}', 'get', '200'],
  updateProject: ['/api/v2/projects/{id}', 'patch', '200'],
  listTeamProjects: ['/api/v2/team-projects', 'get', '200'],
  showTeamProject: ['/api/v2/team-projects/{id}', 'get', '200'],
  addTeamProjectAccess: ['/api/v2/team-projects', 'post', '201'],
  updateTeamProjectAccess: ['/api/v2/team-projects/{id}', 'patch', '200'],
  showWorkspace: ['/api/v2/workspaces/{id}', 'get', '200'],
  showWorkspaceByName: ['/api/v2/organizations/{organization}/workspaces/{name}', 'get', '200'],
  listWorkspaces: ['/api/v2/organizations/{organization}/workspaces', 'get', '200'],
  createWorkspace: ['/api/v2/organizations/{organization}/workspaces', 'post', '201'],
  updateWorkspace: ['/api/v2/workspaces/{id}', 'patch', '200'],
  updateWorkspaceByName: ['/api/v2/organizations/{organization}/workspaces/{name}', 'patch', '200'],
  listOrganizationMemberships: ['/api/v2/organizations/{organization}/organization-memberships', 'get', '200'],
  createOrganizationMembership: ['/api/v2/organizations/{organization}/organization-memberships', 'post', '201'],
  showOrganizationMembership: ['/api/v2/organization-memberships/{id}', 'get', '200'],
  deleteOrganizationMembership: ['/api/v2/organization-memberships/{id}', 'delete', '204'],
  addTeamOrganizationMemberships: ['/api/v2/teams/{id}/relationships/organization-memberships', 'post', '204'],
  removeTeamOrganizationMemberships: ['/api/v2/teams/{id}/relationships/organization-memberships', 'delete', '204'],
  listTeamOrganizationMemberships: ['/api/v2/teams/{id}/relationships/organization-memberships', 'get', '200'],
  listOrganizations: ['/api/v2/organizations', 'get', '200']
}

const ajv = new Ajv({ strict: false, allErrors: true })
addFormats(ajv)
ajv.addSchema(document, 'openapi')
const validators = new Map<string, ValidateFunction | null>()

const escape = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1')

/** The validator of one operation's success response, or null when it has no body. */
export function responseValidator (path: string, method: string, status: string): ValidateFunction | null {
  const key = `${method} ${path} ${status}`
  if (!validators.has(key)) {
    const response = document.paths[path]?.[method]?.responses?.[status]
    if (response === undefined) throw new Error(`schemas/openapi.json has no ${key}`)
    // JSON:API, or plain JSON (the audit trail)
    const mediaType = ['application/vnd.api+json', 'application/json'].find((type) => response.content?.[type]?.schema !== undefined)
    validators.set(key, mediaType === undefined
      ? null
      : ajv.compile({ $ref: `openapi#/paths/${escape(path)}/${method}/responses/${status}/content/${escape(mediaType)}/schema` }))
  }
  return validators.get(key)!
}

/** Whether a response body matches the document's schema of its operation; the errors when not. */
export function validateResponse (operation: Operation, body: unknown): { valid: boolean, errors: unknown } {
  const validate = responseValidator(...OPERATIONS[operation])
  if (validate === null) return { valid: body === '' || body === undefined, errors: 'expected no body' }
  const valid = validate(body)
  return { valid, errors: validate.errors }
}
