// Writes RELIABILITY.md from the figures the hardening and fault tests recorded in .reliability/
// on their last run (npm test, DATABASE_URL=… npm test, npm run test:faults).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'

const dir = new URL('../.reliability/', import.meta.url)
if (!existsSync(dir)) throw new Error('no figures yet: run the test suites first')
const figures = readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(readFileSync(new URL(f, dir), 'utf8')))
  .sort((a, b) => a.test.localeCompare(b.test))
const row = (f) => `| ${f.test} | ${f.figure} | ${f.bar} | ${f.at.slice(0, 16).replace('T', ' ')} |`
writeFileSync(new URL('../RELIABILITY.md', import.meta.url), `# Reliability

What the hardening tests (test/hardening/, in \`npm test\`) and the fault tests (test-faults/,
\`npm run test:faults\`) measured on their last run on this machine, against the bar each must
meet. The tests fail when a bar is not met; \`npm run reliability\` rewrites this file from the
figures they record. Engines: pglite is the embedded default, postgres the server of DATABASE_URL.

| test | last figure | bar | measured (UTC) |
|---|---|---|---|
${figures.map(row).join('\n')}

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
- two replicas, one Redis: test-faults/replicas.test.ts (two server processes on one PostgreSQL and one
  Redis of the test's own; Redis stopped and started under them)
- rate limiting through Redis: test/hardening/rate-limit.test.ts
- metrics, load shedding: test/metrics.test.ts, test/load-shedding.test.ts (an event loop held busy)
`)
console.log(`RELIABILITY.md: ${figures.length} figures`)
