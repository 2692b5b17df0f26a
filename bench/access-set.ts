/**
 * `npm run bench:access-set`: what a workspace's access set costs beside the plain list (issue 22),
 * measured by bench/access-set-measure.ts (the very code of the section `npm run bench` writes).
 * Prints the section and writes it into BENCHMARKS.md as "The access set and effective access
 * (issue 22)" (replaced where it is, otherwise inserted after the file's header).
 *
 * Settings: BENCH_DATABASE_URL / DATABASE_URL (an admin URL: PostgreSQL too), ACCESS_SET_SERVER
 * (another checkout's dist/src/server.js, to measure it instead), ACCESS_SET_REQUESTS (default
 * 200), ACCESS_SET_WARMUP (rounds, default 20), BENCH_PORT (default 3140).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { projectFile } from '../src/project-file.js'
import { accessSetSection } from './access-set-measure.js'

export const ACCESS_SET_HEADING = '## The access set and effective access (issue 22)'

const ADMIN_URL = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || undefined
const SERVER = process.env.ACCESS_SET_SERVER ?? 'dist/src/server.js'
const REQUESTS = Number(process.env.ACCESS_SET_REQUESTS ?? 200)
const WARMUP = Number(process.env.ACCESS_SET_WARMUP ?? 20)
const PORT = Number(process.env.BENCH_PORT ?? 3140)

/** The section in BENCHMARKS.md: replaced where it is, otherwise inserted after the header (before the first section). */
function writeSection (section: string): void {
  const file = projectFile('BENCHMARKS.md')
  const text = readFileSync(file, 'utf8')
  const at = text.indexOf(`${ACCESS_SET_HEADING}\n`)
  let next: string
  if (at >= 0) {
    const end = text.indexOf('\n## ', at + ACCESS_SET_HEADING.length)
    next = text.slice(0, at) + section + (end < 0 ? '' : text.slice(end))
  } else {
    const first = text.indexOf('\n## ')
    next = first < 0 ? `${text.trimEnd()}\n\n${section}` : `${text.slice(0, first + 1)}${section}${text.slice(first)}`
  }
  writeFileSync(file, next)
}

const settings = [
  ...(ADMIN_URL === undefined ? [] : ['BENCH_DATABASE_URL=…']),
  ...(REQUESTS === 200 ? [] : [`ACCESS_SET_REQUESTS=${REQUESTS}`]),
  ...(WARMUP === 20 ? [] : [`ACCESS_SET_WARMUP=${WARMUP}`]),
  ...(SERVER === 'dist/src/server.js' ? [] : [`ACCESS_SET_SERVER=${SERVER}`])
]
const section = await accessSetSection({
  adminUrl: ADMIN_URL,
  server: SERVER,
  requests: REQUESTS,
  warmup: WARMUP,
  port: PORT,
  heading: ACCESS_SET_HEADING,
  command: `\`${[...settings, 'npm run bench:access-set'].join(' ')}\` (bench/access-set.ts)`
})
writeSection(section)
console.log(`\n${section}`)
