import { isIP } from 'node:net'
import { Pace } from './pace.js'

/**
 * The mirror's HTTP client for HCP Terraform's API (DESIGN §13.2), on Node's own `fetch`: a polite
 * one. Its pace (./pace.ts): at most `rate` requests start in any second and `inFlight` are open
 * at once; a 429 holds every request back for as long as its `Retry-After` or `X-RateLimit-Reset`
 * says (HCP Terraform's `X-RateLimit-Reset` is a delay in seconds, fractional, as go-tfe reads it)
 * and the request is sent again; a 5xx, a dropped connection or a body cut off half-way is tried
 * again after a pause that doubles, 5 times at most; a 401, 403 or 404 stops the run with a
 * message naming what was asked. The token goes in the Authorization header of the API's requests
 * and nowhere else: no message, progress or error this module makes holds it, nor any cause.
 * The API's base is found as the clients find it (`/.well-known/terraform.json`).
 */
export class MirrorError extends Error {
  override name = 'MirrorError'
}

export interface ClientOptions {
  /** `https://app.terraform.io`, or a Terraform Enterprise's address (plain http:// only to a loopback address). */
  from: string
  /** The bearer token the API is read with: sent in the Authorization header, never anywhere else. */
  token: string
  /** Requests a second at most (default 20). */
  rate?: number
  /** Requests open at once at most (default 4). */
  inFlight?: number
  /** The pause before the first retry, ms (default 250), doubled for each next one. */
  retryPause?: number
  signal?: AbortSignal
  fetch?: typeof fetch
}

/** What a request asks for, as its messages name it: `organization "acme"`, and what a 403/404 means for it. */
export interface Asked {
  what: string
  /** What a 403 or 404 says before the token advice (default: the token may not read it). */
  refused?: string
}

/** Why `from` cannot be read from, or undefined: https://, or plain http:// to a loopback address only. */
export function fromProblem (from: string): string | undefined {
  let url: URL
  try {
    url = new URL(from)
  } catch {
    return `is not a URL (${JSON.stringify(from)}): give https://app.terraform.io or your Terraform Enterprise's address`
  }
  if (url.username !== '' || url.password !== '') return 'must not hold a user name or password (the token comes from TFE_TOKEN or --token-file)'
  if (url.protocol === 'https:') return undefined
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const loopback = host === 'localhost' || (isIP(host) === 4 && host.startsWith('127.')) || host === '::1'
  if (url.protocol === 'http:' && loopback) return undefined
  return `must be https:// (plain http:// only to a loopback address): ${url.protocol}//${url.host}`
}

/** The token advice every refusal ends with. */
const WHOLE = 'an owners team token, an owner\'s user token or the organization token reads the whole organization'
/** Retries of a request that failed in passing (a 5xx, a dropped connection, a body cut off), at most. */
const RETRIES = 5
/** 429s a request waits out before the run gives up: a service that never lets it through is a failure, not patience. */
const MAX_WAITS = 60

/** One try's outcome: the document, a failure worth another try, or a 429's wait. */
type Outcome = { value: unknown } | { transient: string } | { waitMs: number }

export class HcpClient {
  /** The host read from, as the audit events name it (`app.terraform.io`). */
  readonly host: string
  private readonly origin: string
  private base: Promise<string> | undefined
  private readonly pace: Pace
  private readonly fetch: typeof fetch
  private readonly retryPause: number

  constructor (private readonly options: ClientOptions) {
    const problem = fromProblem(options.from)
    if (problem !== undefined) throw new MirrorError(`--from ${problem}`)
    // a header cannot carry a control character or a space: say so here, before fetch would, in words that do not repeat it
    if (typeof options.token !== 'string' || !/^[\x21-\x7e]+$/.test(options.token)) {
      throw new MirrorError('the token is empty or holds characters an Authorization header cannot carry (a space, a line break?): check TFE_TOKEN or the token file')
    }
    const url = new URL(options.from)
    this.origin = url.origin
    this.host = url.host
    this.pace = new Pace(options.rate ?? 20, options.inFlight ?? 4, options.signal)
    this.fetch = options.fetch ?? fetch
    this.retryPause = options.retryPause ?? 250
  }

  /** Requests made, every retry and every 429 counted. */
  get requests (): number { return this.pace.started }

  /** Requests a second, lately. */
  rate (): number { return this.pace.rate() }

  /** A JSON:API document of the API (`path` below its base), or a MirrorError naming what was asked. */
  async get (path: string, asked: Asked): Promise<unknown> {
    const url = new URL(path, await this.apiBase()).href
    return await this.send(url, asked, async () => await this.once(url, asked, true))
  }

  /**
   * The API's base: `tfe.v2.2` (else `tfe.v2`) of the discovery document, resolved against it, as
   * Terraform's service discovery reads it; `/api/v2/` when there is none (404). Asked without the
   * token: the discovery document is public, and it may name another address.
   */
  private async apiBase (): Promise<string> {
    this.base ??= this.discover()
    return await this.base
  }

