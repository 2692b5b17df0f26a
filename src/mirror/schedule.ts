import { readFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import promClient from 'prom-client'
import type { Connection } from '../db/connect.js'
import { loggable } from '../jsonapi/errors.js'
import { runLine, runMirror } from './run.js'

/**
 * The standalone service's mirror (DESIGN §13.1): MIRROR_FROM, MIRROR_ORGANIZATION,
 * MIRROR_TOKEN_FILE, MIRROR_INTERVAL (the first run at start, each next one an interval after the
 * last ended), MIRROR_RATE. One replica runs it at a time: on PostgreSQL a session advisory lock
 * per organization, taken without waiting — a replica that finds it held skips its turn and
 * serves; an embedded database is one process's already (its DATA_DIR lock). The token file is
 * read at each run (a rotated token is used from the next), and its content goes to the reader
 * only. /metrics reports the last success, its duration and requests, and the last failure.
 */
export interface MirrorSchedule {
  from: string
  organization: string
  tokenFile: string
  intervalMs: number
  rate: number
}

/** `1h`, `30m`, `90s`, `1d` (or a number of seconds) as milliseconds; undefined when it is none of them. */
export function parseInterval (text: string): number | undefined {
  const match = /^(\d+)\s*(s|m|h|d)?$/.exec(text.trim())
  if (match === null) return undefined
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(match[2] ?? 's') as 's' | 'm' | 'h' | 'd']
  const ms = Number(match[1]) * unit
  return ms >= 60_000 ? ms : undefined
}

export function scheduleMirror (app: FastifyInstance, connection: Connection, schedule: MirrorSchedule, registry: promClient.Registry, schema?: string): void {
  const labels = { organization: schedule.organization }
  const gauge = (name: string, help: string) => new promClient.Gauge({ name, help, labelNames: ['organization'], registers: [registry] })
  const lastSuccess = gauge('team_access_mirror_last_success_timestamp_seconds', 'When the last mirror run succeeded (Unix time)')
  const lastDuration = gauge('team_access_mirror_last_success_duration_seconds', 'How long the last successful mirror run took')
  const lastRequests = gauge('team_access_mirror_last_success_requests', 'Requests the last successful mirror run made to HCP Terraform')
  const lastFailure = gauge('team_access_mirror_last_failure_timestamp_seconds', 'When a mirror run last failed (Unix time; 0: none yet)')
  const failures = new promClient.Counter({ name: 'team_access_mirror_failures_total', help: 'Mirror runs that failed', labelNames: ['organization'], registers: [registry] })
  lastFailure.set(labels, 0)
  failures.inc(labels, 0)

  const abort = new AbortController()
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  const log = app.log.child({ mirror: schedule.organization })

  const once = async (): Promise<void> => {
    const started = performance.now()
    try {
      const token = readFileSync(schedule.tokenFile, 'utf8').trim()
      if (token === '') throw new Error(`MIRROR_TOKEN_FILE (${schedule.tokenFile}) is empty`)
      const ran = await exclusively(connection, schedule.organization, async () => await runMirror(connection.db, {
        from: schedule.from,
        organization: schedule.organization,
        token,
        rate: schedule.rate,
        signal: abort.signal,
        ...(schema === undefined ? {} : { schema }),
        // DESIGN §13.3: on the embedded database the apply holds it; requests meanwhile wait, or get 503 with Retry-After
        onApply: (rows) => {
          if (connection.engine === 'pglite') log.info({ rows }, `mirror: applying what was read (${rows} rows) to the embedded database; requests wait meanwhile, or get 503 with Retry-After`)
        }
      }))
      if (ran === undefined) {
        log.info('mirror: another replica is running it; this one serves')
        return
      }
      lastSuccess.set(labels, Date.now() / 1000)
      lastDuration.set(labels, (performance.now() - started) / 1000)
      lastRequests.set(labels, ran.requests)
      log.info({ requests: ran.requests, readMs: Math.round(ran.readMs), applyMs: Math.round(ran.applyMs), warnings: ran.summary?.warnings.length ?? 0 }, runLine(ran))
    } catch (err) {
      if (abort.signal.aborted) return
      lastFailure.set(labels, Date.now() / 1000)
      failures.inc(labels)
      log.error({ err: loggable(err as Error) }, `mirror ${schedule.organization} from ${schedule.from} failed: ${(err as Error).message}`)
    }
  }
  const next = (delay: number) => {
    timer = setTimeout(() => {
      running = once().finally(() => { running = undefined; if (!abort.signal.aborted) next(schedule.intervalMs) })
    }, delay)
    timer.unref()
  }
  app.addHook('onReady', async () => { next(0) })
  app.addHook('preClose', async () => {
    abort.abort()
    clearTimeout(timer)
    await running
  })
}

/**
 * `work` while holding the organization's mirror lock, or undefined when another holds it. On
 * PostgreSQL a session advisory lock on a connection of its own, taken without waiting and given
 * back at the end (or with the connection, should the process die); PGlite is one process's.
 */
export async function exclusively<T> (connection: Connection, organization: string, work: () => Promise<T>): Promise<T | undefined> {
  if (connection.engine === 'pglite') return await work()
  return await connection.db.connection().execute(async (held) => {
    const key = sql`hashtextextended(${`team_access.mirror:${organization}`}, 0)`
    const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${key}) as locked`.execute(held)
    if (rows[0]?.locked !== true) return undefined
    try {
      return await work()
    } finally {
      await sql`select pg_advisory_unlock(${key})`.execute(held)
    }
  })
}
