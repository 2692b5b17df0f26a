import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { ErrorObject } from 'ajv'
import { errorMessage, errorPointer } from '../validation.js'

export const JSONAPI_TYPE = 'application/vnd.api+json'

/** One JSON:API error object; `status` is a string, as the format wants. */
export interface ApiErrorObject {
  status: string
  title: string
  detail?: string
  source?: { pointer: string } | { parameter: string }
}

/** An error a handler raises on purpose; the error handler turns it into its document. */
export class ApiError extends Error {
  constructor (readonly statusCode: number, readonly title: string, readonly detail?: string,
    readonly source?: ApiErrorObject['source']) {
    super(detail ?? title)
  }

  toObject (): ApiErrorObject {
    return {
      status: String(this.statusCode),
      title: this.title,
      ...(this.detail === undefined ? {} : { detail: this.detail }),
      ...(this.source === undefined ? {} : { source: this.source })
    }
  }

  /** The error objects of its document: this one. */
  toObjects (): ApiErrorObject[] {
    return [this.toObject()]
  }
}

/** Several errors of one status in one document (each entry of a set that breaks a rule); the first is the error itself. */
export class ApiErrors extends ApiError {
  constructor (readonly errors: readonly [ApiError, ...ApiError[]]) {
    super(errors[0].statusCode, errors[0].title, errors[0].detail, errors[0].source)
  }

  override toObjects (): ApiErrorObject[] {
    return this.errors.map((error) => error.toObject())
  }
}

/**
 * The client closed its connection before its answer: nobody reads what is sent, and nothing went
 * wrong here. Never logged as a failure (a client that hangs up must not be able to flood the
 * error log): admission says it once, at info.
 */
export class ClientGone extends ApiError {
  constructor () {
    super(503, 'service unavailable', 'The client closed the connection before the answer.')
  }
}

/** The one answer for "does not exist" and "you may not": byte-identical, so existence never leaks. */
export const notFound = (): ApiError => new ApiError(404, 'not found')
export const unauthorized = (): ApiError => new ApiError(401, 'unauthorized')
export const invalidAttribute = (detail: string, pointer: string): ApiError =>
  new ApiError(422, 'invalid attribute', detail, { pointer })

/** The SQLSTATE of migration 0013's guard: a write to a mirrored organization's rows by anyone but the mirror (DESIGN §13.3). */
export const MIRROR_GUARD = 'TAM01'
export const MANAGED_BY_MIRROR = 'managed by the mirror (change it in HCP Terraform)'

/** pg and PGlite codes that mean "the database cannot serve now", not "you sent something wrong". */
const UNAVAILABLE_CODES = new Set([
  '57014', // statement timeout / query canceled
  '40P01', '40001', // deadlock detected, serialization failure: worth a retry
  '55P03', // lock not available (lock_timeout)
  '53300', // too many connections
  '57P01', '57P02', '57P03', // admin shutdown, crash shutdown, cannot connect now
  '08000', '08001', '08003', '08004', '08006', // connection exceptions
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN'
])

export function isDatabaseUnavailable (err: unknown): boolean {
  const e = err as { code?: unknown, message?: unknown } | null
  if (e === null || typeof e !== 'object') return false
  if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true
  const message = typeof e.message === 'string' ? e.message : ''
  // pg's own wording for its client-side timeouts and lost connections
  return /timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error|connect ECONNREFUSED|Query read timeout|PGlite is closed|driver has already been destroyed/i.test(message)
}

