#!/usr/bin/env node
// `npm start`, `npm run seed` and `npm run migrate` build first — but only when what the build
// reads changed since the last build: the sources, the build's own settings and scripts, and the
// installed dependencies' lock. Their contents are digested (a few hundred small files: milliseconds)
// and compared with the digest the last build left in dist/.build-digest; a restart on an unchanged
// checkout goes straight to the service. `npm run build` always builds, and leaves the digest
// (`--stamp`, its last step).
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const stamp = join(root, 'dist/.build-digest')
// what `npm run build` reads: tsc's inputs (tsconfig.build.json), the bundle and snapshot steps
const inputs = ['src', 'ui', 'migrations', 'schemas', 'examples', 'bench', 'seeds', 'scripts/bundle.mjs',
  'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json']
// what the build writes and the start reads: a build that left any of them out is no build
const outputs = ['dist/src/server.js', 'dist/src/bin.js', 'dist/src/index.js', 'dist/pglite', 'dist/ui/app.js']

function files (path) {
  const full = join(root, path)
  if (!existsSync(full)) return []
  if (!statSync(full).isDirectory()) return [path]
  return readdirSync(full).sort().flatMap((name) => files(join(path, name)))
}

const hash = createHash('sha256')
for (const file of inputs.flatMap(files)) {
  hash.update(relative(root, join(root, file))).update('\0').update(readFileSync(join(root, file))).update('\0')
}
const digest = hash.digest('hex')
// `npm run build` ends here with --stamp: what it just built is what these inputs give
if (process.argv.includes('--stamp')) {
  writeFileSync(stamp, `${digest}\n`)
  process.exit(0)
}
const built = existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === digest && outputs.every((path) => existsSync(join(root, path)))
if (!built) {
  console.error(existsSync(stamp) ? 'the sources changed since the last build: building (about 30 s)' : 'first start: building (about 30 s)')
  const run = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' })
  if (run.status !== 0) process.exit(run.status ?? 1)
  writeFileSync(stamp, `${digest}\n`)
}
