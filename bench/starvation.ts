/**
 * `npm run bench:starvation`: can one caller starve the others? (DESIGN §5)
 *
 * A member of organization `noisy` lists, with page[size]=1, a workspace of 10,000 rows it may not
 * see, at 29 requests a second (just under RATE_LIMIT=30), each client giving up after 1 s. The
 * victim, the owner of another organization, lists its own small workspace 20 times a second
 * throughout. The victim's latency is reported before, during and after the attack, and how long
 * after the attack it took to be back to normal — on embedded PGlite and on PostgreSQL, with the
 * service's default settings.
 *
 * Settings: BENCH_DATABASE_URL (admin URL, default postgres://postgres@127.0.0.1:5432/postgres),
 * STARVATION_SERVER (another checkout's dist/src/server.js, to measure it instead).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { start, stop, waitFor } from './processes.js'

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const SERVER = process.env.STARVATION_SERVER ?? 'dist/src/server.js'
const PORT = 3120
const HIDDEN_ROWS = 10_000
const ATTACK_PER_SECOND = 29
const VICTIM_PER_SECOND = 20
const PHASE_MS = { before: 5000, during: 8000, after: 5000 }

function world () {
  const teams = Array.from({ length: HIDDEN_ROWS }, (_, i) => ({ id: `team-hidden-${i}`, name: `hidden${i}` }))
  return {
    users: [{ id: 'user-mallory', username: 'mallory', tokens: ['mallory-starvation-token'] }],
    organizations: [
      {
        id: 'org-noisy',
        name: 'noisy',
        teams: [...teams, { id: 'team-mallory', name: 'mallory', members: ['mallory'] }],
        workspaces: [{ id: 'ws-hidden', name: 'hidden' }],
        'team-access': teams.map((t) => ({ team: t.name, workspace: 'hidden', access: 'read' }))
      },
      {
        id: 'org-quiet',
        name: 'quiet',
        tokens: ['victim-starvation-token'],
        teams: [{ id: 'team-quiet', name: 'quiet', visibility: 'organization' }],
        workspaces: [{ id: 'ws-quiet', name: 'quiet' }],
        'team-access': [{ team: 'quiet', workspace: 'quiet', access: 'write' }]
      }
    ]
  }
}

const base = `http://127.0.0.1:${PORT}/api/v2/team-workspaces`
const victimUrl = `${base}?filter%5Bworkspace%5D%5Bid%5D=ws-quiet`
const attackUrl = `${base}?filter%5Bworkspace%5D%5Bid%5D=ws-hidden&page%5Bsize%5D=1`

interface Sample { at: number, ms: number, status: number }

/** `perSecond` requests a second, each on its own schedule, answers recorded; stops at `until`. */
async function load (url: string, token: string, perSecond: number, until: number, giveUpMs?: number): Promise<Sample[]> {
  const samples: Sample[] = []
  const pending: Array<Promise<void>> = []
  for (let next = Date.now(); next < until; next += 1000 / perSecond) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())))
    const began = performance.now()
    pending.push(fetch(url, { headers: { authorization: `Bearer ${token}` }, ...(giveUpMs === undefined ? {} : { signal: AbortSignal.timeout(giveUpMs) }) })
      .then(async (res) => { await res.arrayBuffer(); samples.push({ at: Date.now(), ms: performance.now() - began, status: res.status }) },
        () => { samples.push({ at: Date.now(), ms: performance.now() - began, status: 0 }) }))
  }
  await Promise.all(pending)
  return samples
}

const quantile = (values: number[], q: number): number => {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}

