/**
 * BENCHMARKS.md as `npm run bench` writes it (bench/run.ts): the tables of rows, the targets met or
 * not, the sections of issue 23's parts, how it is measured, and what the file keeps from other
 * commands.
 */
import { readFileSync } from 'node:fs'
import { cpus, platform, release, totalmem } from 'node:os'
import { projectFile } from '../src/project-file.js'
import { LARGE, TEAMS } from './dataset.js'
import type { Floors, Row } from './drive.js'
import type { RevokedSamples } from './revoked-token.js'
import { SEED_REMOVED, SEED_TEAMS, type SeedTimes } from './seed-apply.js'
import { phases } from './phases.js'
import { serviceNodeFlags } from './processes.js'
import { fixed, median, quantile } from './stats.js'
import { AUDIT_TRAIL, CONNECTIONS, DURATION, KEPT, PROJECT_ROUNDS, REVOKED_ROUNDS, SEED_ROUNDS, SEED_ROUNDS_PGLITE, SERVER, START_RUNS, WARMUP } from './settings.js'

/** The whole report: its header, the three tables of targets, how it is measured, then the sections in the order measured. */
export function report ({ began, issue47, checks, issue13, earlier, audit, sections }: { began: number, issue47: Check[], checks: Check[], issue13: Check[], earlier: Check[], audit: boolean, sections: string[] }): string {
  const minutes = (Date.now() - began) / 60_000
  const cpu = cpus()
  const rounds = issue47.length === 0
    ? ''
    : `
## Targets (issue 47): medians of ${PROJECT_ROUNDS} alternating rounds

Each ratio taken within a round, on each of two worlds (without projects; with them), the median
of the rounds given; met when both medians meet the goal. The rounds, the bounds beside them and
the CPU ratios: "A world with projects beside one without". Issue 47's other targets: the
embedded peak RSS in the table below; the access review at 1,000 × 5,000 and a workspace's
effective access on 10,500 teams in their own sections, measured by their own commands.

${checkTable(issue47)}
`
  return `# Benchmarks

Produced by \`npm run bench\` (bench/run.ts) on ${new Date().toISOString().slice(0, 10)}, in ${minutes.toFixed(1)} minutes (the build not included).
Machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${platform()} ${release()}, Node ${process.version}.
Figures from one run on a shared 2-core machine: noisy; compare within a run, which is what every
ratio and target below does.
${rounds}
## Targets (issue 23)

On PostgreSQL, each a ratio of two rows of the same run; the embedded ones from the start runs
(median of ${START_RUNS}). The CPU per request, the new rows and the host's check path follow in
their own sections, each with its ratio.

${checkTable(checks)}

## Targets (issue 13), still checked

${checkTable(issue13)}

## Earlier targets (issue 5), still checked

${checkTable(earlier)}

## How it is measured

**Load.** autocannon in the bench process, on the same machine, ${CONNECTIONS} connections (BENCH_CONNECTIONS). Each row is
a few requests to gauge the rate, a warm-up of about ${WARMUP} s (BENCH_WARMUP), then a measured run of about ${DURATION} s
(BENCH_DURATION): each a fixed number of requests sized from the run before, so that every connection
stops after the answer to its last request and no request is cut off in flight (a run cut off at a
deadline leaves the service's admission queue short of the turns of some aborted requests, and
after a few rows it answered everything 503). req/s are answers over the time to the last answer.
The defaults are 2 s and 8 s (they were 3 s and 10 s). Each part's time in this run: ${phases.map((p) => `${p.name} ${(p.seconds / 60).toFixed(1)} min`).join(', ')}.
RSS is the server process's peak during the measured run.

**Dataset** (bench/dataset.ts), loaded through the seed format (SEED_FILE): ${TEAMS.toLocaleString('en-US')} teams, 2,000 users
with 6,000 memberships, 204 workspaces, 21,000 team-workspace rows (one workspace with 10,000, one with
1,000, 200 with 50). On PostgreSQL the workspace \`large\` then gets ${LARGE.toLocaleString('en-US')} rows, and the organization
${(LARGE - TEAMS).toLocaleString('en-US')} more teams (${LARGE.toLocaleString('en-US')} in all), by INSERT … SELECT generate_series, 1,000 rows a statement,
which fires the same triggers as any insert; then VACUUM ANALYZE. A 100,000-entry seed file would
take minutes through the seed writer. PGlite has no \`large\` workspace.

**The service** runs as \`node ${[...serviceNodeFlags(SERVER), SERVER].join(' ')}\` (the flags of \`npm start\`) with LOG_LEVEL=warn, RATE_LIMIT=0 and CALLER_CONCURRENCY=0 (the
bench is one caller on ${CONNECTIONS} connections: the per-caller cap would make most of them wait their turn). Owner rows use the
organization token, member rows the token of a user in 3 of the 10,500 teams.

**The floors** are bare Fastify routes on a pool built as the service builds its own, every statement
prepared (bench/floor-server.ts); no auth, no validation, no admission queue:
- the one-row floor: one primary-key SELECT of a team-workspace row;
- the write floor: one UPDATE of one team-workspace row by primary key, RETURNING it (the same 200 rows the update row changes);
- the insert + delete floor: one INSERT and one DELETE of a row of a bare table, in one request
  (the add + remove row counts cycles of two requests against it);
- the page floor: page 50 of 100 of the 10,000-row workspace by the naive
  \`SELECT … FROM team_workspaces WHERE workspace_id = $1 ORDER BY created_at, id LIMIT 100 OFFSET $2\`, then a
  count(*) of the workspace's rows, built into the same JSON:API document (data, meta.pagination,
  links) with the service's own serializer and response schema.
- not a floor but a bound, read against the one-row floor as the show is: the least a show of
  DESIGN §4 can do — the bearer token's digest, one statement that reads the owner's row with its
  workspace's and organization's names while the token is still usable (§9.6), the service's JSON:API
  document and response schema — and no visibility rule (§3) at all: a show that keeps the contract
  costs at least this.

**"ratio"** is the row's req/s over the req/s of what it is compared with (a floor, or another row of the table).

**Issue 23's writes** (PostgreSQL only, to keep the run short), each request a real change, each
compared with the write floor (one primary-key UPDATE): "team: create" is
\`POST /organizations/bench/teams\` of a new name each time; "team: add a member" is
\`POST /teams/:id/relationships/users\` of one user, a (team, user) pair never added before (teams
6000 … 10499 have no members in the dataset); "token: create" is \`POST /teams/:id/authentication-token\`
on 200 teams in turn, each creating a token and revoking the one before it. Each records its audit
event where the service keeps them. Their CPU per request is in "CPU per request".

**Audit.** Once the audit trail is merged, every add, update and remove records its event in the same
statement, so the update and add + remove rows include it. The row "audit event write" is an update
that changes a permission on every request (runs plan ↔ apply): every request is a change the trail
records. ${audit ? `This service keeps an audit trail: the row's note gives the events recorded against its successful writes, and "audit trail: read page 1" reads GET ${AUDIT_TRAIL}.` : `This service has no audit trail yet (GET ${AUDIT_TRAIL} does not answer 200): the row measures the write alone, and there is no audit read row; the bench adds one when the route answers.`}

${sections.join('\n\n')}
`
}

export function section (title: string, rows: Row[], about: string): string {
  const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
  const lines = rows.map((r) => `| ${r.name} | ${fmt(r.rps)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${r.ratio === undefined ? '' : fmt(r.ratio, 2)} | ${r.compareLabel ?? ''} | ${r.target === undefined ? '' : `≥ ${r.target} (issue ${r.issue})`} | ${fmt(r.rssMb)} | ${r.errors} | ${r.note ?? ''} |`)
  return `## ${title}

${about}

| operation | req/s | p50 ms | p99 ms | ratio | compared with | target | RSS MB | errors | note |
|---|---:|---:|---:|---:|---|---|---:|---:|---|
${lines.join('\n')}`
}

export interface Check { what: string, measured: string, goal: string, met: boolean }

export function checkTable (checks: Check[]): string {
  return `| target | measured | goal | |
|---|---|---|---|
${checks.map((c) => `| ${c.what} | ${c.measured} | ${c.goal} | ${c.met ? 'met' : '**NOT met**'} |`).join('\n')}`
}

/** The ratio targets of one issue, met or not. */
export function targets (rows: Row[], issue: number): Check[] {
  return rows.filter((r) => r.ratio !== undefined && r.target !== undefined && r.issue === issue)
    .map((r) => ({ what: `${r.name} ÷ ${r.compareLabel}`, measured: `${r.ratio!.toFixed(2)} (${r.rps.toFixed(0)} req/s)`, goal: `≥ ${r.target}`, met: r.ratio! >= r.target! }))
}

/** Issue 5's other targets: p99 within 5 × p50 for every operation, and the server's peak RSS under load. */
export function spreadAndMemory (rows: Row[]): Check[] {
  if (rows.length === 0) return [] // BENCH_ROWS named floors only
  const spread = (r: Row) => r.p99 / Math.max(r.p50, 1) // latencies are whole milliseconds
  const widest = rows.reduce((a, b) => spread(b) > spread(a) ? b : a)
  const rss = Math.max(...rows.map((r) => r.rssMb))
  return [
    { what: 'p99 ≤ 5 × p50 for every operation (the widest shown)', measured: `${spread(widest).toFixed(1)} × (${widest.name})`, goal: '≤ 5 ×', met: spread(widest) <= 5 },
    { what: 'peak server RSS under load on PostgreSQL', measured: `${rss.toFixed(0)} MB`, goal: '≤ 250 MB', met: rss <= 250 }
  ]
}

/**
 * CPU per request of the service and of the floor on the same rows (issue 23), from the measured
 * runs of the PostgreSQL table: "ratio" is the floor's CPU (Node + PostgreSQL) over the service's,
 * so that it reads as the req/s ratios do (1: as cheap as the floor).
 */
export function cpuSection (rows: Row[], floorRows: Floors): string {
  const pairs: Array<{ name: string, service?: Row, floor?: Row }> = [
    { name: 'show, as an owner ÷ one-row floor', service: rows.find((r) => r.key === 'show-owner'), floor: floorRows.read },
    { name: 'show, as a member ÷ one-row floor', service: rows.find((r) => r.key === 'show-member'), floor: floorRows.read },
    { name: 'bound: the least show of §4 ÷ one-row floor', service: floorRows.showBound, floor: floorRows.read },
    { name: 'bound: the least show of §4 by a member ÷ one-row floor', service: floorRows.showMemberBound, floor: floorRows.read },
    { name: 'page 50 of 100 at 10,000 rows ÷ page floor', service: rows.find((r) => r.key === 'page50-10k'), floor: floorRows.page },
    { name: 'update ÷ write floor', service: rows.find((r) => r.key === 'update'), floor: floorRows.update }
  ]
  const ms = (n: number | undefined) => n === undefined ? '' : n.toFixed(3)
  const lines = pairs.filter((p) => p.service !== undefined || p.floor !== undefined).map(({ name, service, floor }) => {
    const total = (row: Row | undefined) => row?.cpu === undefined ? undefined : row.cpu.node + row.cpu.pg
    const [s, f] = [total(service), total(floor)]
    return `| ${name} | ${ms(service?.cpu?.node)} | ${ms(service?.cpu?.pg)} | ${ms(floor?.cpu?.node)} | ${ms(floor?.cpu?.pg)} | ${s !== undefined && f !== undefined && s > 0 ? (f / s).toFixed(2) : ''} |`
  })
  const others = rows.filter((r) => r.cpu !== undefined && !pairs.some((p) => p.service === r))
    .map((r) => `| ${r.name} | ${ms(r.cpu!.node)} | ${ms(r.cpu!.pg)} | | | |`)
  return `## CPU per request on PostgreSQL (issue 23)

The measured run of each row above: the CPU time the server's process used (Node: /proc/<pid>/stat
utime + stime, every thread) and PostgreSQL's (utime + stime of the backends serving the bench's
database, with the server's own processes: postmaster, checkpointer, background writer, WAL writer;
backends of other databases, other work on this shared server, are left out), after the run less
before it, over the run's requests (a cycle's two requests count as two). req/s on this shared
machine move by 2× from run to run; CPU per request is the steadier figure. **ratio** is the floor's CPU (Node + PostgreSQL) ÷
the service's: 1 is as cheap as the floor.

