import { sql, type Kysely } from 'kysely'
import type { Database, ManagedBy } from '../db/database.js'
import { table } from '../db/tables.js'
import { DirectoryError, notFound } from './errors.js'
import { validated } from './host-input.js'
import type { Directory, DirectoryCallOptions, DirectoryOrganizationMembership } from './host-types.js'
import { createMembership, removeMembership, type MembershipRefusal } from './organization-memberships.js'
import type { ChangeSource } from './source.js'

/** One call of the host's directory: its options checked, then one transaction (src/directory/host-directory.ts). */
type Call = <T>(options: DirectoryCallOptions | undefined, work: (trx: Kysely<Database>, source: ChangeSource) => Promise<T>) => Promise<T>

/**
 * The host's organization memberships (DESIGN §14.2): a person invited by email, a membership
 * ended, an organization's memberships listed — the directory's own changes
 * (src/directory/organization-memberships.ts), asked by the host, which is trusted: it may end
 * any membership, a seed's included (the owners team still keeps a member).
 */
export function hostMemberships (call: Call, possible: (id: string, what: string) => string):
Pick<Directory, 'createOrganizationMembership' | 'removeOrganizationMembership' | 'listOrganizationMemberships'> {
  return {
    createOrganizationMembership: async (membership, options) => {
      const input = validated('CreateOrganizationMembership', membership, 'membership')
      return await call(options, async (trx, source) => {
        const result = await createMembership(trx, source, { id: input.organizationId }, input.email, input.teamIds ?? [])
        if ('refusal' in result) throw refusalError(result.refusal, 'organization', input.organizationId)
        return (await membershipsOf(trx, sql<boolean>`m.id = ${result.id}`))[0]!
      })
    },
    removeOrganizationMembership: async (id, options) => {
      await call(options, async (trx, source) => {
        const result = await removeMembership(trx, source, possible(id, 'organization membership'))
        if ('refusal' in result) throw refusalError(result.refusal, 'organization membership', id)
      })
    },
    listOrganizationMemberships: async (organizationId, options) => {
      return await call(options, async (trx) => {
        const organization = await trx.selectFrom('organizations').select('id').where('id', '=', possible(organizationId, 'organization')).executeTakeFirst()
        if (organization === undefined) throw notFound('organization', organizationId)
        return await membershipsOf(trx, sql<boolean>`m.organization_id = ${organization.id}`)
      })
    }
  }
}

/** A refusal as the host's DirectoryError; `what` `id` names what the call addressed. */
function refusalError (refusal: MembershipRefusal, what: string, id: string): DirectoryError {
  switch (refusal.reason) {
    case 'hidden': return notFound(what, id)
    case 'taken': return new DirectoryError('conflict', 'the organization already has a membership for this email')
    case 'teams': return new DirectoryError('not-found', `no team with id ${JSON.stringify(refusal.teams[0])} in the organization`)
    case 'last-owner': return new DirectoryError('invalid', `the person is the last member of the owners team "${refusal.team}": an organization always keeps an owner`)
    default: return new DirectoryError('invalid', refusal.reason)
  }
}

/** The memberships `where` keeps (over `m`), oldest first, as the host gets them. */
async function membershipsOf (trx: Kysely<Database>, where: ReturnType<typeof sql<boolean>>): Promise<DirectoryOrganizationMembership[]> {
  const rows = await sql<{ id: string, organization_id: string, user_id: string, email: string | null, status: 'active' | 'invited', team_ids: string[], managed_by: ManagedBy, created_at: Date }>`
    select m.id, m.organization_id, m.user_id, u.email, m.status, m.managed_by, m.created_at,
      array(select t.id from ${table.teams} t where t.organization_id = m.organization_id
        and (exists (select 1 from ${table.team_memberships} tm where tm.team_id = t.id and tm.user_id = m.user_id)
          or exists (select 1 from ${table.organization_membership_teams} omt where omt.team_id = t.id and omt.membership_id = m.id))
        order by t.id) as team_ids
    from ${table.organization_memberships} m join ${table.users} u on u.id = m.user_id
    where ${where} order by m.created_at, m.id`.execute(trx)
  return rows.rows.map((row) => ({
    id: row.id,
    organizationId: row.organization_id,
    userId: row.user_id,
    email: row.email,
    status: row.status,
    teamIds: row.team_ids,
    managedBy: row.managed_by,
    createdAt: new Date(row.created_at)
  }))
}
