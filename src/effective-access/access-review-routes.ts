import { Readable } from 'node:stream'
import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ACCESS_REVIEW_CSV_COLUMNS, AccessReviewParams, AccessReviewQuery, accessReviewResponses, type AccessReviewEntry } from '../../schemas/access-review.js'
import type { GrantSource } from '../access/effective-access.js'
import { impossibleId } from '../db/ids.js'
import { paged } from '../jsonapi/document.js'
import { notFound } from '../jsonapi/errors.js'
import { noInclude } from '../jsonapi/include.js'
import { parsePage } from '../jsonapi/pagination.js'
import { JSONAPI_TYPE } from '../jsonapi/errors.js'
import { inTurn } from '../limits/admission.js'
import type { AccessReviewRepository, ReviewEntry } from './access-review-repository.js'
import { toGrant } from './effective-access-serialize.js'

/**
 * The access review (DESIGN §12.1): `GET /organizations/:organization/access-review`, for owners —
 * a page of JSON:API entries (one per team and workspace), every entry without page parameters
 * (one document, streamed), or with `Accept: text/csv` the whole
 * organization as CSV, one row per user, team and workspace, streamed team after team so that an
 * organization of any size never sits whole in memory.
 */

/** A first character a spreadsheet reads as the start of a formula (OWASP's CSV injection list). */
const FORMULA_START = /^[=+\-@\t\r]/
/**
 * What makes a field quoted: RFC 4180's `"`, CR, LF and `,`, and every separator a spreadsheet may
 * split on instead (`;` where it is the list separator, tab in LibreOffice's default import): unquoted,
 * `x;=cmd` would be two cells, the second a formula.
 */
