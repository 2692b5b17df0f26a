import { readFile } from 'node:fs/promises'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { applySeedDocument, SeedError, type ApplySeedOptions, type SeedSummary } from './seed.js'

/** Reads and applies a seed file; a file that cannot be read or parsed is a SeedError naming it. */
export async function applySeedFile (db: Kysely<Database>, path: string, options: ApplySeedOptions = {}): Promise<SeedSummary> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new SeedError(path, `cannot read the seed file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`)
  }
  let document: unknown
  try {
    document = JSON.parse(text)
  } catch (err) {
    throw new SeedError(path, `not valid JSON (${(err as Error).message})`)
  }
  try {
    return await applySeedDocument(db, document, options)
  } catch (err) {
    if (err instanceof SeedError) throw new SeedError(err.entry === '' ? path : `${path} › ${err.entry}`, err.problem)
    throw err
  }
}
