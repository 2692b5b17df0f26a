import type { FastifyInstance } from 'fastify'
import fastifyMetricsModule from 'fastify-metrics'
import promClient from 'prom-client'
import type { Connection, PoolUsage } from './db/connect.js'

// a CommonJS module whose plugin is its `default` export
const fastifyMetrics = fastifyMetricsModule.default

/** Latency buckets, seconds: most answers take a few milliseconds; the timeouts are 5 s. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * The database pool as Prometheus gauges, read at each scrape: connections open, idle, in use,
 * the pool's size, and requests waiting for a connection. Hosts that embed the plugin can add
 * them to their own registry with the connection `connect()` gave them.
 */
export function registerPoolMetrics (registry: promClient.Registry, connection: Pick<Connection, 'pool'>): void {
  const usage = connection.pool
  if (usage === undefined) return
  const gauge = (name: string, help: string, read: (u: PoolUsage) => number) => new promClient.Gauge({
    name, help, registers: [registry], collect () { this.set(read(usage())) }
  })
  gauge('team_access_db_pool_max', 'PostgreSQL connections the pool may open (DB_POOL_SIZE)', (u) => u.max)
  gauge('team_access_db_pool_connections', 'PostgreSQL connections open', (u) => u.total)
  gauge('team_access_db_pool_idle', 'PostgreSQL connections open and idle', (u) => u.idle)
  gauge('team_access_db_pool_in_use', 'PostgreSQL connections serving a request', (u) => u.total - u.idle)
  gauge('team_access_db_pool_waiting', 'requests waiting for a PostgreSQL connection', (u) => u.waiting)
}

/** Whether the Redis of the shared rate-limit budget answers (REDIS_URL set): 1 or 0, read at each scrape. */
export function registerRedisMetric (registry: promClient.Registry, reachable: () => boolean): void {
  // eslint-disable-next-line no-new
  new promClient.Gauge({
    name: 'team_access_rate_limit_redis_up',
    help: 'Whether the Redis of the shared rate-limit budget (REDIS_URL) answers: 0 while the limit fails open',
    registers: [registry],
    collect () { this.set(reachable() ? 1 : 0) }
  })
}

/**
 * GET /metrics in Prometheus's text format (fastify-metrics on prom-client): the process's own
 * metrics (CPU, memory, event-loop lag, GC), `http_request_duration_seconds` — a histogram by
 * method, route and status code, whose `_count` is the number of requests (429s and 503s
 * included) — and the database pool. A registry of the app's own, so that two apps in one
 * process, or a host's metrics in the global registry, never collide. Register before any
 * route — routes registered earlier are not timed — and before load shedding, so that shed
 * requests are counted.
 */
export async function registerMetrics (app: FastifyInstance, connection: Pick<Connection, 'pool'>): Promise<promClient.Registry> {
  const registry = new promClient.Registry()
  await app.register(fastifyMetrics, {
    endpoint: '/metrics',
    // prom-client with this registry in place of the global one: /metrics serves this registry
    // alone, whatever else in the process registers globally
    promClient: { ...promClient, register: registry },
    defaultMetrics: { enabled: true, register: registry },
    routeMetrics: {
      // a histogram only: the summary's quantiles cost CPU on every request and cannot be aggregated
      enabled: { histogram: true, summary: false },
      overrides: { histogram: { buckets: BUCKETS, registers: [registry] }, summary: { registers: [] } }
    }
  })
  registerPoolMetrics(registry, connection)
  return registry
}
