/** How long each part of `npm run bench` took (bench/run.ts): printed as each ends, and given in BENCHMARKS.md. */

/** How long each part of the run took, for the report. */
export const phases: Array<{ name: string, seconds: number }> = []
let phaseStarted = Date.now()

/** The clock of the first part starts now. */
export function startPhases (): void {
  phaseStarted = Date.now()
}
export function phaseDone (name: string): void {
  const seconds = (Date.now() - phaseStarted) / 1000
  phases.push({ name, seconds })
  console.log(`[${name}: ${seconds.toFixed(0)} s]`)
  phaseStarted = Date.now()
}
