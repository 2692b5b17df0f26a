#!/usr/bin/env node
// The `team-access` command of the package (and of the image: `npx team-access migrate`): compiled
// JavaScript only, no TypeScript toolchain. What each command does is src/cli.ts.
import { main } from './cli.js'

main(process.argv.slice(2)).then((code) => { process.exitCode = code }, (err: unknown) => {
  console.error(`team-access: ${(err as Error).message}`)
  process.exitCode = 1
})
