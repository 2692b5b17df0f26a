import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { build } from '../helper.js'
import { validateResponse, type Operation } from '../openapi.js'
import { CALLERS, directorySeed } from '../teams/directory.js'

export { CALLERS }

/** Emails the seed gives a few of the world's users (DESIGN §14.2: set by whoever manages them). */
export const EMAILS: Record<string, string> = {
  writer: 'writer@acme.test',
  reader: 'Reader@Acme.test',
  'globex-user': 'globex@globex.test',
  lonely: 'lonely@nowhere.test'
}

/** The directory's seed (tests/teams/directory.ts) with those emails, and `extra` users on top. */
export function peopleSeed (extra: Array<Record<string, unknown>> = []): any {
  const seed = directorySeed()
  for (const user of seed.users) if (EMAILS[user.username] !== undefined) user.email = EMAILS[user.username]
  seed.users.push(...extra)
  return seed
}

/** The world with emails (and the directory's callers): the owners team and its membership are the host's, as buildDirectory makes them. */
export async function buildPeople (t: Test): Promise<FastifyInstance> {
  const app = await build(t, { seed: peopleSeed() })
  await app.db.updateTable('teams').set({ managed_by: 'host' }).where('id', '=', 'team-owners').execute()
  await app.db.updateTable('team_memberships').set({ managed_by: 'host' }).where('team_id', '=', 'team-owners').execute()
  return app
}

/** The membership id of a user in an organization. */
export async function membershipOf (app: FastifyInstance, userId: string, organizationId = 'org-acme'): Promise<string | undefined> {
  return (await app.db.selectFrom('organization_memberships').select('id')
    .where('user_id', '=', userId).where('organization_id', '=', organizationId).executeTakeFirst())?.id
}

/**
 * The Organization Memberships API (and a team's members by membership, GET /organizations) as a
 * client sends it. Every 2xx answer is checked against the project's OpenAPI description.
 */
export function peopleClient (t: Test, app: FastifyInstance) {
  const send = async (operation: Operation | undefined, method: 'GET' | 'POST' | 'DELETE', path: string, token: string, body?: unknown): Promise<LightMyRequestResponse> => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` }
    if (method !== 'GET') headers['content-type'] = 'application/vnd.api+json'
    const res = await app.inject({ method, url: `/api/v2${path}`, headers, ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }) })
    if (operation !== undefined && res.statusCode < 300) {
      const { valid, errors } = validateResponse(operation, res.body === '' ? '' : res.json())
      if (!valid) t.fail(`${method} ${path}: the ${res.statusCode} response does not match schemas/openapi.json`, { errors, body: res.body })
    }
    return res
  }
  const memberships = (ids: string[]) => ({ data: ids.map((id) => ({ type: 'organization-memberships', id })) })
  return {
    send,
    list: (organization: string, token: string, query = '') => send('listOrganizationMemberships', 'GET', `/organizations/${organization}/organization-memberships${query}`, token),
    invite: (organization: string, email: string, token: string, teams: string[] = []) => send('createOrganizationMembership', 'POST', `/organizations/${organization}/organization-memberships`, token, {
      data: { type: 'organization-memberships', attributes: { email }, ...(teams.length === 0 ? {} : { relationships: { teams: { data: teams.map((id) => ({ type: 'teams', id })) } } }) }
    }),
    show: (id: string, token: string, query = '') => send('showOrganizationMembership', 'GET', `/organization-memberships/${id}${query}`, token),
    destroy: (id: string, token: string) => send('deleteOrganizationMembership', 'DELETE', `/organization-memberships/${id}`, token),
    addToTeam: (team: string, ids: string[], token: string) => send('addTeamOrganizationMemberships', 'POST', `/teams/${team}/relationships/organization-memberships`, token, memberships(ids)),
    removeFromTeam: (team: string, ids: string[], token: string) => send('removeTeamOrganizationMemberships', 'DELETE', `/teams/${team}/relationships/organization-memberships`, token, memberships(ids)),
    ofTeam: (team: string, token: string, query = '') => send('listTeamOrganizationMemberships', 'GET', `/teams/${team}/relationships/organization-memberships${query}`, token),
    team: (team: string, token: string, query = '') => send('showTeam', 'GET', `/teams/${team}${query}`, token),
    organizations: (token: string, query = '') => send('listOrganizations', 'GET', `/organizations${query}`, token)
  }
}
