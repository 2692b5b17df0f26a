#!/usr/bin/env node
// The `team-access` command of the package (and of the image: `npx team-access migrate`): compiled
// JavaScript only, no TypeScript toolchain. `team-access serve` is the service (src/server.ts); what
// each other command does is src/cli.ts.
import { main } from './cli.js'

const argv = process.argv.slice(2)
if (argv.length === 1 && argv[0] === 'serve') {
  await import('./server.js')
} else {
  main(argv).then((code) => { process.exitCode = code }, (err: unknown) => {
    console.error(`team-access: ${(err as Error).message}`)
    process.exitCode = 1
  })
}
