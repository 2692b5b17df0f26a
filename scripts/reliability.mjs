// Writes RELIABILITY.md from the figures the hardening and fault tests recorded in .reliability/
// on their last run (npm test, DATABASE_URL=… npm test, npm run test:faults).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'

const dir = new URL('../.reliability/', import.meta.url)
if (!existsSync(dir)) throw new Error('no figures yet: run the test suites first')
const figures = readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(readFileSync(new URL(f, dir), 'utf8')))
  .sort((a, b) => a.test.localeCompare(b.test))
const row = (f) => `| ${f.test} | ${f.figure} | ${f.bar} | ${f.at.slice(0, 16).replace('T', ' ')} |`
// a test with no figure here (a suite not run on this machine, on this engine) keeps its row as it was
const file = new URL('../RELIABILITY.md', import.meta.url)
const measured = new Set(figures.map((f) => f.test))
const kept = existsSync(file)
  ? readFileSync(file, 'utf8').split('\n').filter((line) => /^\| (?!test \||---)/.test(line)).map((line) => ({ test: line.split(' | ')[0].slice(2), line }))
    .filter(({ test }) => !measured.has(test))
  : []
const rows = [...figures.map((f) => ({ test: f.test, line: row(f) })), ...kept].sort((a, b) => a.test.localeCompare(b.test))
writeFileSync(file, `# Reliability

What the hardening tests (test/hardening/, in \`npm test\`) and the fault tests (test-faults/,
\`npm run test:faults\`) measured on their last run on this machine, against the bar each must
meet. The tests fail when a bar is not met; \`npm run reliability\` rewrites this file from the
figures they record. Engines: pglite is the embedded default, postgres the server of DATABASE_URL.

| test | last figure | bar | measured (UTC) |
|---|---|---|---|
${rows.map((r) => r.line).join('\n')}

Where each lives:
- fuzzing: test/hardening/fuzz.test.ts (fast-check: bodies, query strings, path ids; every operation)
- model-based authorization: test/hardening/model.test.ts (random worlds, a reference model written from DESIGN §3-§4)
- races: test/hardening/races.test.ts
- rate limiting: test/hardening/rate-limit.test.ts
- log canary, limits: test/hardening/secrets-and-limits.test.ts
- database faults (stop under load, pool exhaustion, lock wait): test-faults/database-faults.test.ts
- graceful shutdown, and the reported case: test-faults/shutdown.test.ts (the built server, SIGTERM; requests
  in flight in the database, and unread in sockets and the accept queue of a stopped server)
- lost output: test-faults/lost-output.test.ts (the built server on each engine: its log reader killed 20 ms
  after SIGTERM; run under \`script\`, whose terminal closes)
- review load: test-faults/review-load.test.ts (the built server on each engine, 400 teams × 2,000 workspaces: a
  member of another organization asks every 20 ms while one owner pages, streams forty CSVs, sends HEADs)
- escalation model: test/hardening/escalation-model.test.ts (random steps, projects and seeds among them)
- two replicas, one Redis: test-faults/replicas.test.ts (two server processes on one PostgreSQL and one
  Redis of the test's own; Redis stopped and started under them)
- rate limiting through Redis: test/hardening/rate-limit.test.ts
- metrics, load shedding: test/metrics.test.ts, test/load-shedding.test.ts (an event loop held busy)
`)
console.log(`RELIABILITY.md: ${figures.length} figures measured here, ${kept.length} rows kept`)
