import { mkdirSync, writeFileSync } from 'node:fs'
import { projectFile } from '../../src/project-file.js'

/**
 * A figure a hardening test measured, kept in .reliability/ (one file per figure) so that
 * `npm run reliability` can put the last run's figures into RELIABILITY.md.
 */
export async function recordFigure (test: string, figure: string, bar: string): Promise<void> {
  const dir = projectFile('.reliability')
  mkdirSync(dir, { recursive: true })
  const slug = test.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')
  writeFileSync(`${dir}/${slug}.json`, JSON.stringify({ test, figure, bar, at: new Date().toISOString() }, null, 2))
}
