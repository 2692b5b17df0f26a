import t from 'tap'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { projectFile } from '../src/project-file.js'

/**
 * The example compiles as a host's strictest project would compile it — `strict` and
 * `exactOptionalPropertyTypes`, against the package's declarations (the dist/ that `npm test`
 * built) — with no cast: the directory's types work for a typed host (tsconfig.examples.json).
 */
t.test('examples/embed.ts type-checks under strict and exactOptionalPropertyTypes', async (t) => {
  const root = projectFile('')
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  try {
    execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.examples.json')], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    t.pass('no error')
  } catch (err) {
    const e = err as { stdout?: string, stderr?: string }
    t.fail(`tsc: ${e.stdout ?? ''}${e.stderr ?? ''}`)
  }
})
