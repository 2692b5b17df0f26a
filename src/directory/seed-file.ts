import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { projectFile } from '../project-file.js'
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

/** The demo data (DESIGN §6): applied to an empty embedded database on a laptop, and by `seed --demo`. */
export const DEMO_SEED = projectFile('seeds/demo.json')

let demoIds: Set<string> | undefined

/**
 * Why the API may not change a seed-managed row, naming the seed where the service can tell: no
 * row records which file applied it, but the demo data's ids are its own (`team-DemoTeamred12345`),
 * so a row of one of them came from the demo seed — a person who wrote no seed file learns where
 * the team they tried to change comes from. Any other: the seed file (SEED_FILE, `team-access seed`).
 */
export function managedBySeed (id: string): string {
  demoIds ??= new Set(idsIn(JSON.parse(readFileSync(DEMO_SEED, 'utf8'))))
  return demoIds.has(id) ? 'managed by the demo seed (seeds/demo.json)' : 'managed by the seed file'
}

const idsIn = (node: unknown): string[] => Array.isArray(node)
  ? node.flatMap(idsIn)
  : typeof node === 'object' && node !== null
    ? Object.entries(node).flatMap(([key, value]) => key === 'id' && typeof value === 'string' ? [value] : idsIn(value))
    : []
