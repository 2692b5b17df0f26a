import { readFileSync } from 'node:fs'
import type { Kysely } from 'kysely'
import type { Connection } from '../db/connect.js'
import type { Database } from '../db/database.js'
import { formatSeedSummary } from '../directory/seed-entries.js'
import { regenerateOrganizationToken } from './organization-token.js'
import { progressLine, type ReadProgress } from './progress.js'
import { runLine, runMirror } from './run.js'
import { exclusively } from './schedule.js'

/**
 * `team-access mirror` and `team-access token` (DESIGN §13.1, §13.3): their command lines and what
 * they print. The token comes from TFE_TOKEN or --token-file, never from a flag's value (a flag's
 * value is in the shell's history and in every process list); nothing here prints it.
 */
export interface MirrorCommand {
  kind: 'mirror'
  from: string
  organization: string
  dryRun: boolean
  seedOut?: string
  tokenFile?: string
  rate?: number
}

type Usage = { kind: 'usage', problem: string }

export function parseMirror (args: string[]): MirrorCommand | Usage {
  const values = new Map<string, string>()
  let dryRun = false
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === '--dry-run') { dryRun = true; continue }
    if (arg === '--token' || arg.startsWith('--token=')) {
      return { kind: 'usage', problem: 'the token is never a flag\'s value: set TFE_TOKEN, or give --token-file FILE' }
    }
    const [name, inline] = arg.split(/=(.*)/s, 2) as [string, string | undefined]
    if (!['--from', '--organization', '--seed-out', '--token-file', '--rate'].includes(name)) return { kind: 'usage', problem: `mirror: unknown option: ${name}` }
    const value = inline ?? args[++i]
    if (value === undefined || value === '') return { kind: 'usage', problem: `mirror: ${name} needs a value` }
    values.set(name, value)
  }
  const from = values.get('--from')
  const organization = values.get('--organization')
  if (from === undefined || organization === undefined) return { kind: 'usage', problem: 'mirror needs --from URL and --organization ORG' }
  if (dryRun && values.has('--seed-out')) return { kind: 'usage', problem: 'mirror: --dry-run and --seed-out do not go together (--seed-out writes no database anyway)' }
  const rate = values.has('--rate') ? Number(values.get('--rate')) : undefined
  if (rate !== undefined && !(rate > 0 && rate <= 1000)) return { kind: 'usage', problem: 'mirror: --rate is requests a second, more than 0 and at most 1000' }
  return {
    kind: 'mirror',
    from,
    organization,
    dryRun,
    ...(values.has('--seed-out') ? { seedOut: values.get('--seed-out')! } : {}),
    ...(values.has('--token-file') ? { tokenFile: values.get('--token-file')! } : {}),
    ...(rate === undefined ? {} : { rate })
  }
}

/** The token: --token-file's content, else TFE_TOKEN; undefined when neither gives one. */
function tokenOf (command: MirrorCommand): string | undefined {
  const token = command.tokenFile !== undefined ? readFileSync(command.tokenFile, 'utf8').trim() : process.env.TFE_TOKEN?.trim()
  return token === '' ? undefined : token
}

/**
 * One run: the progress as a line that updates on a terminal (standard error), then what was
 * applied (or would be: --dry-run) in the seed's summary form, or the seed document's file. Exit
 * 1 with the reason when it fails; nothing was applied then.
 */
export async function mirrorCommand (database: { connection: Connection, schema?: string | undefined } | undefined, command: MirrorCommand): Promise<number> {
  const token = tokenOf(command)
  if (token === undefined) {
    console.error(`team-access: mirror needs a token: set TFE_TOKEN, or give --token-file FILE (${command.tokenFile === undefined ? 'TFE_TOKEN is not set' : `${command.tokenFile} is empty`})`)
    return 1
  }
  const terminal = process.stderr.isTTY
  const onProgress = terminal ? (progress: ReadProgress) => { process.stderr.write(`\r\x1b[2K${progressLine(progress)}`) } : undefined
  try {
    const run = async () => await runMirror(database?.connection.db as Kysely<Database> | undefined, {
      from: command.from,
      organization: command.organization,
      token,
      dryRun: command.dryRun,
      ...(command.rate === undefined ? {} : { rate: command.rate }),
      ...(command.seedOut === undefined ? {} : { seedOut: command.seedOut }),
      ...(database?.schema === undefined ? {} : { schema: database.schema }),
      ...(onProgress === undefined ? {} : { onProgress })
    })
    const result = database === undefined || command.dryRun ? await run() : await exclusively(database.connection, command.organization, run)
    if (terminal) process.stderr.write('\r\x1b[2K')
    if (result === undefined) {
      console.error(`team-access: a mirror of ${command.organization} is running elsewhere (the service's schedule?); try again when it ends`)
      return 1
    }
    console.log(runLine(result))
    if (result.summary !== undefined) {
      const [, ...lines] = formatSeedSummary(result.summary)
      if (lines.length > 0) console.log(lines.join('\n'))
    }
    for (const note of result.notes) console.log(`note: ${note}`)
    return 0
  } catch (err) {
    if (terminal) process.stderr.write('\n')
    console.error(`team-access: mirror ${command.organization} from ${command.from} failed, nothing applied: ${(err as Error).message}`)
    return 1
  }
}

/** `team-access token --organization ORG`: the organization's new token, printed once, on its own line. */
export async function tokenCommand (db: Kysely<Database>, organization: string): Promise<number> {
  const secret = await regenerateOrganizationToken(db, organization)
  if (secret === undefined) {
    console.error(`team-access: no organization named "${organization}" here (mirror it first: team-access mirror --from … --organization ${organization})`)
    return 1
  }
  console.error(`the organization token of ${organization} (any earlier one is revoked); shown once — sign in to /ui/ with it:`)
  console.log(secret)
  return 0
}
