#!/usr/bin/env node
// How fast and how big the embedded default starts: `node scripts/measure-start.mjs [RUNS]` after
// `npm run build`, from the package root. Each run starts `node dist/src/server.js` (under
// /usr/bin/time -v where it exists, for its peak RSS) on a new, empty DATA_DIR, polls /readyz
// until it answers, stops it with SIGTERM, then starts it again on the same directory (restart).
// Then it opens RUNS in-memory databases in one process (connect + migrate, as each test file
// does). Prints every run and the medians. Needs nothing but Node and the built dist/.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const runs = Number(process.argv[2] ?? 5)
const root = process.cwd()
const server = resolve(root, 'dist/src/server.js')
if (!existsSync(server)) throw new Error('run `npm run build` first (no dist/src/server.js here)')
const time = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2 }
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** One start: ms until /readyz answers 200, and the server's peak RSS in MB. */
async function start (dataDir, port) {
  const started = performance.now()
  const args = time ? ['-v', process.execPath, server] : [server]
  const child = spawn(time ?? process.execPath, args, {
    cwd: root,
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

const first = []
const restart = []
for (let i = 0; i < runs; i++) {
  const dir = mkdtempSync(join(tmpdir(), 'team-access-start-'))
  try {
    const port = 3200 + Math.floor(Math.random() * 700)
    first.push(await start(join(dir, 'data'), port))
    restart.push(await start(join(dir, 'data'), port))
    console.log(`run ${i + 1}: first start ${JSON.stringify(first.at(-1))}, restart ${JSON.stringify(restart.at(-1))}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

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
