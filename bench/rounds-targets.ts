/**
 * Issue 47's targets judged on the alternating rounds of bench/projects-compare.ts: each ratio taken
 * within one round (the row, then what it is compared with, one after the other), the median of the
 * rounds reported for each world, with the CPU ratio beside it and the least shows — the bounds of
 * bench/floor-server.ts — in the same table.
 */
import { cpuOf, type Row } from './drive.js'
import type { Check } from './report.js'
import { fixed, median } from './stats.js'

/** One round of one world: each row by its key (bench/scenarios.ts; floors as `floor:…`). */
export type Round = Record<string, Row>

interface Ratio {
  what: string
  row: string
  floor: string
  /** Absent for a bound: measured beside the targets, not one of them. */
  goal?: number
  /** The service's requests in one of the floor's (an add + remove cycle is two requests, the floor one). */
  requests?: number
}

const RATIOS: Ratio[] = [
  { what: 'show, as an owner ÷ one-row floor', row: 'show-owner', floor: 'floor:read', goal: 0.75 },
  { what: 'show, as a member ÷ one-row floor', row: 'show-member', floor: 'floor:read', goal: 0.75 },
  { what: 'bound: the least show of §4 ÷ one-row floor', row: 'floor:showBound', floor: 'floor:read' },
  { what: 'bound: the least show of §4 by a member ÷ one-row floor', row: 'floor:showMemberBound', floor: 'floor:read' },
  { what: 'page 50 of 100 at 10,000 rows (deep) ÷ page floor', row: 'page50-10k', floor: 'floor:page', goal: 0.8 },
  { what: 'update ÷ write floor (one-row UPDATE)', row: 'update', floor: 'floor:update', goal: 0.8 },
  { what: 'add + remove cycle ÷ insert + delete floor', row: 'add-remove', floor: 'floor:insertDelete', goal: 0.6, requests: 2 }
]

/** The median of the rounds, by rate (the row's req/s ÷ the floor's) and by CPU (the floor's ÷ the row's, per floor request), each round's rate ratio in brackets. */
function medians (rounds: Round[], { row, floor, requests = 1 }: Ratio): { rate: number, cpu: number, each: number[] } {
  const each = rounds.map((r) => r[row]!.rps / r[floor]!.rps)
  return { rate: median(each), cpu: median(rounds.map((r) => cpuOf(r[floor]!) / (requests * cpuOf(r[row]!)))), each }
}

/**
 * The table of issue 47's targets on two worlds' rounds, and a check of each target (met when the
 * median of both worlds meets it); `hostChecks` are the host's check's ratios, round by round.
 */
export function roundsTargets (worlds: Array<{ name: string, rounds: Round[], hostChecks: Map<string, number[]> }>): { table: string, checks: Check[] } {
  const lines: string[] = []
  const checks: Check[] = []
  const judged = (what: string, goal: number | undefined, values: Array<{ rate: number, cpu?: number, each: number[] }>) => {
    const cells = values.map(({ rate, cpu, each }) => `${fixed(rate)}${cpu === undefined ? '' : ` (CPU ${fixed(cpu)})`} [${each.map((v) => fixed(v)).join(', ')}]`)
    const met = goal !== undefined && values.every((v) => v.rate >= goal)
    lines.push(`| ${what} | ${cells.join(' | ')} | ${goal === undefined ? 'bound' : `≥ ${goal}`} | ${goal === undefined ? '' : met ? 'met' : '**NOT met**'} |`)
    if (goal !== undefined) {
      checks.push({ what, measured: values.map((v, k) => `${fixed(v.rate)}${v.cpu === undefined ? '' : ` (CPU ${fixed(v.cpu)})`} ${worlds[k]!.name}`).join('; '), goal: `≥ ${goal}`, met })
    }
  }
  for (const ratio of RATIOS) judged(ratio.what, ratio.goal, worlds.map((w) => medians(w.rounds, ratio)))
  for (const engine of worlds[0]!.hostChecks.keys()) {
    judged(`the host's effectiveAccess ÷ the one-row SELECT, ${engine}`, 0.8, worlds.map((w) => {
      const each = w.hostChecks.get(engine)!
      return { rate: median(each), each }
    }))
  }
  const table = `| ratio | ${worlds.map((w) => `${w.name}: median (CPU) [rounds]`).join(' | ')} | goal | |
|---|${worlds.map(() => '---:').join('|')}|---|---|
${lines.join('\n')}`
  return { table, checks }
}
