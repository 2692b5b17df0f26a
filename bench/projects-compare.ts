/**
 * Issue 33's comparison in `npm run bench` (BENCH_ONLY=projects; bench/run.ts): the same world with
 * projects and without, each its own database, service and floors, their rows and the host's check
 * measured round by round, and its section of BENCHMARKS.md.
 */
import type { ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { connect, preparedStatements } from '../src/db/connect.js'
import { migrate } from '../src/db/migrate.js'
import { applySeed, type SeedDocument } from '../src/directory/seed.js'
import { dataset, hostCheckDataset, PROJECTS } from './dataset.js'
import { countDatabase } from './cpu.js'
import { measureHostCheck, MANY, type HostCheckRow, type HostCheckTarget } from './host-check.js'
import { start, stop, throwawayDatabase, waitFor } from './processes.js'
import { cpuOf, drive } from './drive.js'
import { floors, scenarios } from './scenarios.js'
import { hostOptions, hostTarget } from './host-check-section.js'
import { phaseDone } from './phases.js'
import type { Check } from './report.js'
import { roundsTargets, type Round } from './rounds-targets.js'
import { median } from './stats.js'
import { ADMIN_URL, HOST_CONCURRENCY, HOST_SECONDS, PROJECT_PORTS, PROJECT_ROUNDS, SERVER, SERVICE_ENV } from './settings.js'

/** One of the two worlds of issue 33's comparison: its database, its service and its floors, running. */
interface World {
  name: string
  projects: number
  database: string
  url: string
  service: ChildProcess
  base: string
  floor: ChildProcess
  floorBase: string
}

/** The floors and the bounds each round measures, then the service's rows (bench/scenarios.ts keys). */
const FLOOR_KEYS = ['read', 'showBound', 'showMemberBound', 'page', 'update', 'insertDelete'] as const
const KEYS = ['show-member', 'show-owner', 'page5-10k', 'page5-10k-member', 'page50-10k', 'update', 'add-remove'] as const
/** The host's check's engines, as their tables name them. */
const ENGINE_LABELS = { postgres: 'PostgreSQL pool', 'postgres, preparedStatements(pool)': 'PostgreSQL, `preparedStatements(pool)`', pglite: 'PGlite (in process)' } as const

/**
 * A world with projects beside the same world without them (issue 33: "show, the member's page and
 * the host's check on a world with projects — each within 10 % of this turn's ratios"). Each world
 * is its own database, seeded from bench/dataset.ts (10 projects, or none), VACUUM ANALYZEd, with
 * its service and its floors running. Then, PROJECT_ROUNDS times, the worlds in turn (the first of
 * each round alternating): the floors and the least shows, the two shows, the owner's and the
 * member's page 5 and the owner's page 50 at 10,000 rows, the update and the add + remove cycle;
 * and the host's check on the plain pool, on preparedStatements(pool) and on PGlite.
 * Each ratio is taken within a round — the row and what it is compared with, measured one after
 * the other — and the median of the rounds is reported: on this shared machine a row's req/s moves
 * by 2× between runs, and a ratio of medians taken minutes apart moves with it. Issue 47's targets
 * are judged on these medians (`checks`).
 */
export async function measureProjects (work: string): Promise<{ text: string, checks: Check[] }> {
  const worlds: World[] = []
  const lites: Array<{ close: () => Promise<void> }> = []
  const pools: Array<Kysely<any>> = []
  const drops: Array<() => Promise<void>> = []
  try {
    // seeded side by side (each through the service's own start with SEED_FILE), then restarted
    await Promise.all([{ name: 'without projects', projects: 0 }, { name: 'with projects', projects: PROJECTS }].map(async ({ name, projects }, k) => {
      const database = `team_access_bench_projects${projects}_${process.pid}`
      const made = await throwawayDatabase(ADMIN_URL, database)
      drops.push(made.drop)
      const seedFile = join(work, `seed-projects${projects}.json`)
      writeFileSync(seedFile, JSON.stringify(dataset(projects)))
      const [servicePort, floorPort] = k === 0 ? [PROJECT_PORTS[0], PROJECT_PORTS[1]] : [PROJECT_PORTS[2], PROJECT_PORTS[3]]
      const env = { DATABASE_URL: made.url, ...SERVICE_ENV }
      const seeding = start(SERVER, { ...env, SEED_FILE: seedFile, PORT: String(servicePort) })
      try {
        await waitFor(`http://127.0.0.1:${servicePort}/readyz`, 900_000)
      } finally {
        await stop(seeding)
      }
      const client = new pg.Client({ connectionString: made.url })
      await client.connect()
      await client.query('vacuum analyze').finally(async () => await client.end())
      const service = start(SERVER, { ...env, PORT: String(servicePort) })
      const floor = start('dist/bench/floor-server.js', { DATABASE_URL: made.url, PORT: String(floorPort) })
      const world: World = { name, projects, database, url: made.url, service, base: `http://127.0.0.1:${servicePort}`, floor, floorBase: `http://127.0.0.1:${floorPort}` }
      worlds[k] = world
      await waitFor(`${world.base}/readyz`, 600_000)
      await waitFor(`${world.floorBase}/floor/read/x`, 30_000)
      console.log(`projects: the world ${name} seeded and running`)
    }))
    phaseDone('issue 33: two worlds seeded')

    const all = scenarios(false)
    const rows = new Map<World, Round[]>(worlds.map((w) => [w, []]))
    for (let round = 0; round < PROJECT_ROUNDS; round++) {
      for (const world of round % 2 === 0 ? worlds : [...worlds].reverse()) {
        countDatabase(world.database)
        const measured: Round = {}
        for (const key of FLOOR_KEYS) {
          measured[floors[key].key] = await drive(world.floorBase, { ...floors[key], name: `${world.name}, round ${round + 1}: ${floors[key].name}` }, world.floor.pid!)
        }
        for (const key of KEYS) {
          const scenario = all.find((s) => s.key === key)!
          measured[key] = await drive(world.base, { ...scenario, name: `${world.name}, round ${round + 1}: ${scenario.name}` }, world.service.pid!)
        }
        rows.get(world)!.push(measured)
      }
    }
    phaseDone('issue 33: the rows, alternating')

    // the host's check: the same target as the host-check section (less its bound, which these
    // rounds do not compare), on each world's pools and on PGlite
    const checkOf = (tables: Kysely<any>) => { const { bound: _, ...target } = hostTarget(tables); return target }
    type Engine = { engine: string, world: World, target: HostCheckTarget }
    const engines: Engine[] = []
    for (const world of worlds) {
      for (const prepared of [false, true]) {
        const pool = new pg.Pool({ connectionString: world.url, max: HOST_CONCURRENCY })
        const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: prepared ? preparedStatements(pool) : pool }) })
        pools.push(db)
        engines.push({ engine: prepared ? 'postgres, preparedStatements(pool)' : 'postgres', world, target: { engine: 'postgres', db, ...checkOf(db.withSchema('team_access')) } })
      }
      const lite = await connect({ dataDir: 'memory://' })
      lites.push(lite)
      await migrate(lite.db)
      await applySeed(lite.db, hostCheckDataset(MANY, world.projects) as unknown as SeedDocument)
      const db = lite.db as Kysely<any>
      engines.push({ engine: 'pglite', world, target: { engine: 'pglite', db, ...checkOf(db) } })
    }
    const checkRatios = new Map<Engine, number[]>(engines.map((e) => [e, []]))
    for (let round = 0; round < PROJECT_ROUNDS; round++) {
      for (const world of round % 2 === 0 ? worlds : [...worlds].reverse()) {
        countDatabase(world.database)
        for (const e of engines.filter((x) => x.world === world)) {
          const [select, single] = await measureHostCheck(e.target, { ...hostOptions(), rounds: 1 }) as [HostCheckRow, HostCheckRow]
          checkRatios.get(e)!.push(single.callsPerSecond[0]! / select.callsPerSecond[0]!)
          console.log(`  ${world.name}, round ${round + 1}: the host's check, ${e.engine}: ${single.callsPerSecond[0]!.toFixed(0)} ÷ ${select.callsPerSecond[0]!.toFixed(0)} calls/s`)
        }
      }
    }
    phaseDone('issue 33: the host\'s check, alternating')

    // each ratio per round, then the median of the rounds
    const measures: Array<{ what: string, of: (world: World) => number[] }> = [
      { what: 'show, as a member ÷ one-row floor (req/s)', of: (w) => rows.get(w)!.map((r) => r['show-member']!.rps / r['floor:read']!.rps) },
      { what: 'show, as an owner ÷ one-row floor (req/s)', of: (w) => rows.get(w)!.map((r) => r['show-owner']!.rps / r['floor:read']!.rps) },
      { what: 'show, as a member ÷ one-row floor (CPU, floor ÷ show)', of: (w) => rows.get(w)!.map((r) => cpuOf(r['floor:read']!) / cpuOf(r['show-member']!)) },
      { what: 'show, as an owner ÷ one-row floor (CPU, floor ÷ show)', of: (w) => rows.get(w)!.map((r) => cpuOf(r['floor:read']!) / cpuOf(r['show-owner']!)) },
      { what: "the member's page 5 of 100 at 10,000 rows ÷ the owner's (req/s)", of: (w) => rows.get(w)!.map((r) => r['page5-10k-member']!.rps / r['page5-10k']!.rps) },
      { what: "the member's page 5 of 100 at 10,000 rows ÷ the owner's (CPU, owner's ÷ member's)", of: (w) => rows.get(w)!.map((r) => cpuOf(r['page5-10k']!) / cpuOf(r['page5-10k-member']!)) },
      ...Object.entries(ENGINE_LABELS).map(([engine, label]) => ({
        what: `the host's effectiveAccess ÷ the one-row SELECT, ${label}`,
        of: (w: World) => checkRatios.get(engines.find((e) => e.world === w && e.engine === engine)!)!
      }))
    ]
    const [without, withProjects] = worlds as [World, World]
    const each = (values: number[]) => values.map((v) => v.toFixed(2)).join(', ')
    const lines = measures.map(({ what, of }) => {
      const [a, b] = [of(without), of(withProjects)]
      const [ma, mb] = [median(a), median(b)]
      const change = mb / ma - 1
      const met = Math.abs(change) <= 0.1 || change > 0
      return `| ${what} | ${ma.toFixed(2)} (${each(a)}) | ${mb.toFixed(2)} (${each(b)}) | ${change >= 0 ? '+' : ''}${(change * 100).toFixed(0)} % | ${met ? 'met' : '**NOT met**'} |`
    })
    // the worlds side by side: each row's req/s and CPU per request with projects ÷ without, round by round
    const direct = [...FLOOR_KEYS.map((key) => floors[key].key), ...KEYS].map((key) => {
      const label = [...Object.values(floors), ...all].find((s) => s.key === key)!.name
      const pairs = rows.get(without)!.map((r, round) => [r[key]!, rows.get(withProjects)![round]![key]!] as const)
      const rps = pairs.map(([a, b]) => b.rps / a.rps)
      const cpu = pairs.map(([a, b]) => cpuOf(b) / cpuOf(a))
      return `| ${label} | ${median(rps).toFixed(2)} (${each(rps)}) | ${median(cpu).toFixed(2)} (${each(cpu)}) |`
    })
    const issue47 = roundsTargets([without, withProjects].map((world) => ({
      name: world.name,
      rounds: rows.get(world)!,
      hostChecks: new Map(engines.filter((e) => e.world === world).map((e) => [ENGINE_LABELS[e.engine as keyof typeof ENGINE_LABELS], checkRatios.get(e)!]))
    })))
    const text = `## A world with projects beside one without (issue 33)

Two databases of the same world (bench/dataset.ts without the \`large\` workspace's bulk rows): one
without projects, one with ${PROJECTS} projects holding the workspaces and 1,002 team-project rows (the
member's teams with a row on the projects of ws-small-0 and ws-huge); each seeded, VACUUM ANALYZEd,
with its own service and floors running. ${PROJECT_ROUNDS} rounds (BENCH_PROJECT_ROUNDS), the worlds in turn, the
first of each round alternating; in each, the floors and the least shows, the two shows, the owner's
and the member's page 5 and the owner's page 50, the update and the add + remove cycle, driven as in
the tables above, then the host's check as in its section (one ${HOST_SECONDS} s run
of each call). Each ratio is taken within one round, on one world — the row and what it is compared
with, one after the other — and the median of the rounds is given, each round in brackets. The
target: the world with projects within 10 % of the world without (or better).

| ratio | without projects, median (rounds) | with projects, median (rounds) | with ÷ without | within 10 % |
|---|---:|---:|---:|---|
${lines.join('\n')}

The same rows, world against world: each row's req/s and CPU per request (Node + PostgreSQL) with
projects ÷ without, in the same round (req/s above 1 and CPU below 1: cheaper with projects).

| row | req/s, with ÷ without, median (rounds) | CPU per request, with ÷ without, median (rounds) |
|---|---:|---:|
${direct.join('\n')}

Issue 47's targets on the same rounds: each ratio's median over the rounds in each world, by req/s,
with the CPU ratio (the floor's CPU per request ÷ the row's, Node + PostgreSQL; a cycle's two
requests against the floor's one) beside it and each round's req/s ratio in brackets. A bound is
one of bench/floor-server.ts's least shows: what any show that keeps the contract costs at least.

${issue47.table}`
    console.log(text)
    return { text, checks: issue47.checks }
  } finally {
    for (const db of pools) await db.destroy()
    for (const lite of lites) await lite.close()
    for (const world of worlds) {
      if (world === undefined) continue
      await stop(world.service)
      await stop(world.floor)
    }
    for (const drop of drops) await drop()
    countDatabase(undefined)
  }
}
