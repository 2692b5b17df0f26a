/**
 * The host's check path (issue 23), in process: the plugin (the package's default export)
 * registered into a bare Fastify app on a Kysely the bench owns, then, with `concurrency` calls in
 * flight for `seconds` each, alternating over `rounds` rounds:
 *
 * - the reference: one primary-key SELECT of a team-workspace row through the same Kysely;
 * - `app.teamAccess.effectiveAccess({ caller, workspaceId })` — a member's access on a workspace;
 * - `app.teamAccess.effectiveAccessMany({ caller, workspaceIds })` of `MANY` workspaces, where the
 *   build has it (otherwise its row says so).
 *
 * Calls per second are the calls answered over the time taken; CPU per call is this process's
 * (process.cpuUsage: the plugin and the driver; PGlite's engine too, in process) and, on
 * PostgreSQL, the server's (bench/cpu.ts).
 *
 * BENCH_PLUGIN=/abs/path/dist/src/index.js measures another checkout's plugin (e.g. a build with
 * effectiveAccessMany) on this checkout's dataset.
 */
import Fastify from 'fastify'
import type { Kysely } from 'kysely'
import teamAccess from '../src/index.js'
import { postgresCpuMsSince, postgresMark } from './cpu.js'

export const MANY = 50

/** The plugin measured: this build's, or another checkout's built entry (BENCH_PLUGIN, an absolute path). */
const plugin: typeof teamAccess = process.env.BENCH_PLUGIN === undefined || process.env.BENCH_PLUGIN === ''
  ? teamAccess
  : ((await import(process.env.BENCH_PLUGIN)) as { default: typeof teamAccess }).default

export interface HostCheckTarget {
  engine: 'postgres' | 'pglite'
  /** The Kysely the host owns: the plugin's tables in `schema` (default team_access) */
  db: Kysely<any>
  /** The reference SELECT's Kysely (the same pool, in the plugin's schema). */
  select: () => Promise<unknown>
  /** The bound: the least a check of the caller on the workspace can read, through the same Kysely (bench/host-check-section.ts). */
  bound?: () => Promise<unknown>
  caller: unknown
  workspaceId: string
  workspaceIds: string[]
}

export interface HostCheckRow { key: 'select' | 'single' | 'many' | 'bound', name: string, callsPerSecond: number[], nodeMs: number[], pgMs: number[], missing?: boolean }

type Call = () => Promise<unknown>

async function run (call: Call, concurrency: number, seconds: number, countPg: boolean): Promise<{ callsPerSecond: number, nodeMs: number, pgMs: number }> {
  const until = performance.now() + seconds * 1000
  let calls = 0
  const cpu = process.cpuUsage()
  const pg = countPg ? postgresMark() : undefined
  const began = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < until) {
      await call()
      calls++
    }
  }))
  const elapsed = (performance.now() - began) / 1000
  const used = process.cpuUsage(cpu)
  return { callsPerSecond: calls / elapsed, nodeMs: (used.user + used.system) / 1000 / calls, pgMs: pg !== undefined ? postgresCpuMsSince(pg) / calls : 0 }
}

export async function measureHostCheck (target: HostCheckTarget, options: { concurrency: number, seconds: number, rounds: number, warmup: number }): Promise<HostCheckRow[]> {
  const app = Fastify({ logger: false })
  try {
    // migrations on: a no-op for this build's plugin; another build's (BENCH_PLUGIN) may add its own
    await app.register(plugin, { database: target.db })
    await app.ready()
    const api = app.teamAccess as typeof app.teamAccess & { effectiveAccessMany?: (query: { caller: unknown, workspaceIds: string[] }) => Promise<Map<string, unknown>> }
    const single: Call = async () => await api.effectiveAccess({ caller: target.caller as any, workspaceId: target.workspaceId })
    const answer = await api.effectiveAccess({ caller: target.caller as any, workspaceId: target.workspaceId }) as { access: string | null }
    if (answer.access === null) throw new Error(`the caller holds no access on ${target.workspaceId}: the check path would measure a refusal`)
    const many: Call | undefined = typeof api.effectiveAccessMany === 'function'
      ? async () => await api.effectiveAccessMany!({ caller: target.caller, workspaceIds: target.workspaceIds })
      : undefined
    if (many !== undefined) {
      const map = await many() as Map<string, unknown>
      if (!(map instanceof Map) || map.size !== target.workspaceIds.length) throw new Error(`effectiveAccessMany answered ${map instanceof Map ? `${map.size} entries` : 'no Map'}, not ${target.workspaceIds.length}`)
    }
    const rows: HostCheckRow[] = [
      { key: 'select', name: 'one primary-key SELECT through the same Kysely (the reference)', callsPerSecond: [], nodeMs: [], pgMs: [] },
      { key: 'single', name: 'effectiveAccess({ caller, workspaceId })', callsPerSecond: [], nodeMs: [], pgMs: [] },
      { key: 'many', name: `effectiveAccessMany({ caller, workspaceIds }) of ${MANY} workspaces`, callsPerSecond: [], nodeMs: [], pgMs: [], ...(many === undefined ? { missing: true } : {}) },
      { key: 'bound', name: 'bound: the caller\'s teams\' rows on the workspace, one SELECT through the same Kysely', callsPerSecond: [], nodeMs: [], pgMs: [], ...(target.bound === undefined ? { missing: true } : {}) }
    ]
    const calls: Array<Call | undefined> = [target.select, single, many, target.bound]
    const countPg = target.engine === 'postgres'
    for (const call of calls) if (call !== undefined) await run(call, options.concurrency, options.warmup, countPg)
    for (let round = 0; round < options.rounds; round++) {
      for (let k = 0; k < calls.length; k++) {
        // the first of each round rotates, so that the machine's drift hits them alike
        const i = (round + k) % calls.length
        const call = calls[i]
        if (call === undefined) continue
        const measured = await run(call, options.concurrency, options.seconds, countPg)
        rows[i]!.callsPerSecond.push(measured.callsPerSecond)
        rows[i]!.nodeMs.push(measured.nodeMs)
        rows[i]!.pgMs.push(measured.pgMs)
      }
    }
    return rows
  } finally {
    await app.close()
  }
}