const SPLITS_OR_QUOTES = /[",;\t\r\n]/

/**
 * A CSV field (RFC 4180), safe to open in a spreadsheet: a value it would run as a formula starts
 * with `'`, and a value a spreadsheet could split into cells is quoted whole (DESIGN §12.1).
 */
export function csvField (value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value
  return SPLITS_OR_QUOTES.test(safe) || safe !== value ? `"${safe.replaceAll('"', '""')}"` : safe
}

/** Where the access comes from, in a few words per grant (`team-access tws-…; organization-access.read-workspaces`). */
function grantedBy (grants: readonly GrantSource[]): string {
  return grants.map((grant) => {
    if (grant.kind === 'team-access') return `team-access ${grant.teamWorkspaceId!}`
    if (grant.kind === 'team-project') return `team-project ${grant.teamProjectId!} (${grant.projectAccess!})`
    return grant.kind
  }).join('; ')
}

/**
 * An organization's CSV lines, entry by entry: one per member of its team (a team with no member:
 * one line with no username — its tokens act through it). The entries come team after team and
 * share their team's object and, within a slice, their explanation's grants (the repository's
 * `entries`), so the fields of a team and of an explanation are written once, not once per line.
 */
function csvLines (): (entry: ReviewEntry) => string {
  let team: ReviewEntry['team'] | undefined
  let heads: string[] = []
  // an explanation's fields, for as long as its entries are alive (a slice's)
  const tails = new WeakMap<readonly GrantSource[], string>()
  return (entry) => {
    if (entry.team !== team) {
      team = entry.team
      const fields = `${csvField(team.name)},${csvField(team.visibility)},`
      heads = (team.members.length === 0 ? [''] : team.members).map((username) => `${csvField(username)},${fields}`)
    }
    let tail = tails.get(entry.grants)
    if (tail === undefined) {
      const p = entry.permissions!
      tail = [entry.access!, p.runs, p.variables, p['state-versions'], p['sentinel-mocks'], String(p['workspace-locking']), String(p['run-tasks']), grantedBy(entry.grants)]
        .map(csvField).join(',') + '\r\n'
      tails.set(entry.grants, tail)
    }
    const workspace = `${csvField(entry.workspace.name)},${csvField(entry.workspace.projectName)},`
    let lines = ''
    for (const head of heads) lines += head + workspace + tail
    return lines
  }
}

/**
 * Entries (team × workspace) a statement reads when the whole organization is streamed, for a
 * batch of small teams or a slice of a big one: what the stream holds in memory at once. At 1,000
 * teams × 5,000 workspaces on PostgreSQL, 1,000 streamed the CSV about a sixth faster than 500,
 * at the same resident memory (BENCHMARKS.md).
 */
const SLICE = 1000

/**
 * `head`, each entry as `format` gives it, `tail` — as bytes, in chunks of about 64 KiB. A chunk is
 * encoded as soon as it is full: as a string it would be a rope of every piece of every line,
 * kept on the heap while it waits to be written.
 */
async function * chunked (slices: AsyncIterable<ReviewEntry[]>, head: string, format: (entry: ReviewEntry, index: number) => string, tail: string): AsyncGenerator<Buffer> {
  let chunk = head
  let index = 0
  for await (const entries of slices) {
    for (const entry of entries) {
      chunk += format(entry, index++)
      if (chunk.length >= 65_536) {
        yield Buffer.from(chunk)
        chunk = ''
      }
    }
  }
  yield Buffer.from(chunk + tail)
}

/**
 * The request's entries, streamed: each statement in a turn of admission's and as the request's
 * caller, so that a stream holds its place under the caller's cap until its answer ends, lets
 * other requests run between its reads, and stops when its caller stops being an owner.
 */
const entriesOf = (repository: AccessReviewRepository, request: FastifyRequest, organizationId: string) =>
  repository.entries(request.caller, organizationId, SLICE, async (read) => await inTurn(request, read))

/** The organization's CSV: the header, then every entry's lines. */
const csvOf = (entries: AsyncIterable<ReviewEntry[]>) =>
  chunked(entries, `${ACCESS_REVIEW_CSV_COLUMNS.join(',')}\r\n`, csvLines(), '')

/** The organization's every entry as one JSON:API document, unpaginated (DESIGN §4: no page parameters). */
const documentOf = (entries: AsyncIterable<ReviewEntry[]>) =>
  chunked(entries, '{"data":[', (entry, index) => `${index === 0 ? '' : ','}${JSON.stringify(toEntry(entry))}`, ']}')

function toEntry (entry: ReviewEntry): AccessReviewEntry {
  return {
    id: `${entry.team.id}:${entry.workspace.id}`,
    type: 'access-review-entries',
    attributes: {
      access: entry.access!,
      ...entry.permissions!,
      grants: entry.grants.map(toGrant),
      'team-name': entry.team.name,
      'team-visibility': entry.team.visibility,
      'team-members': entry.team.members,
      'workspace-name': entry.workspace.name,
      'project-name': entry.workspace.projectName
    },
    relationships: {
      team: { data: { id: entry.team.id, type: 'teams' } },
      workspace: { data: { id: entry.workspace.id, type: 'workspaces' } },
      project: { data: { id: entry.workspace.projectId, type: 'projects' } }
    }
  }
}

const wantsCsv = (request: FastifyRequest): boolean => (request.headers.accept ?? '').toLowerCase().includes('text/csv')

const accessReviewRoutes: FastifyPluginAsyncTypebox<{ repository: AccessReviewRepository, origin: (request: FastifyRequest) => string }> = async (app, { repository, origin }) => {
  const prefix = app.prefix

  app.get('/organizations/:organization/access-review', {
    config: { csv: true },
    schema: {
      'x-team-access-extension': true,
      tags: ['team-access'],
      operationId: 'showAccessReview',
      summary: "An organization's whole access, and why (extension)",
      params: AccessReviewParams,
      querystring: AccessReviewQuery,
      security: [{ bearerToken: [] }],
      produces: ['application/vnd.api+json', 'text/csv'],
      response: accessReviewResponses,
      description: "Every team of the organization with every workspace it holds any effective access on (owners, organization access, team-access rows, team-project rows), by team name, then workspace name, as §4's lists: with page[number] or page[size] a page (size 1 to 100), without either every entry in one document, streamed: the level, each permission at its strongest, the grants, and the team's members. With `Accept: text/csv`: the whole organization, one row per user, team and workspace (a team with no member: one row with no username), streamed, as an attachment; page parameters do not apply. Owners only (the owners team's members and token, the organization token); 404 for anyone else, as for a missing organization. An extension, beyond HCP Terraform."
    }
  }, async (request, reply) => {
    const { organization } = request.params
    const { 'page[number]': number, 'page[size]': size, include } = request.query
    noInclude(include)
    if (impossibleId(organization)) throw notFound()
    if (wantsCsv(request)) {
      const found = await repository.organization(request.caller, organization)
      if (found === undefined) throw notFound()
      const date = new Date().toISOString().slice(0, 10)
      return await reply.type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${found.name}-access-review-${date}.csv"`)
        .header('cache-control', 'no-store')
        .send(Readable.from(csvOf(entriesOf(repository, request, found.id))))
    }
    const page = parsePage(number, size)
    if (page === undefined) {
      // no page parameter (DESIGN §4): every entry, streamed as the CSV is
      const found = await repository.organization(request.caller, organization)
      if (found === undefined) throw notFound()
      return await reply.type(JSONAPI_TYPE).header('cache-control', 'no-store').send(Readable.from(documentOf(entriesOf(repository, request, found.id))))
    }
    const linksFrom = origin(request)
    const answer = await repository.page(request.caller, organization, page)
    if (answer === undefined) throw notFound()
    return paged(answer.entries.map(toEntry), page, answer.total, {
      origin: linksFrom, path: `${prefix}/organizations/${encodeURIComponent(organization)}/access-review`, params: {}
    })
  })
}

export default accessReviewRoutes
