import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { Caller } from '../auth/caller.js'
import { addMembers, removeMembers, type MembersRefusal } from '../directory/memberships.js'
import { apiSource } from '../directory/source.js'

export type { MembersRefusal }

/**
 * A team's members through the API (DESIGN §9.4), by username: the caller asks the directory
 * (src/directory/memberships.ts), whose one statement per change decides who may
 * (`managesMembersOf`) and records an event per membership it adds or removes.
 */
export class TeamMembersRepository {
  constructor (private readonly db: Kysely<Database>) {}

  /** Adds the users, by username, as API-managed members; present members are left as they are. */
  async add (caller: Caller, teamId: string, usernames: string[], requestId: string): Promise<MembersRefusal | undefined> {
    const result = await addMembers(this.db, apiSource(caller, requestId), teamId, { usernames })
    return 'reason' in result ? result : undefined
  }

  /**
   * Removes the users, by username; users who are not members are left out. Nothing is removed
   * when one of them is unknown, when a membership to remove is the seed file's, or when it would
   * leave the owners team without a member.
   */
  async remove (caller: Caller, teamId: string, usernames: string[], requestId: string): Promise<MembersRefusal | undefined> {
    return await removeMembers(this.db, apiSource(caller, requestId), teamId, { usernames })
  }
}