/** Maps any error to its JSON:API document and status. 5xx details are never shown. */
export function toErrorObjects (error: FastifyError | Error): { status: number, errors: ApiErrorObject[] } {
  if (error instanceof ApiError) return { status: error.statusCode, errors: error.toObjects() }
  const fe = error as FastifyError & { validation?: ErrorObject[], validationContext?: string }
  if (Array.isArray(fe.validation) && fe.validation.length > 0) {
    return { status: 422, errors: [validationError(fe.validation[0]!, fe.validationContext)] }
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return simple(415, 'invalid content type', 'Send the body as application/vnd.api+json or application/json.')
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return simple(413, 'payload too large', 'The request body is larger than this service accepts.')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return simple(400, 'bad request', 'The request body is not valid JSON.')
    case 'FST_ERR_BAD_URL':
      return simple(400, 'bad request', 'The URL is not valid.')
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return simple(414, 'uri too long', 'A path parameter is longer than this service accepts.')
  }
  // a mirrored organization's rows are written by the mirror only (migration 0013's guard): whoever else asks is refused
  if ((error as { code?: unknown }).code === MIRROR_GUARD) {
    return { status: 422, errors: [invalidAttribute(MANAGED_BY_MIRROR, '/data').toObject()] }
  }
  // a data exception from a value a client sent that no check above caught: not our failure
  if (typeof (error as { code?: unknown }).code === 'string' && /^22[0-9A-Z]{3}$/.test((error as { code: string }).code)) {
    return simple(400, 'bad request', 'A value in the request cannot be stored or compared.')
  }
  if (isDatabaseUnavailable(error)) {
    return simple(503, 'service unavailable', 'The database is unavailable; try again shortly.')
  }
  const status = typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500 ? fe.statusCode : 500
  if (status === 404) return { status, errors: [notFound().toObject()] }
  if (status === 500) return { status, errors: [{ status: '500', title: 'internal server error' }] }
  return simple(status, (STATUS_CODES[status] ?? 'error').toLowerCase(), fe.message)
}

const simple = (status: number, title: string, detail: string) =>
  ({ status, errors: [{ status: String(status), title, detail }] })

/**
 * The pointer (or parameter) is the member at fault, a missing or unknown one included; the detail
 * names it once: `/data/relationships is required`, `/data/attributes has an unknown member "colour"`.
 */
function validationError (error: ErrorObject, context: string | undefined): ApiErrorObject {
  const pointer = errorPointer(error)
  const unknown = (error.params as { additionalProperty?: string }).additionalProperty !== undefined
  if (context === 'body') {
    const detail = unknown ? `${error.instancePath || 'body'} has an ${errorMessage(error)}` : `${pointer || 'body'} ${errorMessage(error)}`
    return { status: '422', title: 'invalid attribute', detail, source: { pointer } }
  }
  // query string and path: JSON:API names the parameter instead of a pointer
  const parameter = pointer.replace(/^\//, '').replace(/~1/g, '/').replace(/~0/g, '~')
  const detail = unknown ? `unknown parameter "${parameter}"` : `${parameter || context || 'parameter'} ${errorMessage(error)}`
  return { status: '422', title: 'invalid parameter', detail, source: { parameter } }
}

/**
 * What a failure's log line carries: its kind, message, code and stack — never the fields a
 * database error adds (PGlite's `query` and `params`, pg's `detail`, `where`), which hold the
 * statement's values: a token's digest, the ids a caller asked for.
 */
export function loggable (error: Error): { type: string, message: string, code?: unknown, stack?: string } {
  const code = (error as { code?: unknown }).code
  return { type: error.name, message: error.message, ...(code === undefined ? {} : { code }), ...(error.stack === undefined ? {} : { stack: error.stack }) }
}

/** The error handler of the app and of the plugin: every error leaves as a JSON:API document. */
export function errorHandler (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  const { status, errors } = toErrorObjects(error)
  // a client gone is said where it is seen leaving (src/limits/admission.ts), not here
  if (status >= 500 && !(error instanceof ClientGone)) request.log.error({ err: loggable(error) }, 'request failed')
  void reply.status(status).type(JSONAPI_TYPE).send({ errors })
}

export function notFoundHandler (_request: FastifyRequest, reply: FastifyReply): void {
  void reply.status(404).type(JSONAPI_TYPE).send({ errors: [notFound().toObject()] })
}
