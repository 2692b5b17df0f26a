/**
 * The embedded default's start and memory under `npm run bench` (bench/run.ts): the service on a
 * fresh DATA_DIR with the demo data, then restarted on it, each timed to /readyz; and its section
 * of BENCHMARKS.md with its targets.
 */
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { assertPortFree, start, stop } from './processes.js'
import { procStatusMb } from './drive.js'
import type { Check } from './report.js'
import { median } from './stats.js'
import { EMBEDDED_PORT, SERVER, START_RUNS } from './settings.js'

export interface StartRun { firstSeconds: number, firstPeakMb: number, restartSeconds: number, restartPeakMb: number, rssAfterMb: number }

/** Starts the service until /readyz answers 200, polling every 20 ms; returns the seconds from spawn, and the process's peak and current RSS then. */
async function timedStart (env: Record<string, string>): Promise<{ child: ChildProcess, seconds: number, peakMb: number, rssMb: number }> {
  await assertPortFree(EMBEDDED_PORT)
  const began = performance.now()
  const child = start(SERVER, env)
  const until = began + 60_000
  while (performance.now() < until) {
    if (child.exitCode !== null) throw new Error(`the embedded service exited with ${child.exitCode} before it was ready`)
    try {
      if ((await fetch(`http://127.0.0.1:${EMBEDDED_PORT}/readyz`)).status === 200) {
        const seconds = (performance.now() - began) / 1000
        return { child, seconds, peakMb: procStatusMb(child.pid!, 'VmHWM'), rssMb: procStatusMb(child.pid!, 'VmRSS') }
      }
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  await stop(child)
  throw new Error('the embedded service was not ready within 60 s')
}

/**
 * The embedded default, as a person starts it: `npm start`'s `node … dist/src/server.js` with DATA_DIR a fresh
 * empty directory, no DATABASE_URL, no SEED_FILE, HOST=127.0.0.1 (so the demo data goes in on the
 * first start). First start, then a restart on the same DATA_DIR; each until /readyz answers 200.
 * Peak RSS is the process's VmHWM when it is ready; "RSS after" its VmRSS then, after the restart.
 */
export async function measureEmbeddedStart (): Promise<StartRun[]> {
  const runs: StartRun[] = []
  for (let i = 0; i < START_RUNS; i++) {
    const dataDir = mkdtempSync(join(tmpdir(), 'team-access-bench-embedded-'))
    const env = { DATA_DIR: dataDir, DATABASE_URL: '', SEED_FILE: '', HOST: '127.0.0.1', PORT: String(EMBEDDED_PORT), LOG_LEVEL: 'warn' }
    try {
      const first = await timedStart(env)
      // the demo data is there: its owners can list its workspace
      const demo = await fetch(`http://127.0.0.1:${EMBEDDED_PORT}/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=ws-DemoProduction01`, { headers: { authorization: 'Bearer acme-owners-demo-token' } })
      await stop(first.child)
      if (demo.status !== 200) throw new Error(`the demo data is not there after the first start (${demo.status})`)
      const restart = await timedStart(env)
      await stop(restart.child)
      const run = { firstSeconds: first.seconds, firstPeakMb: first.peakMb, restartSeconds: restart.seconds, restartPeakMb: restart.peakMb, rssAfterMb: restart.rssMb }
      console.log(`  embedded start ${i + 1}: first start ${run.firstSeconds.toFixed(2)} s (peak RSS ${run.firstPeakMb.toFixed(0)} MB), restart ${run.restartSeconds.toFixed(2)} s (peak RSS ${run.restartPeakMb.toFixed(0)} MB, ${run.rssAfterMb.toFixed(0)} MB when ready)`)
      runs.push(run)
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
  return runs
}

export function embeddedSection (runs: StartRun[]): { text: string, checks: Check[] } {
  const first = median(runs.map((r) => r.firstSeconds))
  const restart = median(runs.map((r) => r.restartSeconds))
  const firstPeak = median(runs.map((r) => r.firstPeakMb))
  const restartPeak = median(runs.map((r) => r.restartPeakMb))
  const after = median(runs.map((r) => r.rssAfterMb))
  const peak = Math.max(firstPeak, restartPeak)
  const each = (pick: (r: StartRun) => number, digits: number) => runs.map((r) => pick(r).toFixed(digits)).join(', ')
  const text = `## Embedded default: start and memory (PGlite on disk, demo data)

\`node ${SERVER}\` with DATA_DIR a fresh empty directory, no DATABASE_URL, no SEED_FILE,
HOST=127.0.0.1 (the demo data goes in on the first start), then restarted on the same DATA_DIR;
each until GET /readyz answers 200, timed from the spawn. Peak RSS is the process's VmHWM when it
is ready. ${runs.length} run${runs.length === 1 ? '' : 's'}: the median, and each run.

| measure | median | runs | target |
|---|---:|---:|---:|
| first start on an empty DATA_DIR, s | ${first.toFixed(2)} | ${each((r) => r.firstSeconds, 2)} | ≤ 1.5 |
| peak RSS of the first start, MB | ${firstPeak.toFixed(0)} | ${each((r) => r.firstPeakMb, 0)} | ≤ 200 |
| restart on the same DATA_DIR, s | ${restart.toFixed(2)} | ${each((r) => r.restartSeconds, 2)} | ≤ 0.8 |
| peak RSS of the restart, MB | ${restartPeak.toFixed(0)} | ${each((r) => r.restartPeakMb, 0)} | ≤ 200 |
| RSS when ready after the restart, MB | ${after.toFixed(0)} | ${each((r) => r.rssAfterMb, 0)} | |`
  const checks: Check[] = [
    { what: 'embedded: first start on an empty DATA_DIR (median)', measured: `${first.toFixed(2)} s`, goal: '≤ 1.5 s', met: first <= 1.5 },
    { what: 'embedded: restart on the same DATA_DIR (median)', measured: `${restart.toFixed(2)} s`, goal: '≤ 0.8 s', met: restart <= 0.8 },
    { what: 'embedded: peak RSS, the larger of first start and restart (medians)', measured: `${peak.toFixed(0)} MB`, goal: '≤ 200 MB', met: peak <= 200 }
  ]
  return { text, checks }
}
