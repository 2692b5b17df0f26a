import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

/**
 * The map of docs/ARCHITECTURE.md, held against the code: every import in src/ goes to its own
 * module or to one on a lower layer (so no two modules import each other, and no cycle runs
 * through them), no file imports itself back through others, and no file is over 350 lines.
 * A module is a folder of src/, or a file at its top.
 */
const LAYERS: string[][] = [
  ['project-file.ts', 'validation.ts'],
  // the database: connecting, the embedded data directory and its lock, migrations, tables, ids
  ['db/'],
  ['jsonapi/'],
  // credential → caller
  ['auth/'],
  // the rules
  ['access/'],
  ['audit/'],
  // the one writer of organizations, users, teams, memberships, workspaces and tokens, whoever asks
  ['directory/'],
  // the mirror (DESIGN §13): HCP Terraform read through its API, applied through the directory, written as a seed
  ['mirror/'],
  // how much work a caller may cause (rate limit, admission): a streamed answer's reads take their turns there
  ['limits/'],
  // people (organization memberships, the caller's organizations): below the resources that include them (teams' memberships, projects' organization)
  ['people/'],
  // the resources: routes and their reads; none imports another
  ['teams/', 'tokens/', 'team-workspaces/', 'workspaces/', 'effective-access/', 'projects/'],
  ['config.ts', 'metrics.ts', 'shutdown.ts', 'docs.ts', 'ui.ts', 'log-output.ts'],
  ['listener.ts', 'load-shedding.ts'],
  ['plugin.ts'],
  ['app.ts'],
  ['server.ts', 'cli.ts', 'index.ts'],
  ['bin.ts']
]
const MAX_LINES = 350

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../src')
const files: string[] = []
const walk = (dir: string): void => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) walk(path)
    else if (path.endsWith('.ts')) files.push(path)
  }
}
walk(src)

const moduleOf = (file: string): string => {
  const path = relative(src, file)
  return path.includes('/') ? `${path.split('/')[0]!}/` : path
}
const layerOf = (module: string): number => LAYERS.findIndex((layer) => layer.includes(module))

/** The files of src/ a file imports (statically, or by `import()` of a literal). */
const importsOf = (file: string): string[] => [...readFileSync(file, 'utf8')
  .matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s+'(\.[^']+)'|\bimport\(\s*'(\.[^']+)'\s*\)/g)]
  .map((match) => resolve(dirname(file), match[1] ?? match[2]!).replace(/\.js$/, '.ts'))
  .filter((target) => target.startsWith(src + '/'))

t.test('every module of src/ has its layer', async (t) => {
  const unplaced = [...new Set(files.map(moduleOf))].filter((module) => layerOf(module) === -1)
  t.same(unplaced, [], 'a new folder or top-level file of src/ is placed in LAYERS (and in ARCHITECTURE.md)')
})

t.test('no module imports one on a higher layer, or another of its own layer', async (t) => {
  const upward: string[] = []
  for (const file of files) {
    for (const target of importsOf(file)) {
      const [from, to] = [moduleOf(file), moduleOf(target)]
      if (from !== to && layerOf(to) >= layerOf(from)) upward.push(`${relative(src, file)} → ${relative(src, target)}`)
    }
  }
  t.same(upward, [])
})

t.test('src/db/ knows nothing of the rules, the audit trail, the directory or the resources', async (t) => {
  const reaching = files.filter((file) => moduleOf(file) === 'db/')
    .flatMap((file) => importsOf(file).filter((target) => !['db/', 'project-file.ts', 'validation.ts'].includes(moduleOf(target)))
      .map((target) => `${relative(src, file)} → ${relative(src, target)}`))
  t.same(reaching, [])
  const seedOrDirectory = files.filter((file) => moduleOf(file) === 'db/' && /seed|directory/.test(relative(src, file)))
  t.same(seedOrDirectory, [], 'no seed or directory code in src/db/')
})

t.test('no import cycle between files', async (t) => {
  const graph = new Map(files.map((file) => [file, importsOf(file)]))
  const state = new Map<string, 'open' | 'done'>()
  const cycles: string[] = []
  const visit = (file: string, path: string[]): void => {
    if (state.get(file) === 'done') return
    if (state.get(file) === 'open') {
      cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(src, f)).join(' → '))
      return
    }
    state.set(file, 'open')
    for (const next of graph.get(file) ?? []) visit(next, [...path, file])
    state.set(file, 'done')
  }
  for (const file of files) visit(file, [])
  t.same(cycles, [])
})

t.test(`no file in src/ is over ${MAX_LINES} lines`, async (t) => {
  const long = files.map((file) => ({ file: relative(src, file), lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
    .filter(({ lines }) => lines > MAX_LINES)
  t.same(long, [])
})