async function scenario (engine: 'pglite' | 'postgres', env: Record<string, string>): Promise<string> {
  const service = start(SERVER, { ...env, PORT: String(PORT), HOST: '127.0.0.1', LOG_LEVEL: 'warn' })
  try {
    await waitFor(`http://127.0.0.1:${PORT}/readyz`, 600_000)
    await load(victimUrl, 'victim-starvation-token', VICTIM_PER_SECOND, Date.now() + 1000) // warm-up
    const t0 = Date.now()
    const attackFrom = t0 + PHASE_MS.before
    const attackUntil = attackFrom + PHASE_MS.during
    const end = attackUntil + PHASE_MS.after
    const [victim, attack] = await Promise.all([
      load(victimUrl, 'victim-starvation-token', VICTIM_PER_SECOND, end),
      new Promise((resolve) => setTimeout(resolve, attackFrom - Date.now()))
        .then(() => load(attackUrl, 'mallory-starvation-token', ATTACK_PER_SECOND, attackUntil, 1000))
    ])
    // a sample belongs to the phase it was sent in
    const sentAt = (s: Sample) => s.at - s.ms
    const phase = (from: number, to: number) => victim.filter((s) => sentAt(s) >= from && sentAt(s) < to)
    const before = phase(t0, attackFrom)
    const during = phase(attackFrom, attackUntil)
    const after = phase(attackUntil, end)
    const normal = quantile(before.map((s) => s.ms), 0.5)
    // back to normal: the end of the last half-second after the attack whose p50 is over 2 × the p50 before
    let recovered = 0
    for (let from = attackUntil; from < end; from += 500) {
      const window = phase(from, from + 500).map((s) => s.ms)
      if (window.length > 0 && quantile(window, 0.5) > 2 * normal) recovered = from + 500 - attackUntil
    }
    const row = (name: string, samples: Sample[]) =>
      `| ${engine} | ${name} | ${samples.length} | ${quantile(samples.map((s) => s.ms), 0.5).toFixed(1)} | ${quantile(samples.map((s) => s.ms), 0.9).toFixed(1)} | ${samples.filter((s) => s.status !== 200).length} |`
    const statuses = new Map<number, number>()
    for (const s of attack) statuses.set(s.status, (statuses.get(s.status) ?? 0) + 1)
    const attackLine = [...statuses].map(([status, n]) => `${n} × ${status === 0 ? 'gave up' : status}`).join(', ')
    const p50During = quantile(during.map((s) => s.ms), 0.5)
    console.log(`${engine}: victim p50 ${normal.toFixed(1)} ms before, ${p50During.toFixed(1)} ms during (${(p50During / normal).toFixed(1)} ×), back to normal ${(recovered / 1000).toFixed(1)} s after; attack: ${attackLine}`)
    return [row('before', before), row('during the attack', during), row('after', after),
      `| ${engine} | during ÷ before (p50) | | ${(p50During / normal).toFixed(1)} × | | |`,
      `| ${engine} | back to normal after the attack (p50 of each ½ s ≤ 2 × before) | | ${(recovered / 1000).toFixed(1)} s | | |`,
      `| ${engine} | the attacker's answers | ${attack.length} | ${attackLine} | | |`].join('\n')
  } finally {
    await stop(service)
  }
}

async function main (): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'team-access-starvation-'))
  const seedFile = join(work, 'seed.json')
  writeFileSync(seedFile, JSON.stringify(world()))
  const database = `team_access_starvation_${process.pid}`
  const admin = new pg.Client({ connectionString: ADMIN_URL })
  await admin.connect()
  await admin.query(`create database ${database}`)
  const url = new URL(ADMIN_URL)
  url.pathname = `/${database}`
  const rows: string[] = []
  try {
    rows.push(await scenario('pglite', { DATA_DIR: join(work, 'data'), SEED_FILE: seedFile, DATABASE_URL: '' }))
    rows.push(await scenario('postgres', { DATABASE_URL: url.toString(), SEED_FILE: seedFile }))
  } finally {
    await admin.query(`drop database if exists ${database} with (force)`)
    await admin.end()
    rmSync(work, { recursive: true, force: true })
  }
  console.log(`
The victim (another organization's owner, ${VICTIM_PER_SECOND} lists/s) while a member lists a workspace of
${HIDDEN_ROWS.toLocaleString('en-US')} rows it may not see, ${ATTACK_PER_SECOND}/s with page[size]=1, giving up after 1 s (${SERVER}):

| engine | phase | requests | p50 ms | p90 ms | not 200 |
|---|---|---:|---:|---:|---:|
${rows.join('\n')}`)
}

await main()