| request | service Node ms | service PG ms | floor Node ms | floor PG ms | ratio (floor ÷ service) |
|---|---:|---:|---:|---:|---:|
${[...lines, ...others].join('\n')}`
}

export function revokedSection (engines: Array<{ engine: string, samples: RevokedSamples }>): string {
  const lines: string[] = []
  for (const { engine, samples } of engines) {
    const valid = quantile(samples.valid, 0.5)
    const row = (name: string, values: number[]) => `| ${engine} | ${name} | ${values.length} | ${fixed(quantile(values, 0.5))} | ${fixed(quantile(values, 0.9))} | ${fixed(quantile(values, 0.5) / valid)} |`
    lines.push(row('GET the team, a valid remembered team token: 200 (the reference)', samples.valid))
    lines.push(row("GET the team, the token's first request after it was regenerated away: 401", samples.revoked))
    lines.push(row('GET the team, a token that never existed: 401', samples.never))
  }
  return `## A token's first request after regeneration (issue 23)

Over one keep-alive connection, one request at a time, ${REVOKED_ROUNDS} rounds (BENCH_REVOKED_ROUNDS) after a warm-up, each:
regenerate team-6400's token as the owner (\`POST /teams/:id/authentication-token\`), use the new secret
once (looked up, remembered) and once more, timed (the reference); regenerate again (the secret is
revoked); then the old secret's first request, timed: 401; then a never-valid secret's, timed: 401.
Milliseconds to the end of each body; "ratio" is the p50 over the reference's p50.

