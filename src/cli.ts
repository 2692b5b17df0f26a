import { loadConfig } from './config.js'
import { connect } from './db/connect.js'
import { migrate } from './db/migrate.js'
import { applySeedFile } from './db/seed-file.js'

const USAGE = 'usage: team-access migrate | team-access seed FILE   (database from DATABASE_URL or DATA_DIR)'

/** `npm run migrate` and `npm run seed -- FILE`: exit 0 on success, 1 with a one-line reason otherwise. */
async function main (argv: string[]): Promise<number> {
  const [command, file] = argv
  if (command !== 'migrate' && !(command === 'seed' && file !== undefined)) {
    console.error(USAGE)
    return 2
  }
  const config = loadConfig()
  const connection = await connect(config.database)
  try {
    const applied = await migrate(connection.db)
    if (command === 'migrate') {
      console.log(applied.length === 0 ? 'migrations: up to date' : `migrations applied: ${applied.map((m) => m.migrationName).join(', ')}`)
    } else {
      const summary = await applySeedFile(connection.db, file!)
      console.log(`seed applied: ${JSON.stringify(summary)}`)
    }
    return 0
  } finally {
    await connection.close()
  }
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code }, (err: unknown) => {
  console.error(`team-access: ${(err as Error).message}`)
  process.exitCode = 1
})
