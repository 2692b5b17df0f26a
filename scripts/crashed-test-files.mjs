// node scripts/crashed-test-files.mjs TAP_OUTPUT: the test files of a failed tap run that died of a
// native crash of the runtime — killed by SIGABRT, SIGSEGV, SIGBUS or SIGILL with no assertion of
// theirs failed — one per line, when those are the run's only failures (exit 0); exit 1 when any
// failure is anything else (a failed assertion, a timeout, a file that exited non-zero, V8 out of
// heap, which aborts as well), so that CI runs a crashed file once more and never a failing one.
// A TypeScript and JavaScript suite cannot corrupt the native heap itself: a crash like "corrupted
// size vs. prev_size" (glibc's abort) is the runtime's or a native addon's, seen once on Node 24.
import { readFileSync } from 'node:fs'

const CRASHES = new Set(['SIGABRT', 'SIGSEGV', 'SIGBUS', 'SIGILL'])
const output = readFileSync(process.argv[2], 'utf8')
// V8 aborts too when a process runs out of heap: that can be the code's own doing, never run again
if (/FATAL ERROR|heap out of memory|Reached heap limit/.test(output)) process.exit(1)
const lines = output.split('\n')

const crashed = []
let others = false
for (let i = 0; i < lines.length; i++) {
  const failed = /^not ok \d+ - (\S+)/.exec(lines[i])
  if (failed === null) continue
  const file = failed[1]
  // its diagnostics: the YAML block under the line
  let signal
  for (let j = i + 1; j < lines.length && lines[j].startsWith('  '); j++) signal = /^ {2}signal: (\S+)/.exec(lines[j])?.[1] ?? signal
  // its own output (buffered: from its "# Subtest: FILE" to this line): no assertion of it failed
  const start = lines.lastIndexOf(`# Subtest: ${file}`, i)
  if (start !== -1 && CRASHES.has(signal) && !lines.slice(start, i).some((line) => /^\s+not ok /.test(line))) crashed.push(file)
  else others = true
}

if (others || crashed.length === 0) process.exit(1)
console.log(crashed.join('\n'))
