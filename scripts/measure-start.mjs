#!/usr/bin/env node
// How fast and how big the embedded default starts: `node scripts/measure-start.mjs [RUNS]
// [--baseline DIR]` after `npm run build`, from the package root. Each run starts
// `node dist/src/server.js` with the Node flags of the checkout's `npm start` (under
// /usr/bin/time -v where it exists, for its peak RSS) on a new, empty DATA_DIR, polls /readyz
// until it answers, stops it with SIGTERM, then starts it again on
// the same directory (restart). Then it opens RUNS in-memory databases in one process (connect +
// migrate, as each test file does). Prints every run and the medians. Needs nothing but Node and
// the built dist/.
//
// --baseline DIR (or START_BASELINE=DIR): another checkout of this package, built (`npm ci && npm
// run build`), e.g. the previous main. Its dist/src/server.js is measured the same way, its runs
// interleaved with this one's (which goes first alternates), so that both see the same machine;
// a table then puts the medians side by side with the goals of issue 23.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const args = process.argv.slice(2)
const at = args.indexOf('--baseline')
const baselineDir = at === -1 ? process.env.START_BASELINE || undefined : args.splice(at, 2)[1]
const runs = Number(args[0] ?? 5)
const root = process.cwd()
const baseline = baselineDir === undefined ? undefined : resolve(baselineDir)
for (const dir of [root, baseline]) {
  if (dir !== undefined && !existsSync(resolve(dir, 'dist/src/server.js'))) throw new Error(`run \`npm run build\` first (no dist/src/server.js in ${dir})`)
}
/** The first start, restart and peak RSS goals of issue 23. */
const GOALS = { firstMs: 1500, restartMs: 800, peakMb: 200 }
const time = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2 }
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** The Node flags the checkout's `npm start` gives dist/src/server.js (package.json's start script); the bench reads them as bench/processes.ts's serviceNodeFlags does. */
function startFlags (dir) {
  const words = (JSON.parse(readFileSync(resolve(dir, 'package.json'), 'utf8')).scripts?.start ?? '').split(/\s+/)
  return words.slice(1, words.indexOf('dist/src/server.js')).filter((word) => word.startsWith('--'))
}

/** One start of the checkout in `dir`: ms until /readyz answers 200, and the server's peak RSS in MB. */
async function start (dir, dataDir, port) {
  const started = performance.now()
  const server = resolve(dir, 'dist/src/server.js')
  const node = [...startFlags(dir), server]
  const args = time ? ['-v', process.execPath, ...node] : node
  const child = spawn(time ?? process.execPath, args, {
    cwd: dir,
    env: { ...process.env, DATABASE_URL: '', DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let stderr = ''
  child.stderr.on('data', (d) => { stderr += d })
  const exited = new Promise((resolve) => child.on('exit', resolve))
  let ready
  while (ready === undefined) {
    if (child.exitCode !== null) throw new Error(`the server exited: ${stderr}`)
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) ready = performance.now() - started
    } catch {}
    if (ready === undefined) await sleep(10)
    if (performance.now() - started > 120_000) throw new Error('not ready in 120 s')
  }
  // the node process: time's child, or the child itself
  let pid = child.pid
  if (time) pid = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/)[0])
  process.kill(pid, 'SIGTERM')
  await exited
  const kb = time ? Number(stderr.match(/Maximum resident set size \(kbytes\): (\d+)/)?.[1]) : NaN
  return { readyMs: Math.round(ready), peakMb: Math.round(kb / 1024) }
}

/** Each checkout's first starts and restarts. */
const checkouts = [{ name: 'now', dir: root }, ...(baseline === undefined ? [] : [{ name: 'baseline', dir: baseline }])]
for (const checkout of checkouts) Object.assign(checkout, { first: [], restart: [] })
for (let i = 0; i < runs; i++) {
  // the same machine for both: one run of each in turn, the first of the pair alternating
  for (const checkout of i % 2 === 0 ? checkouts : [...checkouts].reverse()) {
    const dir = mkdtempSync(join(tmpdir(), 'team-access-start-'))
    try {
      const port = 3200 + Math.floor(Math.random() * 700)
      checkout.first.push(await start(checkout.dir, join(dir, 'data'), port))
      checkout.restart.push(await start(checkout.dir, join(dir, 'data'), port))
      const label = baseline === undefined ? '' : ` (${checkout.name})`
      console.log(`run ${i + 1}${label}: first start ${JSON.stringify(checkout.first.at(-1))}, restart ${JSON.stringify(checkout.restart.at(-1))}`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
const [now] = checkouts
const first = now.first
const restart = now.restart

const { connect } = await import(pathToFileURL(resolve(root, 'dist/src/db/connect.js')).href)
const { migrate } = await import(pathToFileURL(resolve(root, 'dist/src/db/migrate.js')).href)
const memory = []
for (let i = 0; i < runs; i++) {
  const started = performance.now()
  const connection = await connect({ dataDir: 'memory://' })
  await migrate(connection.db)
  memory.push(Math.round(performance.now() - started))
  await connection.close()
}
console.log(`in-memory databases (connect + migrate, one process): ${memory.join(', ')} ms`)

const summary = (rows) => `ready ${median(rows.map((r) => r.readyMs))} ms (${Math.min(...rows.map((r) => r.readyMs))}-${Math.max(...rows.map((r) => r.readyMs))}), peak RSS ${median(rows.map((r) => r.peakMb))} MB (${Math.min(...rows.map((r) => r.peakMb))}-${Math.max(...rows.map((r) => r.peakMb))})`
console.log(`medians of ${runs}:`)
console.log(`  first start on an empty DATA_DIR: ${summary(first)}`)
console.log(`  restart:                          ${summary(restart)}`)
console.log(`  in-memory database:               ${median(memory)} ms (first ${memory[0]} ms)`)

if (baseline !== undefined) {
  const base = checkouts[1]
  const ms = (rows, key) => median(rows.map((r) => r[key]))
  const lines = [
    ['', 'baseline', 'now', 'goal'],
    ['first start (ms)', ms(base.first, 'readyMs'), ms(now.first, 'readyMs'), `<= ${GOALS.firstMs}`],
    ['restart (ms)', ms(base.restart, 'readyMs'), ms(now.restart, 'readyMs'), `<= ${GOALS.restartMs}`],
    ['peak RSS, first (MB)', ms(base.first, 'peakMb'), ms(now.first, 'peakMb'), `<= ${GOALS.peakMb}`],
    ['peak RSS, restart (MB)', ms(base.restart, 'peakMb'), ms(now.restart, 'peakMb'), `<= ${GOALS.peakMb}`]
  ]
  console.log(`\nbaseline ${base.dir} against now ${now.dir}, median of ${runs} interleaved runs each:`)
  for (const [label, ...cells] of lines) console.log(`  ${String(label).padEnd(23)}${cells.map((c) => String(c).padStart(10)).join('')}`)
}