| engine | request | requests | p50 ms | p90 ms | ratio (p50 ÷ valid token's) |
|---|---|---:|---:|---:|---:|
${lines.join('\n')}`
}

export function seedSection (engines: Array<{ engine: string, times: SeedTimes }>): string {
  const lines: string[] = []
  for (const { engine, times } of engines) {
    const unchanged = median(times.unchanged)
    const each = (values: number[]) => values.map((n) => n.toFixed(0)).join(', ')
    const row = (name: string, values: number[]) => `| ${engine} | ${name} | ${median(values).toFixed(0)} | ${each(values)} | ${(median(values) / unchanged).toFixed(2)} |`
    lines.push(`| ${engine} | the first apply: everything created | ${times.first.toFixed(0)} | | ${(times.first / unchanged).toFixed(2)} |`)
    lines.push(row('the same document again: nothing changes (the reference)', times.unchanged))
    lines.push(row(`dry run of the document without ${SEED_REMOVED} teams`, times.dryRun))
    lines.push(row(`apply of it: ${SEED_REMOVED} teams removed, with their memberships and rows`, times.apply))
    lines.push(row(`the whole document again: the ${SEED_REMOVED} teams back`, times.restore))
  }
  return `## A seed of ${SEED_TEAMS.toLocaleString('en-US')} teams with ${SEED_REMOVED} removals, and its dry run (issue 23)

The seed function (\`applySeed\`, what \`team-access seed [--dry-run] FILE\` and SEED_FILE run) on a database of
its own, in process: one organization, ${SEED_TEAMS.toLocaleString('en-US')} users, ${SEED_TEAMS.toLocaleString('en-US')} teams (each with one member), one workspace
where every team holds read (${SEED_TEAMS.toLocaleString('en-US')} team-access entries). Applied once, then ${SEED_ROUNDS} rounds on PostgreSQL (BENCH_SEED_ROUNDS), ${SEED_ROUNDS_PGLITE} on PGlite in memory
(BENCH_SEED_ROUNDS_PGLITE), each of: the same document (no change), a dry run of the document without its last ${SEED_REMOVED} teams, its apply (each
removal checked in the summary: ${SEED_REMOVED} teams), the whole document again. Milliseconds, the median and each
round; "ratio" is the median over the no-change apply's median.

| engine | apply | ms, median | rounds | ratio (÷ no-change apply) |
|---|---|---:|---:|---:|
${lines.join('\n')}`
}

/** What BENCHMARKS.md holds from KEPT on: sections measured with other commands, which a run keeps as they are. */
export function keptSections (): string {
  let current = ''
  try {
    current = readFileSync(projectFile('BENCHMARKS.md'), 'utf8')
  } catch {}
  const at = current.indexOf(KEPT)
  return at === -1 ? `\n${KEPT}\n` : `\n${current.slice(at)}`
}
