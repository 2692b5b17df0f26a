import type { MemberTeamResource, MemberUserResource, MembershipResource } from '../../schemas/organization-memberships.js'
import type { OrganizationResource } from '../../schemas/projects.js'
import { resource, segment } from '../jsonapi/document.js'
import type { MemberTeam, MembershipView, OrganizationView } from './memberships-repository.js'

/** The teams of a membership row (the database answers json; a driver may hand it over as text). */
const teamsOf = (row: MembershipView): MemberTeam[] => typeof row.teams === 'string' ? JSON.parse(row.teams) as MemberTeam[] : row.teams

/**
 * A membership as its resource (DESIGN §14.2) for the caller it was read for: its email where the
 * caller reads it (else null), always a user. `prefix` is where the API is mounted.
 */
export function toMembershipResource (row: MembershipView, prefix: string): MembershipResource {
  return resource('organization-memberships', row.id, {
    status: row.status,
    email: row.email,
    'created-at': new Date(row.created_at).toISOString()
  }, {
    organization: { data: { id: row.organization_name, type: 'organizations' as const } },
    user: { data: { id: row.user_id, type: 'users' as const } },
    teams: { data: teamsOf(row).map((team) => ({ id: team.id, type: 'teams' as const })) }
  }, `${prefix}/organization-memberships/${segment(row.id)}`)
}

/** What `include` names on memberships: `user`, `teams`. */
export interface MembershipIncludes { user: boolean, teams: boolean }

/** The users and teams of the memberships, once each, as `include` asks (DESIGN §14.2). */
export function includedOf (rows: MembershipView[], includes: MembershipIncludes, prefix: string): Array<MemberUserResource | MemberTeamResource> {
  const users = new Map<string, MemberUserResource>()
  const teams = new Map<string, MemberTeamResource>()
  for (const row of rows) {
    if (includes.user && !users.has(row.user_id)) {
      users.set(row.user_id, { id: row.user_id, type: 'users', attributes: { username: row.username, email: row.email } })
    }
    if (includes.teams) {
      for (const team of teamsOf(row)) {
        if (!teams.has(team.id)) teams.set(team.id, { id: team.id, type: 'teams', attributes: { name: team.name, visibility: team.visibility }, links: { self: `${prefix}/teams/${segment(team.id)}` } })
      }
    }
  }
  return [...users.values(), ...teams.values()]
}

/** An organization as its resource, as `GET /organizations/:org` and `GET /organizations` answer it. */
export function toOrganizationResource (row: OrganizationView, prefix: string): OrganizationResource {
  return resource('organizations', row.name, {
    name: row.name,
    'external-id': row.id,
    'created-at': new Date(row.created_at).toISOString(),
    permissions: row.permissions as OrganizationResource['attributes']['permissions'],
    mirror: row.mirror === null ? null : { host: row.mirror.host, 'succeeded-at': new Date(row.mirror.succeeded_at).toISOString() }
  },
  { 'default-project': { data: { id: row.default_project_id, type: 'projects' as const } } }, `${prefix}/organizations/${segment(row.name)}`)
}
