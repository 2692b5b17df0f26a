/**
 * The host's check path in `npm run bench` (bench/run.ts; measured by bench/host-check.ts): who
 * asks, on which workspace, the reference SELECT, the run's options, and its section of BENCHMARKS.md.
 */
import type { Kysely } from 'kysely'
import { MANY, type HostCheckRow } from './host-check.js'
import { fixed, median } from './stats.js'
import { HOST_CONCURRENCY, HOST_ROUNDS, HOST_ROW, HOST_SECONDS } from './settings.js'

/**
 * The host's check path: who asks (user 7, a member of 3 teams), on which workspace, the reference
 * SELECT through `tables` (the plugin's tables: in its schema on PostgreSQL), and the bound — the
 * least any check of DESIGN §10 can read, built as the reference is: the caller's team memberships
 * (a removal counts from the next call, §9.6) and those teams' rows on the workspace, in one SELECT.
 * It reads neither the teams' organization-wide flags nor the project rows (§11.3), which the check
 * must: a check that keeps the contract costs at least this.
 */
export function hostTarget (tables: Kysely<any>): { select: () => Promise<unknown>, bound: () => Promise<unknown>, caller: unknown, workspaceId: string, workspaceIds: string[] } {
  const [userId, workspaceId] = ['user-7', 'ws-small-0']
  const select = async () => await tables.selectFrom('team_workspaces').select(['id', 'access', 'runs']).where('id', '=', HOST_ROW).executeTakeFirstOrThrow()
  const bound = async () => await tables.selectFrom('team_memberships as m')
    .innerJoin('team_workspaces as tw', (join) => join.onRef('tw.team_id', '=', 'm.team_id').on('tw.workspace_id', '=', workspaceId))
    .select(['tw.id', 'tw.access']).where('m.user_id', '=', userId).executeTakeFirstOrThrow()
  return { select, bound, caller: { kind: 'user', userId }, workspaceId, workspaceIds: Array.from({ length: MANY }, (_, k) => `ws-small-${k}`) }
}

export const hostOptions = () => ({ concurrency: HOST_CONCURRENCY, seconds: HOST_SECONDS, rounds: HOST_ROUNDS, warmup: Math.min(1, HOST_SECONDS) })

export function hostCheckSection (engines: Array<{ engine: string, rows: HostCheckRow[] }>): string {
  const lines: string[] = []
  for (const { engine, rows } of engines) {
    const [select, single, many, bound] = rows as [HostCheckRow, HostCheckRow, HostCheckRow, HostCheckRow | undefined]
    const rate = (row: HostCheckRow) => median(row.callsPerSecond)
    const cpu = (row: HostCheckRow) => `${fixed(median(row.nodeMs), 3)} | ${engine.startsWith('postgres') ? fixed(median(row.pgMs), 3) : 'in process'}`
    const each = (row: HostCheckRow) => row.callsPerSecond.map((n) => n.toFixed(0)).join(', ')
    lines.push(`| ${engine} | ${select.name} | ${rate(select).toFixed(0)} (${each(select)}) | | ${cpu(select)} | 1.00 |`)
    lines.push(`| ${engine} | ${single.name} | ${rate(single).toFixed(0)} (${each(single)}) | | ${cpu(single)} | ${(rate(single) / rate(select)).toFixed(2)} ÷ the SELECT |`)
    if (many.missing === true) lines.push(`| ${engine} | effectiveAccessMany | not in this build | | | |`)
    else lines.push(`| ${engine} | ${many.name} | ${rate(many).toFixed(0)} (${each(many)}) | ${(rate(many) * MANY).toFixed(0)} | ${cpu(many)} | ${(rate(many) * MANY / rate(single)).toFixed(2)} ÷ ${MANY} single calls |`)
    if (bound !== undefined && bound.missing !== true) lines.push(`| ${engine} | ${bound.name} | ${rate(bound).toFixed(0)} (${each(bound)}) | | ${cpu(bound)} | ${(rate(bound) / rate(select)).toFixed(2)} ÷ the SELECT |`)
  }
  return `## The host's check path, in process (issue 23)

The plugin (the package's default export, dist/src/index.js) registered into a bare Fastify app on
a Kysely the bench made — on PostgreSQL \`new Kysely({ dialect: new PostgresDialect({ pool }) })\` over
a pg Pool of ${HOST_CONCURRENCY} on the bench's database, once as it is and once wrapped with the package's
\`preparedStatements(pool)\` (every statement through it, the reference SELECT's too, parsed and planned once per connection); on PGlite the engine in memory, seeded with the part of
the dataset the calls read (the first ${MANY} small workspaces, their 2,500 rows, their teams and all users; the
whole takes about two minutes to seed there) — with ${HOST_CONCURRENCY} calls in flight for ${HOST_SECONDS} s each (BENCH_HOST_SECONDS), the four kinds alternating,
${HOST_ROUNDS} rounds (BENCH_HOST_ROUNDS): the median calls/s, each round in brackets. The caller is user 7 (a member of 3
teams), the workspace ws-small-0, where one of them holds access; the reference is one primary-key
SELECT of a team-workspace row through the same Kysely. effectiveAccessMany asks for ws-small-0 …
ws-small-${MANY - 1} in one call: its ratio is workspaces/s over single calls/s (${MANY} single calls answer as
much). CPU per call: this process's (process.cpuUsage: the plugin, the driver, and PGlite's engine)
and PostgreSQL's (as in "CPU per request"). The bound is not the plugin's: the least any check can
read, built as the reference is — the caller's team memberships and those teams' rows on the
workspace, in one SELECT, without the teams' organization-wide flags or the project rows the check
must read too; a check that keeps the contract costs at least this.

| engine | call | calls/s, median (rounds) | workspaces/s | Node ms/call | PG ms/call | ratio |
|---|---|---:|---:|---:|---:|---|
${lines.join('\n')}`
}
