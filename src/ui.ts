import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { readFile } from 'node:fs/promises'
import { projectFile } from './project-file.js'

/** Where the standalone service serves the access review's page (DESIGN §12.2); the plugin serves it at `<prefix>/ui/`. */
export const UI_PATH = '/ui'

/**
 * The page's files, as the build writes them (`npm run build`: ui/ bundled by esbuild into
 * dist/ui/). Nothing else is served: no directory listing, no other path.
 */
const FILES = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml'
} as const

/**
 * Strict: the page's own script and style only — no inline script or style, no other origin, no
 * frames, no plugins; its requests go to this origin alone. The CSV download is a `blob:` link
 * the page makes of what it fetched.
 */
export const UI_CONTENT_SECURITY_POLICY = [
  "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self'", "connect-src 'self'",
  "object-src 'none'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"
].join('; ')

/**
 * The page at `<path>/` (DESIGN §12.2): static files, no token needed to load them — the person
 * pastes one into the page, which keeps it in sessionStorage and sends it to the API at `apiBase`
 * (written into the page's `<meta name="api-base">`) as `Authorization: Bearer`.
 */
export async function registerUi (app: FastifyInstance, { path, apiBase }: { path: string, apiBase: string }): Promise<void> {
  const files = new Map<string, { type: string, body: Buffer }>()
  for (const [name, type] of Object.entries(FILES)) {
    let body: Buffer
    try {
      body = await readFile(projectFile(`dist/ui/${name}`))
    } catch (err) {
      throw new Error(`the access review page is not built (dist/ui/${name}): run npm run build`, { cause: err })
    }
    if (name === 'index.html') body = Buffer.from(body.toString('utf8').replace('content="/api/v2"', `content="${escapeAttribute(apiBase)}"`))
    files.set(name, { type, body })
  }

  const send = (name: string) => async (_request: FastifyRequest, reply: FastifyReply) => {
    const file = files.get(name)!
    return await reply
      .header('content-security-policy', UI_CONTENT_SECURITY_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache')
      .type(file.type)
      .send(file.body)
  }
  const hidden = { schema: { hide: true } }
  // `<path>` without its slash: the page's relative URLs (app.js, style.css) need the slash
  app.get(path, hidden, async (_request, reply) => await reply.redirect(`${app.prefix}${path}/`, 302))
  app.get(`${path}/`, hidden, send('index.html'))
  for (const name of Object.keys(FILES)) app.get(`${path}/${name}`, hidden, send(name))
}

const escapeAttribute = (value: string): string => value.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`)
