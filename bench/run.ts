/**
 * `npm run bench`: the service against the floors of its own design, on the machine's PostgreSQL,
 * once on embedded PGlite, and the embedded default's start. Loads the dataset of bench/dataset.ts
 * through the seed format (and its 100,000-row workspace by bulk SQL on PostgreSQL), drives each
 * operation with autocannon (fixed connections, a warm-up, then a run of a fixed number of
 * requests sized to last about BENCH_DURATION), measures the floors in the same run, prints the
 * tables and the targets (met / NOT met), and writes BENCHMARKS.md.
 *
 * Settings: BENCH_DATABASE_URL (an admin URL of the server, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_DURATION (s, default 8), BENCH_WARMUP (s, default 2), BENCH_CONNECTIONS (default 10),
 * BENCH_PORT (the first of four consecutive ports, default 3110), BENCH_SKIP_PGLITE=1 to leave out
 * the PGlite table (the embedded start is measured all the same), BENCH_START_RUNS (embedded
 * starts, default 3).
 * BENCH_SERVER=/abs/path/dist/src/server.js measures another checkout's service against this
 * checkout's floors and dataset (e.g. a branch whose audit trail is not merged here yet); its
 * schema must have this checkout's columns, which the page floor reads.
 * BENCH_BASELINE=DIR (another checkout, built with `npm ci && npm run build`) adds a side-by-side
 * section: that checkout's service and this one on the same database, each scenario driven on
 * both, alternating, BENCH_SIDE_BY_SIDE_ROUNDS times (default 3), compared by their medians (the
 * rows issue 23 added are left out of it).
 *
 * Issue 23's parts: CPU per request (bench/cpu.ts) of every row, its table beside the floors';
 * a regenerated-away token's first request (bench/revoked-token.ts; BENCH_REVOKED_ROUNDS, default
 * 200); the host's check path in process (bench/host-check.ts; BENCH_HOST_SECONDS, default 2,
 * BENCH_HOST_ROUNDS, default 3; BENCH_PLUGIN=/abs/path/dist/src/index.js measures another build's
 * plugin); the access set (bench/access-set-measure.ts, the code of `npm run bench:access-set`;
 * ACCESS_SET_REQUESTS, default 100 here); a 1,000-team seed with 100 removals and its dry run
 * (bench/seed-apply.ts; BENCH_SEED_ROUNDS, default 3, BENCH_SEED_ROUNDS_PGLITE, default 1).
 *
 * Issue 33's comparison (measureProjects): the same world with projects and without, each its own
 * database, service and floors, the show, page and host-check ratios taken round by round
 * (BENCH_PROJECT_ROUNDS, default 3) on ports BENCH_PORT + 5 … + 8.
 *
 * The mirror (bench/mirror.ts, DESIGN §13.2): an organization of 5,000 workspaces, 1,000 teams and
 * about 40,000 team-workspace rows read from this service standing in for HCP Terraform at 30
 * requests a second (port BENCH_PORT + 9), into an embedded and a PostgreSQL database, then again
 * with nothing changed; several minutes a run.
 *
 * Parts of the run: BENCH_ONLY=postgres,revoked,host-check,projects,pglite,access-set,seed,embedded,mirror (any of
 * them; all when unset) and BENCH_ROWS=floor:read,show-owner,… (the table rows by key). A partial
 * run prints its report and leaves BENCHMARKS.md alone (BENCH_WRITE=1 writes it all the same).
 * Each part's time is printed and given in BENCHMARKS.md.
 *
 * This file runs the parts in order. Its rooms: settings.ts (the settings above), scenarios.ts (the
 * rows and floors driven), drive.ts (a row driven and measured; the ratios), service-runs.ts (the
 * service and its floors, the seed and the bulk load, the baseline side by side),
 * host-check-section.ts, projects-compare.ts (issue 33), embedded-start.ts, mirror.ts, phases.ts, stats.ts, and
 * report.ts (BENCHMARKS.md's text).
 */
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { connect, preparedStatements } from '../src/db/connect.js'
import { migrate } from '../src/db/migrate.js'
import { applySeed, type SeedDocument } from '../src/directory/seed.js'
import { projectFile } from '../src/project-file.js'
import { dataset, hostCheckDataset, LARGE } from './dataset.js'
import { countDatabase } from './cpu.js'
import { accessSetSection } from './access-set-measure.js'
import { measureHostCheck, type HostCheckRow } from './host-check.js'
import type { RevokedSamples } from './revoked-token.js'
import { measureSeed, SEED_REMOVED, SEED_TEAMS } from './seed-apply.js'
import { assertPortFree } from './processes.js'
import type { Row } from './drive.js'
import { bulkLoad, measureFloor, measureService, measureSideBySide, seed } from './service-runs.js'
import { hostCheckSection, hostOptions, hostTarget } from './host-check-section.js'
import { measureProjects } from './projects-compare.js'
import { embeddedSection, measureEmbeddedStart } from './embedded-start.js'
import { measureMirror, mirrorSection } from './mirror.js'
import { phaseDone, startPhases } from './phases.js'
import { median } from './stats.js'
import { cpuSection, keptSections, report, revokedSection, section, seedSection, spreadAndMemory, targets, type Check } from './report.js'
import {
  ACCESS_SET_PORT, ACCESS_SET_REQUESTS, ADMIN_URL, AUDIT_TRAIL, BASELINE, BASELINE_PORT, CONNECTIONS, doing, DURATION, EMBEDDED_PORT, FLOOR_PORT, HOST_CONCURRENCY,
  MIRROR_PORT, ONLY, PARTIAL, PROJECT_PORTS, ROWS, SEED_ROUNDS, SEED_ROUNDS_PGLITE, SERVER, SERVICE_PORT, WARMUP
} from './settings.js'

