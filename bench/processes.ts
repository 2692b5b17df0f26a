import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import pg from 'pg'
import { projectFile } from '../src/project-file.js'

// Starting, waiting for and stopping the processes a benchmark measures.

const SERVICE_ENTRY = 'dist/src/server.js'

/**
 * The Node flags `npm start` gives the service (the start script of the checkout's package.json),
 * so that the bench starts a checkout's service as a person does; none for any other script.
 * scripts/measure-start.mjs, plain JavaScript that imports nothing of ours, reads them the same way.
 */
export function serviceNodeFlags (script: string): string[] {
  if (!script.endsWith(SERVICE_ENTRY)) return []
  const root = script.startsWith('/') ? script.slice(0, -SERVICE_ENTRY.length) : projectFile('')
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts?: { start?: string } }
  const words = (manifest.scripts?.start ?? '').split(/\s+/)
  return words.slice(1, words.indexOf(SERVICE_ENTRY)).filter((word) => word.startsWith('--'))
}

/** Runs a script of this checkout (relative path) or any other (absolute path) with node; the service with its `npm start` flags. */
export function start (script: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [...serviceNodeFlags(script), script.startsWith('/') ? script : projectFile(script)], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] })
  child.on('exit', (code, signal) => { if (code !== null && code !== 0) console.error(`${script} exited with ${code ?? signal}`) })
  return child
}

export async function waitFor (url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    try {
      if ((await fetch(url)).status < 500) return
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`${url} did not answer within ${timeoutMs / 1000}s`)
}

export async function stop (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

/** Fails when something already listens on the port: a bench must never measure another process. */
export async function assertPortFree (port: number, host = '127.0.0.1'): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer()
    probe.once('error', (err: NodeJS.ErrnoException) => reject(new Error(`port ${port} is in use (${err.code}): set BENCH_PORT to a free range`)))
    probe.listen(port, host, () => probe.close(() => resolve()))
  })
}

/**
 * A database of the bench's own on the PostgreSQL server `adminUrl` reaches, made now: its URL, and
 * `drop` to remove it (connections and all) when the bench ends.
 */
export async function throwawayDatabase (adminUrl: string, name: string): Promise<{ url: string, drop: () => Promise<void> }> {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`create database ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      await admin.query(`drop database if exists ${name} with (force)`)
      await admin.end()
    }
  }
}
