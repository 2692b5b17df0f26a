import { sql, type ExpressionBuilder, type Kysely, type Selectable } from 'kysely'
import type { AuditEventTable, Database } from '../db/database.js'
import type { PageRequest } from '../jsonapi/pagination.js'
import { withGrants } from '../access/grants.js'
import { ownsOrganization } from '../access/predicates.js'
import type { Caller } from '../auth/caller.js'

/** An event as the trail serves it; the time already in its wire form. */
export type AuditEventRow = Omit<Selectable<AuditEventTable>, 'id' | 'occurred_at'> & {
  id: string
  /** RFC 3339 in UTC to the microsecond, as stored: a `since` copied from it means exactly that event. */
  timestamp: string
}

export interface AuditPage {
  rows: AuditEventRow[]
  /** Every event after `since`, on every page. */
  total: number
}

/**
 * The audit trail of an organization, read in one statement: a page of its events strictly after
 * `since`, oldest first (ties in time by id, so pages never overlap), and how many there are.
 * Who may read which trail is decided before (src/access/audit-readers.ts); events are written
 * by the statements that change access (./audit-record.ts).
 */
export class AuditRepository {
  constructor (private readonly db: Kysely<Database>) {}

  /**
   * The organizations whose trail the caller may read (DESIGN §8: those it owns), by id — of them,
   * the one named `name` when it is given. A token no longer usable owns none.
   */
  async ownedOrganizations (caller: Caller, name: string | undefined): Promise<string[]> {
    const rows = await withGrants(this.db, caller).selectFrom('organizations as o').select('o.id')
      .where(sql<boolean>`o.id in (select g.organization_id from grants g where g.is_owner)`)
      .$call((q) => name === undefined ? q : q.where('o.name', '=', name))
      .orderBy('o.id').limit(2).execute()
    return rows.map((row) => row.id)
  }

  /**
   * `since`: an instant in UTC (see ./audit-query.ts), or undefined for the whole trail.
   * Undefined when the caller owns the organization no more (its token was revoked, its membership
   * of the owners team removed: see src/access/grants.ts), so the route answers as for any "nothing".
   */
  async page (caller: Caller, organizationId: string, since: string | undefined, page: PageRequest): Promise<AuditPage | undefined> {
    const inTrail = (eb: ExpressionBuilder<Database, 'audit_events'>) => eb.and([
      eb('audit_events.organization_id', '=', organizationId),
      // nothing is read for a caller without grants (a token revoked since it was last looked up)
      ownsOrganization(organizationId),
      ...(since === undefined ? [] : [eb('audit_events.occurred_at', '>', sql<Date>`${since}::timestamptz`)])
    ])
    const skip = (page.number - 1) * page.size
    const rows = await withGrants(this.db, caller)
      // the count runs once, whatever the page; a page past the end still says how many there are.
      // It reads the primary key's entries alone (an index-only scan), never the events.
      .with((cte) => cte('total').materialized(), (qc) => qc.selectFrom('audit_events').where(inTrail)
        .select((eb) => eb.fn.countAll<number | string>().as('count')))
      // where the page starts: the key of its first event, found by skipping keys in the primary
      // key (index-only: a deep page skips index entries, never reads the events it skips)
      .with((cte) => cte('start').materialized(), (qc) => qc.selectFrom('audit_events').where(inTrail)
        .select(['occurred_at', 'id']).orderBy('occurred_at').orderBy('id').offset(skip).limit(1))
      .selectFrom('total')
      .leftJoin('start', (join) => join.onTrue())
      // then the page itself, from that key on, in the trail's order
      .leftJoinLateral((eb) => eb.selectFrom('audit_events').where(inTrail)
        .where(sql<boolean>`(audit_events.occurred_at, audit_events.id) >= (start.occurred_at, start.id)`)
        .select(['id', 'organization_id', 'occurred_at', 'accessor_kind', 'accessor_id', 'accessor_description', 'request_id',
          'action', 'resource_type', 'resource_id', 'meta', 'workspace_id', 'team_id', 'team_name', 'permissions'])
        .select(sql<string>`to_char(occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('timestamp'))
        .orderBy('occurred_at').orderBy('id')
        .limit(page.size)
        .as('e'), (join) => join.onTrue())
      .select(ownsOrganization(organizationId).as('allowed'))
      .select(['total.count', 'e.id', 'e.organization_id', 'e.timestamp', 'e.accessor_kind', 'e.accessor_id', 'e.accessor_description',
        'e.request_id', 'e.action', 'e.resource_type', 'e.resource_id', 'e.meta', 'e.workspace_id', 'e.team_id', 'e.team_name', 'e.permissions'])
      .orderBy('e.occurred_at').orderBy('e.id')
      .execute()
    if (rows[0]?.allowed !== true) return undefined
    return {
      rows: rows.filter((row): row is typeof row & AuditEventRow => row.id !== null).map(({ count: _, allowed: __, ...row }) => row),
      total: Number(rows[0]?.count ?? 0)
    }
  }
}
