import { execFileSync } from 'node:child_process'
import { chownSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A PostgreSQL server of a test's own: initdb and pg_ctl from the machine's PostgreSQL 15, its
 * own data directory and port. The shared server on 5432 is never touched.
 */
const BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin'

export interface ThrowawayPostgres {
  url: string
  start: () => void
  stop: () => void
  remove: () => void
}

function asPostgres (command: string, args: string[]): string {
  // initdb and postgres refuse to run as root
  const [file, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args]
  return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

export function throwawayPostgres (port: number, settings: string[] = []): ThrowawayPostgres {
  const dir = mkdtempSync(join(tmpdir(), 'team-access-pg-'))
  if (process.getuid?.() === 0) {
    const owner = statSync('/var/lib/postgresql')
    chownSync(dir, owner.uid, owner.gid)
  }
  const data = join(dir, 'data')
  const pgctl = (action: string, extra: string[] = []) => asPostgres(join(BIN, 'pg_ctl'), ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '30', ...extra, action])
  asPostgres(join(BIN, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync'])
  const options = [`-p ${port}`, `-k ${dir}`, '-c listen_addresses=127.0.0.1', '-c fsync=off', ...settings.map((s) => `-c ${s}`)].join(' ')
  const server: ThrowawayPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    // a start right after an immediate stop can find the old server's processes or shared
    // memory not quite gone: try again for up to 15 s, then say what the server logged
    start: () => {
      for (let attempt = 1; ; attempt++) {
        try { pgctl('start', ['-o', options]); return } catch (err) {
          if (attempt >= 30) {
            const log = readFileSync(join(dir, 'log'), 'utf8').trim().split('\n').slice(-5).join('\n')
            throw new Error(`${(err as Error).message}\n${log}`)
          }
          execFileSync('sleep', ['0.5'])
        }
      }
    },
    stop: () => { pgctl('stop', ['-m', 'immediate']) },
    remove: () => {
      try { server.stop() } catch {}
      if (!process.env.KEEP_PG) rmSync(dir, { recursive: true, force: true })
    }
  }
  server.start()
  return server
}
