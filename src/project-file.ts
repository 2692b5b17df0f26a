import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** A file of the package (e.g. `seeds/demo.json`), found from src/ and from dist/src/ alike. */
export function projectFile (relative: string): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`cannot find the package root above ${fileURLToPath(import.meta.url)}`)
    dir = parent
  }
  return join(dir, relative)
}
