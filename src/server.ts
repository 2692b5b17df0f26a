import closeWithGrace from 'close-with-grace'
import { ConfigError, loadConfig } from './config.js'
import { connect, databaseMissing, databaseRefused } from './db/connect.js'
import { SeedError } from './directory/seed.js'
import { DataDirInUse } from './db/data-dir-lock.js'
import { closeHungUpTerminalsAtExit, standardOutput } from './log-output.js'
import { DatabaseNewer, MigrationsPending } from './db/migrate.js'
import { isDatabaseUnavailable, loggable } from './jsonapi/errors.js'

/** The entry that listens: settings checked first, SIGTERM/SIGINT close it gracefully. */
async function main (): Promise<void> {
  const config = loadConfig()
  // The embedded database opens (its data-directory lock first, then PGlite) while the rest of the
  // service loads and its app is built; buildApp waits for it where it needs it, and a failure to
  // open is thrown from there, as when buildApp opens it itself. A PostgreSQL server is connected
  // to by buildApp, with the pool's error handler that logs.
  const connection = 'dataDir' in config.database
    ? connect(config.database, config.schema === undefined ? {} : { schema: config.schema })
    : undefined
  connection?.catch(() => {}) // handled where buildApp awaits it
  // the engine's modules load before the app's (both are dynamic imports: the app's would otherwise
  // go first), so that the open has begun while the app's load
  if (connection !== undefined) await Promise.all([import('./db/pglite.js'), import('./db/data-dir-lock.js'), import('kysely-pglite-dialect')])
  const { buildApp } = await import('./app.js')
  const app = await buildApp(config, connection === undefined ? {} : { connection })
  // the drain (3 s at most, 6 s while connections queued before the signal are still being taken),
  // the requests in flight and the database's close fit inside this; past it the process exits
  // anyway (code 1), so that a stop never takes more than 10 s. A second SIGTERM or SIGINT while
  // closing exits at once (code 1): an operator insisting.
  // The signals that report a fault are never caught: a handler returns into the faulting
  // instruction, which faults again, forever (a process spinning at full CPU, deaf to SIGTERM,
  // its port and DATA_DIR held) — SIGABRT and SIGTRAP are how Node and V8 end a process on purpose.
  let closing = false
  let reason: string | undefined
  const { close } = closeWithGrace({ delay: 9_500, skip: ['SIGSEGV', 'SIGBUS', 'SIGFPE', 'SIGILL', 'SIGABRT', 'SIGTRAP', 'SIGHUP'] }, async ({ signal, err }) => {
    closing = true
    if (err !== undefined) app.log.error({ err: loggable(err) }, 'closing after an uncaught error')
    else app.log.info({ signal: signal ?? reason }, 'closing')
    await app.close()
    app.log.info('stopped')
  })
  const stop = (why: string) => {
    if (closing) return
    reason = why
    void close()
  }
  // SIGHUP (the terminal that ran it closed) stops it as SIGTERM does; a closing terminal sends
  // it more than once, and a later one is not an operator insisting: the stop under way goes on
  process.on('SIGHUP', () => { stop('SIGHUP') })
  // so does a lost standard output (its reader gone: EPIPE; its terminal closed: EIO), whose
  // lines are dropped meanwhile (./log-output.ts)
  standardOutput().onLost((err) => { stop(`standard output lost (${err.code ?? err.message})`) })
  closeHungUpTerminalsAtExit()
  await app.listen({ port: config.port, host: config.host })
}

main().catch((err: unknown) => {
  // a person reads this: no stack trace for the mistakes a person makes
  const database = loadConfigQuietly()
  const missing = databaseMissing(err, database) ?? databaseRefused(err, database)
  if (missing !== undefined) {
    console.error(`team-access: ${missing}`)
  } else if (err instanceof ConfigError || err instanceof SeedError || err instanceof DataDirInUse || err instanceof MigrationsPending ||
    err instanceof DatabaseNewer) {
    console.error(`team-access: ${err.message}`)
  } else if (isDatabaseUnavailable(err)) {
    console.error(`team-access: cannot reach the database: ${(err as Error).message}`)
  } else if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
    console.error(`team-access: cannot listen: ${(err as Error).message}`)
  } else {
    console.error('team-access: failed to start:', err)
  }
  process.exit(1)
})

/** The database the settings name, for an error's message (settings that did not load name none). */
function loadConfigQuietly (): Parameters<typeof databaseMissing>[1] {
  try {
    return loadConfig().database
  } catch {
    return { dataDir: '' }
  }
}
