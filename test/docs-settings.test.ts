import t from 'tap'
import { readFileSync } from 'node:fs'
import { Settings } from '../src/config.js'
import { projectFile } from '../src/project-file.js'

/**
 * The settings tables of the README and of docs/CONTRACT.md list every setting src/config.ts
 * reads — no more, no fewer — in its order, with its defaults, and agree with each other on them.
 */
interface Row { name: string, fallback: string }

/** The rows of the one `| setting | default | meaning |` table of a Markdown file. */
function settingsTable (path: string): Row[] {
  const lines = readFileSync(projectFile(path), 'utf8').split('\n')
  const header = lines.findIndex((line) => line === '| setting | default | meaning |')
  if (header === -1) throw new Error(`${path}: no settings table`)
  if (lines.indexOf('| setting | default | meaning |', header + 1) !== -1) throw new Error(`${path}: two settings tables`)
  const rows: Row[] = []
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break
    const cells = /^\| `([A-Z][A-Z0-9_]*)` \| ([^|]+) \| .+ \|$/.exec(line)
    if (cells === null) throw new Error(`${path}: a settings row that is not \`NAME\` | default | meaning: ${line}`)
    rows.push({ name: cells[1]!, fallback: cells[2]! })
  }
  return rows
}

const schemas = Settings.properties as Record<string, { default?: unknown }>
const names = Object.keys(schemas)
const tables = { 'README.md': settingsTable('README.md'), 'docs/CONTRACT.md': settingsTable('docs/CONTRACT.md') }

t.test('config.ts has the settings the tables are checked against', async (t) => {
  t.ok(names.length >= 24, `${names.length} settings`)
  for (const name of ['CALLER_CONCURRENCY', 'QUEUE_WAIT_MS', 'LOAD_SHED_EVENT_LOOP_DELAY_MS', 'LOAD_SHED_HEAP_USED_MB', 'LOAD_SHED_RSS_MB', 'MIGRATE_ON_START', 'DATABASE_SCHEMA']) {
    t.ok(names.includes(name), name)
  }
})

for (const [file, rows] of Object.entries(tables)) {
  t.test(`${file}: every setting of config.ts, in its order, with its default`, async (t) => {
    t.same(rows.map((r) => r.name), names, 'the same settings in the same order')
    for (const { name, fallback } of rows) {
      const schema = schemas[name]
      if (schema === undefined) continue // reported above
      if ('default' in schema) {
        const literal = `\`${String(schema.default)}\``
        t.ok(fallback === literal || fallback.startsWith(`${literal} (`), `${name}: default ${literal}, the table says ${fallback}`)
      } else {
        // no default in the schema: unset, or a value the service works out (a share of a limit)
        t.notOk(fallback.startsWith('`'), `${name}: no literal default, the table says ${fallback}`)
      }
    }
  })
}

t.test('the README and the contract give every setting the same default', async (t) => {
  const contract = new Map(tables['docs/CONTRACT.md'].map((r) => [r.name, r.fallback]))
  for (const { name, fallback } of tables['README.md']) {
    t.equal(contract.get(name), fallback, name)
  }
})
