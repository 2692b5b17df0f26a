import fp from 'fastify-plugin'
import { sql, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { loggable } from '../jsonapi/errors.js'

/** How often the purge runs after the one on start. */
export const PURGE_EVERY_MS = 60 * 60 * 1000
/** Events deleted per statement: the embedded database runs one statement at a time, and requests wait behind it. */
const BATCH = 1000

/**
 * Deletes the events older than `retentionDays` (DESIGN §5, AUDIT_RETENTION_DAYS), a batch per
 * statement so that no statement holds the database for long; returns how many went. 0 keeps
 * every event. Safe to run from several replicas at once: each batch deletes what is still there.
 */
export async function purgeExpiredEvents (db: Kysely<Database>, retentionDays: number): Promise<number> {
  if (!(retentionDays > 0)) return 0
  let purged = 0
  for (;;) {
    const result = await db.deleteFrom('audit_events')
      .where((eb) => eb(eb.refTuple('organization_id', 'occurred_at', 'id'), 'in', eb.selectFrom('audit_events')
        .select(['organization_id', 'occurred_at', 'id'])
        .where('occurred_at', '<', sql<Date>`now() - make_interval(days => ${retentionDays}::int)`)
        .limit(BATCH)
        .$asTuple('organization_id', 'occurred_at', 'id')))
      .executeTakeFirst()
    const n = Number(result.numDeletedRows)
    purged += n
    if (n < BATCH) return purged
  }
}

export interface AuditRetentionOptions {
  db: Kysely<Database>
  /** Days an event is kept; 0 keeps every event (and no timer runs). */
  retentionDays: number
  /** How often to purge after the first purge on start (default hourly). */
  everyMs?: number
}

/**
 * The purge, in the background: once when the app is ready, then every `everyMs` — never on a
 * request's path. The timer does not keep the process alive; closing the app stops it and waits
 * for a purge in progress, so the database is never closed under it. A failed purge is logged
 * and tried again next time.
 */
export default fp<AuditRetentionOptions>(async (app, { db, retentionDays, everyMs = PURGE_EVERY_MS }) => {
  if (!(retentionDays > 0)) return
  let running: Promise<void> | undefined
  let timer: NodeJS.Timeout | undefined
  const purge = () => {
    running ??= purgeExpiredEvents(db, retentionDays)
      .then((purged) => { if (purged > 0) app.log.info({ purged, retentionDays }, 'expired audit events purged') })
      .catch((err: Error) => { app.log.warn({ err: loggable(err) }, 'audit event purge failed') })
      .finally(() => { running = undefined })
  }
  app.addHook('onReady', async () => {
    purge()
    timer = setInterval(purge, everyMs).unref()
  })
  app.addHook('preClose', async () => {
    clearInterval(timer)
    await running
  })
}, { name: 'team-access-audit-retention', fastify: '5.x' })
