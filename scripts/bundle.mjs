#!/usr/bin/env node
// Build step (`npm run build`, after tsc): the standalone entry points, dist/src/server.js and
// dist/src/bin.js, as bundles in place of tsc's per-file output, so that a start reads a few files
// instead of hundreds (Kysely alone is hundreds of ES modules). What a host imports (dist/src/index.js
// and the rest of dist/src, with their .d.ts) stays as tsc wrote it.
//
// Code both entry points use, and what either loads only on demand (the PostgreSQL driver, the
// CLI's commands, pino-pretty), goes into dist/src/chunks/, named by a digest of the contents: the
// same sources give the same bytes. Source maps beside each file (.map) lead back to src/.
import { build } from 'esbuild'
import { copyFileSync, mkdirSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const outdir = join(root, 'dist/src')
const chunks = join(outdir, 'chunks')

// Packages that must stay where npm installs them: they read files beside their own modules
// (PGlite its WebAssembly and data files, swagger-ui its static assets), are optional native
// add-ons that are not installed, or are CommonJS packages that our code imports dynamically by
// named export (`const { Redis } = await import('ioredis')`): bundled, such a chunk only has a
// default export, where Node finds the named ones in the package itself. Both load only when used
// (REDIS_URL; logs at a terminal).
const external = [
  '@electric-sql/pglite',
  '@electric-sql/pglite/*',
  '@fastify/swagger-ui',
  '@fastify/static',
  'pg-native',
  'ioredis',
  'pino-pretty'
]

rmSync(chunks, { recursive: true, force: true })
const result = await build({
  absWorkingDir: root,
  entryPoints: { server: 'src/server.ts', bin: 'src/bin.ts' },
  outdir,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  // bin.ts's `#!/usr/bin/env node` is kept by esbuild
  external,
  // bundled CommonJS packages require() Node's own modules: ES modules have no require of their own
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true
})
if (result.errors.length > 0) process.exit(1)
const outputs = Object.entries(result.metafile.outputs).filter(([file]) => !file.endsWith('.map'))
const total = outputs.reduce((sum, [, output]) => sum + output.bytes, 0)
console.log(`bundled dist/src/server.js and dist/src/bin.js: ${outputs.length} files, ${(total / 1048576).toFixed(1)} MB`)

// The access review's page (DESIGN §12.2): ui/ for the browser, into dist/ui/ — its script and its
// style, minified, and the HTML and the icon as written (the service serves the three, src/ui.ts)
const ui = join(root, 'dist/ui')
rmSync(ui, { recursive: true, force: true })
mkdirSync(ui, { recursive: true })
const page = await build({
  absWorkingDir: root,
  entryPoints: { app: 'ui/main.ts', style: 'ui/style.css' },
  outdir: ui,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome110', 'firefox115', 'safari16'],
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true
})
if (page.errors.length > 0) process.exit(1)
for (const file of ['index.html', 'favicon.svg']) copyFileSync(join(root, 'ui', file), join(ui, file))
const pageBytes = Object.values(page.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0)
console.log(`bundled the page into dist/ui/: app.js and style.css, ${(pageBytes / 1024).toFixed(0)} kB`)
