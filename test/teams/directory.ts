import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { build } from '../helper.js'
import { TOKENS, world } from '../fixtures/world.js'
import { validateResponse, type Operation } from '../openapi.js'

/** Every organization-access flag, in go-tfe's order. */
export const FLAGS = ['manage-policies', 'manage-policy-overrides', 'delegate-policy-overrides', 'manage-workspaces', 'manage-vcs-settings', 'manage-providers',
  'manage-modules', 'manage-run-tasks', 'manage-projects', 'read-workspaces', 'read-projects', 'manage-membership', 'manage-teams',
  'manage-organization-access', 'access-secret-teams', 'manage-agent-pools'] as const

export const flags = (value: boolean, overrides: Record<string, boolean> = {}): Record<string, boolean> =>
  ({ ...Object.fromEntries(FLAGS.map((flag) => [flag, value])), ...overrides })

/** The world's callers, and those of the directory: a manage-teams team (token and member), a manage-membership member, another organization's owner. */
export const CALLERS = {
  ...TOKENS,
  leadsTeam: 'acme-leads-team-token',
  lead: 'lead-user-token',
  hr: 'hr-user-token',
  globexOwner: 'globex-owner-token'
} as const

/** The seed buildDirectory applies (applied again, it is a restart of a seeded service). */
export function directorySeed (): any {
  const seed = structuredClone(world) as any
  seed.users.push(
    { id: 'user-lead', username: 'lead', tokens: [CALLERS.lead] },
    { id: 'user-hr', username: 'hr', tokens: [CALLERS.hr] },
    { id: 'user-globex-owner', username: 'globex-owner', tokens: [CALLERS.globexOwner] },
    { id: 'user-spare', username: 'spare' }
  )
  seed.organizations[0].teams.push(
    { id: 'team-leads', name: 'leads', visibility: 'secret', members: ['lead'], tokens: [CALLERS.leadsTeam], 'organization-access': { 'manage-teams': true } },
    { id: 'team-membership', name: 'membership', visibility: 'secret', members: ['hr'], 'organization-access': { 'manage-membership': true } },
    // spare is a member of the organization (a non-owner finds only members), through a team that grants nothing
    { id: 'team-staff', name: 'staff', visibility: 'secret', members: ['spare'] }
  )
  seed.organizations[1].teams.push({ id: 'team-globex-owners', name: 'owners', owners: true, members: ['globex-owner'] })
  return seed
}

/**
 * The fixture world plus a `leads` team (manage-teams, with a team token and the user `lead`), a
 * `membership` team (manage-membership, the user `hr`), a `staff` team of the user `spare`
 * (granting nothing), and an owner of the other organization. The owners team and its membership
 * are made the host's (the seed manages them in the fixture), so that the owners team's own rules
 * can be seen beside the seed's.
 */
export async function buildDirectory (t: Test): Promise<FastifyInstance> {
  const app = await build(t, { seed: directorySeed() })
  await app.db.updateTable('teams').set({ managed_by: 'host' }).where('id', '=', 'team-owners').execute()
  await app.db.updateTable('team_memberships').set({ managed_by: 'host' }).where('team_id', '=', 'team-owners').execute()
  return app
}

/**
 * The Teams and Team Membership APIs as a client sends them. Every 2xx answer is checked against
 * the project's OpenAPI description.
 */
export function teamsClient (t: Test, app: FastifyInstance) {
  const send = async (operation: Operation, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, token: string, body?: unknown): Promise<LightMyRequestResponse> => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` }
    if (method !== 'GET') headers['content-type'] = 'application/vnd.api+json'
    const res = await app.inject({ method, url: `/api/v2${path}`, headers, ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }) })
    if (res.statusCode < 300) {
      const { valid, errors } = validateResponse(operation, res.body === '' ? '' : res.json())
      if (!valid) t.fail(`${method} ${path}: the ${res.statusCode} response does not match schemas/openapi.json`, { errors, body: res.body })
    }
    return res
  }
  const users = (usernames: string[]) => ({ data: usernames.map((id) => ({ type: 'users', id })) })
  return {
    show: (id: string, token: string, query = '') => send('showTeam', 'GET', `/teams/${id}${query}`, token),
    list: (organization: string, token: string, query = '') => send('listTeams', 'GET', `/organizations/${organization}/teams${query}`, token),
    create: (organization: string, attributes: Record<string, unknown>, token: string) =>
      send('createTeam', 'POST', `/organizations/${organization}/teams`, token, { data: { type: 'teams', attributes } }),
    update: (id: string, attributes: Record<string, unknown>, token: string) =>
      send('updateTeam', 'PATCH', `/teams/${id}`, token, { data: { type: 'teams', attributes } }),
    destroy: (id: string, token: string) => send('deleteTeam', 'DELETE', `/teams/${id}`, token),
    addMembers: (id: string, usernames: string[], token: string) => send('addTeamMembers', 'POST', `/teams/${id}/relationships/users`, token, users(usernames)),
    removeMembers: (id: string, usernames: string[], token: string) => send('removeTeamMembers', 'DELETE', `/teams/${id}/relationships/users`, token, users(usernames))
  }
}

/** Headers that differ between any two answers (the moment, the request), left out of "byte-identical". */
const VARYING = new Set(['date', 'x-request-id', 'request-id'])

/** An answer as a client can tell it apart: status, headers (but the moment's and the request's own), body. */
export const observable = (res: LightMyRequestResponse) => ({
  status: res.statusCode,
  headers: Object.fromEntries(Object.entries(res.headers).filter(([name]) => !VARYING.has(name.toLowerCase()))),
  body: res.body
})
