/**
 * One row of `npm run bench` (bench/run.ts): autocannon drives a scenario (bench/scenarios.ts) — a
 * few requests to gauge the rate, warm-up runs, then the measured run of a fixed number of requests
 * — and measures its req/s, latencies, the server's peak RSS and CPU per request; then each row's
 * ratio to its floor or to another row.
 */
import autocannon, { type Options, type Result } from 'autocannon'
import { readFileSync } from 'node:fs'
import { cpuMark, perRequest, type CpuMark } from './cpu.js'
import { owner, type FloorKey, type Scenario } from './scenarios.js'
import { AUDIT_TRAIL, CONNECTIONS, DURATION, WARMUP } from './settings.js'

/** The floors measured (all of them, unless BENCH_ROWS leaves some out). */
export type Floors = Partial<Record<FloorKey, Row>>

export interface Row {
  key: string
  name: string
  rps: number
  p50: number
  p99: number
  rssMb: number
  errors: number
  /** CPU per request of the measured run, ms: the server process's (node) and the PostgreSQL server's (pg). */
  cpu?: CpuMark
  /** Answers 2xx over the probe, the warm-up and the run. */
  succeeded: number
  ratio?: number
  compareLabel?: string
  target?: number
  issue?: number
  note?: string
}

/** A row's CPU per request, Node + PostgreSQL, ms (NaN when it was not measured). */
export const cpuOf = (row: Row): number => row.cpu === undefined ? NaN : row.cpu.node + row.cpu.pg

export const procStatusMb = (pid: number, field: 'VmRSS' | 'VmHWM'): number => {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) / 1024 : 0
}
export const rssMb = (pid: number): number => procStatusMb(pid, 'VmRSS')

/**
 * One autocannon run of a fixed number of requests, spread evenly over the connections (whole
 * cycles for a cycle): each connection stops after the answer to its last request, so no request
 * is ever cut off in flight. (A run by duration destroys its connections at the deadline with
 * requests in flight; the service's admission queue does not get back the turns of some of
 * those, and after a few runs it answers every request 503.) Requests per second are the
 * answers over the time from the start to the last answer.
 */
async function runFor (url: string, scenario: Scenario, amount: number): Promise<{ result: Result, rps: number, seconds: number }> {
  const { path: _path, ...options } = scenario.options
  const began = performance.now()
  let last = began
  const result = await new Promise<Result>((resolve, reject) => {
    const instance = autocannon({ url, connections: CONNECTIONS, amount, ...options } as Options, (err, done) => { if (err) reject(err); else resolve(done) })
    instance.on('response', () => { last = performance.now() })
  })
  const seconds = Math.max(last - began, 1) / 1000
  return { result, rps: result.requests.total / seconds, seconds }
}

/** A whole number of requests per connection (of cycles, for a cycle) near `rps` × `seconds`. */
function amountFor (scenario: Scenario, rps: number, seconds: number): number {
  const unit = CONNECTIONS * (scenario.cycle ? 2 : 1)
  return Math.max(1, Math.round(rps * seconds / unit)) * unit
}

export async function drive (base: string, scenario: Scenario, pid: number): Promise<Row> {
  const url = `${base}${scenario.options.path ?? ''}`
  const earlier: Result[] = []
  // a few requests to gauge the rate, then warm-up runs, each sized from the rate of the one
  // before, until WARMUP seconds have passed (a rate gauged cold is low)
  const probe = await runFor(url, scenario, amountFor(scenario, 0, 0) * 5)
  earlier.push(probe.result)
  let rate = probe.rps
  let warmed = 0
  for (let i = 0; i < 5 && warmed < WARMUP; i++) {
    const warm = await runFor(url, scenario, amountFor(scenario, rate, Math.max(WARMUP - warmed, 0.5)))
    earlier.push(warm.result)
    warmed += warm.seconds
    rate = warm.rps
  }
  // the measured run, sized from the last rate; a run over in under 60 % of DURATION was sized from
  // a rate still rising: it counts as warm-up, and the run is sized again (twice at most)
  let peak = 0
  const sampler = setInterval(() => { peak = Math.max(peak, rssMb(pid)) }, 200)
  let mark = cpuMark(pid)
  let measured = await runFor(url, scenario, amountFor(scenario, rate, DURATION))
  for (let i = 0; i < 2 && measured.seconds < 0.6 * DURATION; i++) {
    earlier.push(measured.result)
    peak = 0
    mark = cpuMark(pid)
    measured = await runFor(url, scenario, amountFor(scenario, measured.rps, DURATION))
  }
  // CPU per request (per request, not per cycle: a cycle's two requests count as two)
  const cpu = perRequest(pid, mark, measured.result.requests.total)
  const { result, rps: requestRate, seconds } = measured
  clearInterval(sampler)
  peak = Math.max(peak, rssMb(pid))
  const rps = scenario.cycle ? requestRate / 2 : requestRate
  const errors = result.non2xx + result.errors + result.timeouts
  const statuses = Object.entries(result.statusCodeStats ?? {}).filter(([code]) => !code.startsWith('2')).map(([code, { count }]) => `${code} × ${count ?? 0}`)
  const succeeded = [...earlier, result].reduce((n, r) => n + r.requests.total - r.non2xx, 0)
  const row: Row = { key: scenario.key, name: scenario.cycle ? `${scenario.name} (cycles/s)` : scenario.name, rps, p50: result.latency.p50, p99: result.latency.p99, rssMb: peak, errors, succeeded, cpu, ...(statuses.length > 0 ? { note: `answers ${statuses.join(', ')}` } : {}) }
  console.log(`  ${row.name}: ${rps.toFixed(0)} req/s over ${seconds.toFixed(1)} s, p50 ${row.p50} ms, p99 ${row.p99} ms, rss ${peak.toFixed(0)} MB, CPU/request node ${cpu.node.toFixed(3)} ms pg ${cpu.pg.toFixed(3)} ms${errors ? `, ${errors} errors${statuses.length > 0 ? ` (${statuses.join(', ')})` : ''}` : ''}`)
  return row
}

/** The audit trail's event count, or undefined when the service has no audit trail (the route answers 404). */
export async function auditEvents (base: string): Promise<number | undefined> {
  const response = await fetch(`${base}${AUDIT_TRAIL}?page%5Bsize%5D=1`, { headers: owner })
  if (response.status !== 200) return undefined
  const body = await response.json() as { pagination?: { total_count?: number }, meta?: { pagination?: { 'total-count'?: number } } }
  return body.pagination?.total_count ?? body.meta?.pagination?.['total-count'] ?? 0
}

/** Ratios of each row to its floor or to another row of the same table; targets only where floors exist (PostgreSQL). */
export function compare (rows: Row[], all: Scenario[], floorRows: Floors | undefined): void {
  for (const row of rows) {
    const scenario = all.find((s) => s.key === row.key)
    const compared = scenario?.compare
    if (compared === undefined) continue
    const other = compared.with.startsWith('floor:')
      ? floorRows?.[compared.with.slice('floor:'.length) as FloorKey]
      : rows.find((r) => r.key === compared.with)
    if (other === undefined) continue
    row.ratio = row.rps / other.rps
    row.compareLabel = compared.label
    if (floorRows !== undefined) {
      row.target = compared.target
      row.issue = compared.issue
    }
  }
}