async function main (): Promise<void> {
  const began = Date.now()
  for (const port of [SERVICE_PORT, FLOOR_PORT, BASELINE_PORT, EMBEDDED_PORT, ...(doing('projects') ? PROJECT_PORTS : []), ...(doing('mirror') ? [MIRROR_PORT] : [])]) await assertPortFree(port)
  const work = mkdtempSync(join(tmpdir(), 'team-access-bench-'))
  const seedFile = join(work, 'seed.json')
  writeFileSync(seedFile, JSON.stringify(dataset()))
  const database = `team_access_bench_${process.pid}`
  const admin = new pg.Client({ connectionString: ADMIN_URL })
  await admin.connect()
  const pgVersion = (await admin.query('show server_version')).rows[0].server_version as string
  await admin.query(`create database ${database}`)
  const url = new URL(ADMIN_URL)
  url.pathname = `/${database}`
  // PostgreSQL's CPU per request: this database's backends and the server's own processes, not other work's
  countDatabase(database)
  const sections: string[] = []
  /** Issue 23's targets, issue 13's, issue 5's. */
  const checks: Check[] = []
  const issue13: Check[] = []
  const issue47: Check[] = []
  const earlier: Check[] = []
  let audit = false
  const pgTables = doing('postgres') || doing('revoked') || doing('host-check')
  try {
    console.log(`PostgreSQL ${pgVersion}: ${CONNECTIONS} connections, ${WARMUP} s warm-up, ${DURATION} s per run`)
    const pgEnv = { DATABASE_URL: url.toString() }
    startPhases()
    if (BASELINE !== undefined && doing('postgres')) {
      sections.push(await measureSideBySide(pgEnv, seedFile, url.toString()))
      phaseDone('side by side')
    }
    let revoked: Array<{ engine: string, samples: RevokedSamples }> = []
    const hostRows: Array<{ engine: string, rows: HostCheckRow[] }> = []
    if (pgTables) {
      const seedSeconds = await seed(pgEnv, seedFile)
      console.log(`postgres: migrated and seeded in ${seedSeconds.toFixed(1)} s`)
      const bulkSeconds = await bulkLoad(url.toString())
      console.log(`postgres: ${LARGE.toLocaleString('en-US')} rows of workspace large bulk-loaded in ${bulkSeconds.toFixed(1)} s`)
      phaseDone('PostgreSQL seed and bulk load')
      if (doing('postgres') || doing('revoked')) {
        const floorRows = doing('postgres') ? await measureFloor(pgEnv) : {}
        const service = await measureService('postgres', pgEnv, floorRows, { rows: doing('postgres'), revoked: doing('revoked') })
        audit = service.audit
        if (service.revoked !== undefined) revoked.push({ engine: 'postgres', samples: service.revoked })
        if (doing('postgres')) {
          const floorList = [floorRows.read, floorRows.showBound, floorRows.showMemberBound, floorRows.update, floorRows.insertDelete, floorRows.page].filter((row): row is Row => row !== undefined)
          sections.push(section(`PostgreSQL ${pgVersion}`, [...floorList, ...service.rows],
            `Migrated and seeded (SEED_FILE) in ${seedSeconds.toFixed(1)} s, ${LARGE.toLocaleString('en-US')} rows bulk-loaded in ${bulkSeconds.toFixed(1)} s; restarted on the loaded database in ${service.startSeconds.toFixed(1)} s.`))
          sections.push(cpuSection(service.rows, floorRows))
          checks.push(...targets(service.rows, 23))
          issue13.push(...targets(service.rows, 13))
          earlier.push(...targets(service.rows, 5), ...spreadAndMemory(service.rows))
        }
        phaseDone(doing('postgres') ? 'PostgreSQL table' : 'PostgreSQL: the revoked token')
      }
      if (doing('host-check')) {
        // the host's pool as it is, and wrapped with preparedStatements (as the README advises)
        for (const prepared of [false, true]) {
          const engine = prepared ? 'postgres, preparedStatements(pool)' : 'postgres'
          console.log(`${engine}: the host's check path, in process`)
          const pool = new pg.Pool({ connectionString: url.toString(), max: HOST_CONCURRENCY })
          const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: prepared ? preparedStatements(pool) : pool }) })
          try {
            hostRows.push({ engine, rows: await measureHostCheck({ engine: 'postgres', db, ...hostTarget(db.withSchema('team_access')) }, hostOptions()) })
          } finally {
            await db.destroy()
          }
        }
        phaseDone('host check on PostgreSQL')
      }
    }

    if (doing('pglite') || doing('revoked')) {
      if (process.env.BENCH_SKIP_PGLITE !== '1') {
        console.log('PGlite (embedded, in memory)')
        const lite = await measureService('pglite', { DATA_DIR: 'memory://', SEED_FILE: seedFile, DATABASE_URL: '' }, undefined, { rows: doing('pglite'), revoked: doing('revoked') })
        if (lite.revoked !== undefined) revoked.push({ engine: 'pglite', samples: lite.revoked })
        if (doing('pglite')) {
          sections.push(section('PGlite, embedded in the service, in memory (no floor: the floors are defined on PostgreSQL)', lite.rows,
            `Started, migrated and seeded (SEED_FILE) in ${lite.startSeconds.toFixed(1)} s. No 100,000-row workspace: it is loaded by SQL on PostgreSQL only, and no team create, member add or token create row. Ratios compare rows of this table; no target applies here.`))
        }
        phaseDone(doing('pglite') ? 'PGlite table' : 'PGlite: the revoked token')
      }
    }
    if (doing('host-check')) {
      console.log('pglite: the host\'s check path, in process (the part of the dataset it reads, seeded in memory)')
      const connection = await connect({ dataDir: 'memory://' })
      try {
        const seeding = Date.now()
        await migrate(connection.db)
        await applySeed(connection.db, hostCheckDataset() as unknown as SeedDocument)
        console.log(`pglite: migrated and seeded in ${((Date.now() - seeding) / 1000).toFixed(1)} s`)
        const db = connection.db as Kysely<any>
        hostRows.push({ engine: 'pglite', rows: await measureHostCheck({ engine: 'pglite', db, ...hostTarget(db) }, hostOptions()) })
      } finally {
        await connection.close()
      }
      sections.push(hostCheckSection(hostRows))
      // the host's check path (issue 23): effectiveAccess ÷ the primary-key SELECT through the same pool, PostgreSQL, 16 in flight
      for (const { engine, rows } of hostRows.filter((r) => r.engine.startsWith('postgres'))) {
        const [select, single] = rows as [HostCheckRow, HostCheckRow]
        const ratio = median(single.callsPerSecond) / median(select.callsPerSecond)
        checks.push({ what: `the host's effectiveAccess ÷ a one-row primary-key SELECT through the same Kysely pool (${engine}, ${HOST_CONCURRENCY} in flight)`, measured: `${ratio.toFixed(2)} (${median(single.callsPerSecond).toFixed(0)} vs ${median(select.callsPerSecond).toFixed(0)} per second)`, goal: '≥ 0.8', met: ratio >= 0.8 })
      }
      phaseDone('host check on PGlite')
    }
    if (revoked.length > 0) sections.push(revokedSection(revoked))
    revoked = []

    if (doing('access-set')) {
      console.log('The access set and effective access (bench/access-set-measure.ts)')
      sections.push(await accessSetSection({
        adminUrl: ADMIN_URL,
        server: SERVER,
        requests: ACCESS_SET_REQUESTS,
        warmup: Math.max(5, Math.round(ACCESS_SET_REQUESTS / 10)),
        port: ACCESS_SET_PORT,
        heading: '## The access set and effective access (issue 22)',
        command: 'Measured by bench/access-set-measure.ts (as `npm run bench:access-set` measures it)'
      }))
      phaseDone('access set')
    }

    if (doing('projects')) {
      console.log('Issue 33: a world with projects beside one without')
      const projects = await measureProjects(work)
      sections.push(projects.text)
      issue47.push(...projects.checks)
    }

    if (doing('seed')) {
      const seedDatabase = `team_access_bench_seed_${process.pid}`
      await admin.query(`create database ${seedDatabase}`)
      const seedUrl = new URL(ADMIN_URL)
      seedUrl.pathname = `/${seedDatabase}`
      try {
        console.log(`postgres: a seed of ${SEED_TEAMS} teams, ${SEED_REMOVED} removed`)
        const onPostgres = await measureSeed({ url: seedUrl.toString() }, SEED_ROUNDS)
        console.log(`pglite: a seed of ${SEED_TEAMS} teams, ${SEED_REMOVED} removed`)
        const onPglite = await measureSeed({ dataDir: 'memory://' }, SEED_ROUNDS_PGLITE)
        sections.push(seedSection([{ engine: 'postgres', times: onPostgres }, { engine: 'pglite', times: onPglite }]))
        phaseDone('seed')
      } finally {
        await admin.query(`drop database if exists ${seedDatabase} with (force)`)
      }
    }

    if (doing('mirror')) {
      console.log('The mirror: 5,000 workspaces, 1,000 teams from a stand-in at 30 requests a second')
      const mirror = mirrorSection(await measureMirror(work))
      sections.push(mirror.text)
      phaseDone('mirror')
    }
  } finally {
    await admin.query(`drop database if exists ${database} with (force)`)
    await admin.end()
    rmSync(work, { recursive: true, force: true })
  }

  if (doing('embedded')) {
    console.log('Embedded default: start and memory')
    const embedded = embeddedSection(await measureEmbeddedStart())
    sections.push(embedded.text)
    checks.push(...embedded.checks)
    phaseDone('embedded start')
  }
  if (doing('postgres')) {
    issue13.push({ what: 'the audit event write has its own row ("audit event write: …")', measured: audit ? 'present, with its event' : `present, the write alone: no audit trail in this service (GET ${AUDIT_TRAIL} absent, so no audit read row)`, goal: 'a row', met: true })
    issue13.push({ what: 'the workspace and team reads have their own rows', measured: 'workspace: show by id, by organization and name, list; team: show by id, list with filter[names]', goal: 'rows', met: true })
  }

  const text = report({ began, issue47, checks, issue13, earlier, audit, sections })
  console.log(`\n${text}`)
  if (!PARTIAL || process.env.BENCH_WRITE === '1') writeFileSync(projectFile('BENCHMARKS.md'), text + keptSections())
  else console.log(`BENCHMARKS.md not written: a partial run (BENCH_ONLY=${ONLY?.join(',') ?? ''} BENCH_ROWS=${ROWS?.join(',') ?? ''}; BENCH_WRITE=1 writes it all the same)`)
}

await main()
