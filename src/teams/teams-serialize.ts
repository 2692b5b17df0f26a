import type { TeamResource, UserResource } from '../../schemas/teams.js'
import { organizationAccessOf } from '../access/organization-access.js'
import { resource, segment } from '../jsonapi/document.js'
import type { TeamMember, TeamView } from './teams-repository.js'

/** The members of a team row (the database answers json; a driver may hand it over as text). */
export const membersOf = (row: TeamView): TeamMember[] => typeof row.users === 'string' ? JSON.parse(row.users) as TeamMember[] : row.users

/** The organization memberships of a team row (json, or text). */
const membershipsOf = (row: TeamView): string[] => typeof row.memberships === 'string' ? JSON.parse(row.memberships) as string[] : row.memberships

/** A team as its resource (DESIGN §7, §9.3, §14.3) for the caller it was read for; `prefix` is where the API is mounted. */
export function toTeamResource (row: TeamView, prefix: string): TeamResource {
  const members = membersOf(row)
  return resource('teams', row.id, {
    name: row.name,
    visibility: row.visibility,
    'users-count': members.length,
    'organization-access': organizationAccessOf(row),
    'sso-team-id': row.sso_team_id,
    'allow-member-token-management': row.allow_member_token_management,
    permissions: { 'can-update-membership': row.permissions[0], 'can-destroy': row.permissions[1] }
  }, {
    organization: { data: { id: row.organization_name, type: 'organizations' as const } },
    users: { data: members.map((member) => ({ id: member.id, type: 'users' as const })) },
    'organization-memberships': { data: membershipsOf(row).map((id) => ({ id, type: 'organization-memberships' as const })) }
  }, `${prefix}/teams/${segment(row.id)}`)
}

/** The members of the teams, once each, as the `included` users of `include=users` (DESIGN §9.4). */
export function includedUsers (rows: TeamView[]): UserResource[] {
  const seen = new Map<string, UserResource>()
  for (const member of rows.flatMap(membersOf)) {
    if (!seen.has(member.id)) seen.set(member.id, { id: member.id, type: 'users', attributes: { username: member.username } })
  }
  return [...seen.values()]
}
