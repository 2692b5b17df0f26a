import t from 'tap'
import { readFileSync } from 'node:fs'
import SwaggerParser from '@apidevtools/swagger-parser'
import { OPENAPI_FILE, openApiText } from '../src/cli.js'

const generated = JSON.parse(await openApiText())

t.test('schemas/openapi.json is what the routes generate (run `npm run schemas` when this fails)', async (t) => {
  t.same(JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')), generated)
})

t.test('the document is valid OpenAPI 3', async (t) => {
  const api = await SwaggerParser.validate(structuredClone(generated))
  t.match((api as { openapi: string }).openapi, /^3\./)
})

t.test('it lists the operations with every response status of DESIGN §4, §7, §8, §9, §11 and §14', async (t) => {
  const expected: Record<string, [string, string, string[]]> = {
    listTeamWorkspaces: ['/api/v2/team-workspaces', 'get', ['200', '400', '401', '404', '422', '503']],
    showTeamWorkspace: ['/api/v2/team-workspaces/{id}', 'get', ['200', '401', '404', '503']],
    addTeamAccess: ['/api/v2/team-workspaces', 'post', ['200', '400', '401', '404', '415', '422', '503']],
    updateTeamAccess: ['/api/v2/team-workspaces/{id}', 'patch', ['200', '400', '401', '404', '415', '422', '503']],
    removeTeamAccess: ['/api/v2/team-workspaces/{id}', 'delete', ['204', '401', '404', '503']],
    showWorkspace: ['/api/v2/workspaces/{id}', 'get', ['200', '400', '401', '404', '503']],
    showWorkspaceByName: ['/api/v2/organizations/{organization}/workspaces/{name}', 'get', ['200', '400', '401', '404', '503']],
    listWorkspaces: ['/api/v2/organizations/{organization}/workspaces', 'get', ['200', '400', '401', '404', '422', '503']],
    createWorkspace: ['/api/v2/organizations/{organization}/workspaces', 'post', ['201', '400', '401', '404', '415', '422', '503']],
    updateWorkspace: ['/api/v2/workspaces/{id}', 'patch', ['200', '400', '401', '404', '415', '422', '503']],
    updateWorkspaceByName: ['/api/v2/organizations/{organization}/workspaces/{name}', 'patch', ['200', '400', '401', '404', '415', '422', '503']],
    deleteWorkspace: ['/api/v2/workspaces/{id}', 'delete', ['204', '401', '404', '422', '503']],
    deleteWorkspaceByName: ['/api/v2/organizations/{organization}/workspaces/{name}', 'delete', ['204', '401', '404', '422', '503']],
    safeDeleteWorkspace: ['/api/v2/workspaces/{id}/actions/safe-delete', 'post', ['204', '401', '404', '422', '503']],
    safeDeleteWorkspaceByName: ['/api/v2/organizations/{organization}/workspaces/{name}/actions/safe-delete', 'post', ['204', '401', '404', '422', '503']],
    addWorkspaceTags: ['/api/v2/workspaces/{id}/relationships/tags', 'post', ['204', '400', '401', '404', '415', '422', '503']],
    removeWorkspaceTags: ['/api/v2/workspaces/{id}/relationships/tags', 'delete', ['204', '400', '401', '404', '415', '422', '503']],
    showTeam: ['/api/v2/teams/{id}', 'get', ['200', '400', '401', '404', '503']],
    listTeams: ['/api/v2/organizations/{organization}/teams', 'get', ['200', '400', '401', '404', '422', '503']],
    createTeam: ['/api/v2/organizations/{organization}/teams', 'post', ['201', '400', '401', '404', '415', '422', '503']],
    updateTeam: ['/api/v2/teams/{id}', 'patch', ['200', '400', '401', '404', '415', '422', '503']],
    deleteTeam: ['/api/v2/teams/{id}', 'delete', ['204', '401', '404', '422', '503']],
    addTeamMembers: ['/api/v2/teams/{id}/relationships/users', 'post', ['204', '400', '401', '404', '415', '422', '503']],
    removeTeamMembers: ['/api/v2/teams/{id}/relationships/users', 'delete', ['204', '400', '401', '404', '415', '422', '503']],
    listAuditTrail: ['/api/v2/organization/audit-trail', 'get', ['200', '401', '404', '422', '503']],
    regenerateTeamToken: ['/api/v2/teams/{id}/authentication-token', 'post', ['201', '400', '401', '404', '415', '422', '503']],
    createTeamToken: ['/api/v2/teams/{id}/authentication-tokens', 'post', ['201', '400', '401', '404', '415', '422', '503']],
    showTeamToken: ['/api/v2/teams/{id}/authentication-token', 'get', ['200', '401', '404', '503']],
    listTeamTokens: ['/api/v2/teams/{id}/authentication-tokens', 'get', ['200', '401', '404', '422', '503']],
    revokeTeamToken: ['/api/v2/teams/{id}/authentication-token', 'delete', ['204', '401', '404', '503']],
    regenerateOrganizationToken: ['/api/v2/organizations/{organization}/authentication-token', 'post', ['201', '400', '401', '404', '415', '422', '503']],
    showOrganizationToken: ['/api/v2/organizations/{organization}/authentication-token', 'get', ['200', '401', '404', '503']],
    revokeOrganizationToken: ['/api/v2/organizations/{organization}/authentication-token', 'delete', ['204', '401', '404', '503']],
    listUserTokens: ['/api/v2/users/{id}/authentication-tokens', 'get', ['200', '401', '404', '422', '503']],
    createUserToken: ['/api/v2/users/{id}/authentication-tokens', 'post', ['201', '400', '401', '404', '415', '422', '503']],
    showToken: ['/api/v2/authentication-tokens/{id}', 'get', ['200', '401', '404', '503']],
    revokeToken: ['/api/v2/authentication-tokens/{id}', 'delete', ['204', '401', '404', '503']],
    showAccount: ['/api/v2/account/details', 'get', ['200', '401', '404', '503']],
    showWorkspaceEffectiveAccess: ['/api/v2/workspaces/{id}/effective-access', 'get', ['200', '400', '401', '404', '422', '503']],
    listTeamEffectiveAccess: ['/api/v2/teams/{id}/effective-access', 'get', ['200', '400', '401', '404', '422', '503']],
    showAccessReview: ['/api/v2/organizations/{organization}/access-review', 'get', ['200', '400', '401', '404', '422', '503']],
    showWorkspaceAccessSet: ['/api/v2/workspaces/{id}/team-access', 'get', ['200', '401', '404', '503']],
    replaceWorkspaceAccessSet: ['/api/v2/workspaces/{id}/team-access', 'put', ['200', '400', '401', '404', '412', '415', '422', '503']],
    showOrganization: ['/api/v2/organizations/{organization}', 'get', ['200', '401', '404', '503']],
    listProjects: ['/api/v2/organizations/{organization}/projects', 'get', ['200', '400', '401', '404', '422', '503']],
    createProject: ['/api/v2/organizations/{organization}/projects', 'post', ['201', '400', '401', '404', '415', '422', '503']],
    showProject: ['/api/v2/projects/{id}', 'get', ['200', '400', '401', '404', '503']],
    updateProject: ['/api/v2/projects/{id}', 'patch', ['200', '400', '401', '404', '415', '422', '503']],
    deleteProject: ['/api/v2/projects/{id}', 'delete', ['204', '401', '404', '422', '503']],
    listTeamProjects: ['/api/v2/team-projects', 'get', ['200', '400', '401', '404', '422', '503']],
    showTeamProject: ['/api/v2/team-projects/{id}', 'get', ['200', '401', '404', '503']],
    addTeamProjectAccess: ['/api/v2/team-projects', 'post', ['201', '400', '401', '404', '415', '422', '503']],
    updateTeamProjectAccess: ['/api/v2/team-projects/{id}', 'patch', ['200', '400', '401', '404', '415', '422', '503']],
    removeTeamProjectAccess: ['/api/v2/team-projects/{id}', 'delete', ['204', '401', '404', '503']],
    listOrganizationMemberships: ['/api/v2/organizations/{organization}/organization-memberships', 'get', ['200', '400', '401', '404', '422', '503']],
    createOrganizationMembership: ['/api/v2/organizations/{organization}/organization-memberships', 'post', ['201', '400', '401', '404', '415', '422', '503']],
    showOrganizationMembership: ['/api/v2/organization-memberships/{id}', 'get', ['200', '400', '401', '404', '503']],
    deleteOrganizationMembership: ['/api/v2/organization-memberships/{id}', 'delete', ['204', '401', '404', '422', '503']],
    addTeamOrganizationMemberships: ['/api/v2/teams/{id}/relationships/organization-memberships', 'post', ['204', '400', '401', '404', '415', '422', '503']],
    removeTeamOrganizationMemberships: ['/api/v2/teams/{id}/relationships/organization-memberships', 'delete', ['204', '400', '401', '404', '415', '422', '503']],
    listTeamOrganizationMemberships: ['/api/v2/teams/{id}/relationships/organization-memberships', 'get', ['200', '401', '404', '422', '503']],
    listOrganizations: ['/api/v2/organizations', 'get', ['200', '401', '422', '503']]
  }
  for (const [operationId, [path, method, statuses]] of Object.entries(expected)) {
    const operation = generated.paths[path]?.[method]
    t.equal(operation?.operationId, operationId, `${method.toUpperCase()} ${path}`)
    t.same(Object.keys(operation?.responses ?? {}).sort(), statuses, `${operationId}: statuses`)
    t.same(operation.security, [{ bearerToken: [] }], `${operationId}: needs a bearer token`)
    const success = operation.responses[statuses[0]!]
    if (statuses[0] !== '204' && operationId !== 'listAuditTrail') t.ok(success.content['application/vnd.api+json'], `${operationId}: answers JSON:API`)
  }
  const extensions = Object.values(generated.paths as Record<string, Record<string, { operationId: string, description: string, 'x-team-access-extension'?: boolean }>>)
    .flatMap((item) => Object.values(item)).filter((operation) => operation['x-team-access-extension'] === true)
  t.same(extensions.map((operation) => operation.operationId).sort(), ['listTeamEffectiveAccess', 'replaceWorkspaceAccessSet', 'showAccessReview', 'showWorkspaceAccessSet', 'showWorkspaceEffectiveAccess'], 'the operations beyond HCP Terraform, and only those, are marked as extensions')
  t.ok(extensions.every((operation) => operation.description.includes('beyond HCP Terraform')), 'and say so')
  t.ok(generated.paths['/api/v2/workspaces/{id}/team-access'].get.responses['200'].headers.ETag, 'the ETag is documented')
  const audit = generated.paths['/api/v2/organization/audit-trail'].get.responses
  t.same(Object.keys(audit['200'].content), ['application/json'], 'the audit trail answers plain JSON, as HCP Terraform')
  t.same(Object.keys(audit['404'].content), ['application/vnd.api+json'], 'its errors are JSON:API error documents')
  t.ok(['filter[workspace][id]', 'filter[team][id]'].every((name) => generated.paths['/api/v2/team-workspaces'].get.parameters.some((p: { name: string }) => p.name === name)), 'both filters are documented')
  t.same(Object.keys(generated.components.schemas).sort(), ['AccessReviewEntry', 'AuthenticationToken', 'ErrorObject', 'MemberTeam', 'MemberUser', 'Organization', 'OrganizationMembership', 'PaginationLinks', 'PaginationMeta', 'Project', 'Team', 'TeamEffectiveAccess', 'TeamProject', 'TeamWorkspace', 'TeamWorkspaceAttributes', 'User', 'UserEffectiveAccess', 'Workspace'], 'shared schemas are named components')
})

t.test('the operations HCP Terraform does not have are marked as extensions (DESIGN §10), and only they', async (t) => {
  const marked = Object.entries(generated.paths as Record<string, Record<string, Record<string, unknown>>>)
    .flatMap(([path, operations]) => Object.entries(operations).filter(([, operation]) => operation['x-team-access-extension'] === true).map(([method]) => `${method} ${path}`))
    .sort()
  t.same(marked, ['get /api/v2/organizations/{organization}/access-review', 'get /api/v2/teams/{id}/effective-access', 'get /api/v2/workspaces/{id}/effective-access', 'get /api/v2/workspaces/{id}/team-access', 'put /api/v2/workspaces/{id}/team-access'])
})