  private async discover (): Promise<string> {
    const url = `${this.origin}/.well-known/terraform.json`
    const asked = { what: `the discovery document of ${this.host} (/.well-known/terraform.json)` }
    const document = await this.send(url, asked, async () => await this.once(url, asked, false))
    if (document === undefined) return `${this.origin}/api/v2/`
    const services = (typeof document === 'object' && document !== null ? document : {}) as Record<string, unknown>
    const given = typeof services['tfe.v2.2'] === 'string' ? services['tfe.v2.2'] : services['tfe.v2']
    if (typeof given !== 'string') throw new MirrorError(`${asked.what}: it names no HCP Terraform API (tfe.v2.2 or tfe.v2) — is ${this.host} HCP Terraform or a Terraform Enterprise?`)
    let base: URL
    try {
      base = new URL(given, url)
    } catch {
      throw new MirrorError(`${asked.what}: its tfe.v2.2 is not an address (${JSON.stringify(given)})`)
    }
    const problem = fromProblem(base.href)
    if (problem !== undefined) throw new MirrorError(`${asked.what}: the API's address it names ${problem}`)
    return base.href.replace(/\/?$/, '/')
  }

  /** Tries until an answer: a 429 waited out (every request held back meanwhile), a passing failure tried again, at most RETRIES times. */
  private async send (url: string, asked: Asked, once: () => Promise<Outcome>): Promise<unknown> {
    let [failures, waits] = [0, 0]
    for (;;) {
      await stoppable(this.pace.turn())
      let outcome: Outcome
      try {
        outcome = await once()
      } catch (err) {
        if (this.options.signal?.aborted === true) throw new MirrorError(STOPPED)
        if (err instanceof MirrorError) throw err
        outcome = { transient: `the connection failed (${connectionError(err)})` }
      } finally {
        this.pace.release()
      }
      if ('value' in outcome) return outcome.value
      if ('waitMs' in outcome) {
        if (++waits > MAX_WAITS) throw new MirrorError(`${asked.what}: 429 — still too many requests after ${MAX_WAITS} waits`)
        continue
      }
      if (++failures > RETRIES) throw new MirrorError(`${asked.what}: ${outcome.transient}, and again on each of ${RETRIES} retries`)
      await stoppable(this.pace.sleep(this.retryPause * 2 ** (failures - 1) * (1 + Math.random() * 0.25)))
    }
  }

  /** One request and what came of it. `api`: the API, with the token, no redirects followed; else the discovery document (404: none). */
  private async once (url: string, asked: Asked, api: boolean): Promise<Outcome> {
    const response = await this.fetch(url, {
      headers: api ? { authorization: `Bearer ${this.options.token}`, accept: 'application/vnd.api+json' } : { accept: 'application/json' },
      // a redirect would carry the token to an address nobody named: the API's answers never redirect
      redirect: api ? 'manual' : 'follow',
      ...(this.options.signal === undefined ? {} : { signal: this.options.signal })
    })
    const status = response.status
    if (status === 429) {
      // held before anything else is awaited, so that no other request starts in between
      const waitMs = waitOf(response)
      this.pace.hold(waitMs)
      await response.body?.cancel()
      return { waitMs }
    }
    if (status !== 200) await response.body?.cancel()
    if (status >= 500) return { transient: `${status}` }
    if (!api && status === 404) return { value: undefined }
    if (status === 401) throw new MirrorError(`${asked.what}: 401 — the token is not valid at ${this.host} (expired, revoked, or a token of another host)`)
    if (status === 403 || status === 404) throw new MirrorError(`${asked.what}: ${status} — ${asked.refused ?? 'the token may not read it'} (${WHOLE})`)
    if (status >= 300 && status < 400) {
      const location = response.headers.get('location')
      const to = location === null ? '' : ` to ${originOf(location, url)}`
      throw new MirrorError(`${asked.what}: ${status} — a redirect${to}: give --from as the address the API answers at`)
    }
    if (status !== 200) throw new MirrorError(`${asked.what}: ${status} — not an answer the mirror reads`)
    const text = await response.text()
    try {
      return { value: JSON.parse(text) }
    } catch {
      return { transient: 'a body cut off or not JSON' }
    }
  }
}

/** The longest one 429 holds the requests back: HCP Terraform's limit resets within a second; a minute is plenty. */
const MAX_WAIT_MS = 60_000

/** How long a 429 asks to wait, ms: `Retry-After` (seconds or a date), else `X-RateLimit-Reset` (seconds, fractional: a delay), else a second. */
function waitOf (response: Pick<Response, 'headers'>): number {
  const retryAfter = response.headers.get('retry-after')
  if (retryAfter !== null && retryAfter.trim() !== '') {
    const seconds = Number(retryAfter)
    if (Number.isFinite(seconds)) return Math.min(MAX_WAIT_MS, Math.max(0, seconds * 1000))
    const date = Date.parse(retryAfter)
    if (!Number.isNaN(date)) return Math.min(MAX_WAIT_MS, Math.max(0, date - Date.now()))
  }
  const reset = Number(response.headers.get('x-ratelimit-reset') ?? '')
  return Number.isFinite(reset) && reset > 0 ? Math.min(MAX_WAIT_MS, reset * 1000) : 1000
}

const STOPPED = 'the mirror run was stopped'
/** The pace's waits end early only when the run is stopped: as the run's error. */
const stoppable = async (wait: Promise<void>): Promise<void> => await wait.catch(() => { throw new MirrorError(STOPPED) })

/** A failed connection in words, without anything the request carried: the error's code or name, never its message. */
function connectionError (err: unknown): string {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return code
  }
  return err instanceof Error && /^[A-Za-z]+$/.test(err.name) ? err.name : 'unknown'
}

/** A redirect's target, its origin only. */
function originOf (location: string, base: string): string {
  try {
    return new URL(location, base).origin
  } catch {
    return 'an address that does not parse'
  }
}
