/**
 * `npm run bench`'s settings (bench/run.ts says what each does): the environment's BENCH_* values
 * with their defaults, the ports, the parts of the run chosen (BENCH_ONLY, BENCH_ROWS), and how the
 * service runs under the bench.
 */
export const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
export const DURATION = Number(process.env.BENCH_DURATION ?? 8)
export const WARMUP = Number(process.env.BENCH_WARMUP ?? 2)
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
export const START_RUNS = Number(process.env.BENCH_START_RUNS ?? 3)
export const PORT = Number(process.env.BENCH_PORT ?? 3110)
export const SERVICE_PORT = PORT
export const FLOOR_PORT = PORT + 1
export const BASELINE_PORT = PORT + 2
export const EMBEDDED_PORT = PORT + 3
export const BASELINE = process.env.BENCH_BASELINE
export const SIDE_BY_SIDE_ROUNDS = Number(process.env.BENCH_SIDE_BY_SIDE_ROUNDS ?? 3)
/** The service measured: this checkout's, or another's built entry (an absolute path). */
export const SERVER = process.env.BENCH_SERVER ?? 'dist/src/server.js'
export const AUDIT_TRAIL = '/api/v2/organization/audit-trail'
/** Parts of the run to do (a comma-separated list of SECTIONS; all when unset): a partial run prints, and writes BENCHMARKS.md only with BENCH_WRITE=1. */
/** The line after which BENCHMARKS.md holds what other commands measured (kept by every run). */
export const KEPT = '<!-- Below: measured with other commands (each section says which); `npm run bench` keeps it as it is. -->'

export const SECTIONS = ['postgres', 'revoked', 'host-check', 'projects', 'pglite', 'access-set', 'seed', 'embedded', 'mirror'] as const
export type SectionName = typeof SECTIONS[number]
export const ONLY = process.env.BENCH_ONLY?.split(',').map((name) => name.trim()).filter((name) => name !== '')
for (const name of ONLY ?? []) if (!(SECTIONS as readonly string[]).includes(name)) throw new Error(`BENCH_ONLY: no section ${name} (${SECTIONS.join(', ')})`)
export const doing = (name: SectionName): boolean => ONLY === undefined || ONLY.includes(name)
/** Rows of the tables to drive, by key (floor:read, show-owner, …; all when unset). */
export const ROWS = process.env.BENCH_ROWS?.split(',').map((key) => key.trim()).filter((key) => key !== '')
export const selected = (key: string): boolean => ROWS === undefined || ROWS.includes(key)
export const PARTIAL = ONLY !== undefined || ROWS !== undefined
/** The host's check path: seconds of each measured run, rounds, calls in flight. */
export const HOST_SECONDS = Number(process.env.BENCH_HOST_SECONDS ?? 2)
export const HOST_ROUNDS = Number(process.env.BENCH_HOST_ROUNDS ?? 3)
export const HOST_CONCURRENCY = 16
/** The reference SELECT's row: on ws-small-1, in the whole dataset and in the host check's part of it. */
export const HOST_ROW = 'tws-s1-5'
/** The revoked token's first request: measured rounds. */
export const REVOKED_ROUNDS = Number(process.env.BENCH_REVOKED_ROUNDS ?? 200)
/** The seed's timed rounds. */
export const SEED_ROUNDS = Number(process.env.BENCH_SEED_ROUNDS ?? 3)
/** On PGlite, where a round takes about 30 s on this machine: one by default. */
export const SEED_ROUNDS_PGLITE = Number(process.env.BENCH_SEED_ROUNDS_PGLITE ?? 1)
/** The access set's rounds (as ACCESS_SET_REQUESTS of bench:access-set, whose own default is 200: 100 here, to keep the run short). */
export const ACCESS_SET_REQUESTS = Number(process.env.ACCESS_SET_REQUESTS ?? 100)
export const ACCESS_SET_PORT = PORT + 4

/**
 * How the service runs under the bench: no rate limit and no per-caller cap (the bench is one
 * caller on many connections: the cap would make most of them wait their turn), warnings only.
 */
export const SERVICE_ENV = { HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT: '0', CALLER_CONCURRENCY: '0' }

/** Issue 33's comparison: rounds (BENCH_PROJECT_ROUNDS) of each world, alternating; the ports of the second world's service and floors. */
export const PROJECT_ROUNDS = Number(process.env.BENCH_PROJECT_ROUNDS ?? 3)
export const PROJECT_PORTS = [PORT + 5, PORT + 6, PORT + 7, PORT + 8] as const

/** The mirror (bench/mirror.ts): the port of its stand-in for HCP Terraform, and the requests a second it allows and the mirror keeps to. */
export const MIRROR_PORT = PORT + 9
export const MIRROR_RATE = 30
