import { Readable } from 'node:stream'
import { setImmediate as turnOfTheLoop } from 'node:timers/promises'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { callerKey } from '../auth/caller.js'
import { ApiError, ClientGone } from '../jsonapi/errors.js'
import { Admission, GONE, type AdmissionOptions, type AdmissionState, type Ticket } from './admission-turns.js'

export type { AdmissionOptions, AdmissionState } from './admission-turns.js'
declare module 'fastify' {
  interface FastifyRequest {
    /** Where the request stands in admission (null: it has not asked for a turn). */
    admission: Ticket | null
  }
  interface FastifyInstance {
    /** What admission holds now (for metrics and tests). */
    admissionState: () => AdmissionState
  }
  interface FastifyContextConfig {
    /**
     * A route whose answers are heavy (the audit trail's pages of up to 1,000 events): one
     * caller's requests of it run one at a time — the rest wait their turn — so that one caller
     * paging fast cannot take the process's time from everyone else.
     */
    onePerCaller?: boolean
  }
}

/**
 * Admission as Fastify hooks. A request asks for its turn after validation (a request refused
 * anyway never waits); its turn goes back when its answer is ready (`onSend`: the handler's work
 * is over, whatever the answer) — or, when the answer is a stream, its ticket is parked there and
 * ends with the answer, each of the stream's reads taking a turn through `inTurn` — and a waiting
 * request's place when its client leaves or its wait runs out. The client leaving while its request runs gives nothing back early: the work
 * still holds its database connection (a statement waiting on a lock included) until it ends,
 * and the answer that ends it — sent to nobody — gives the turn back.
 */
export default fp<AdmissionOptions>(async (app, options) => {
  const admission = new Admission(options)
  /** Requests whose client was seen leaving before the answer: each is said once. */
  const gone = new WeakSet<FastifyRequest>()
  const clientGone = (request: FastifyRequest) => {
    if (gone.has(request)) return
    gone.add(request)
    request.log.info('client closed the connection before the answer')
  }
  app.decorate('admissionState', () => admission.state())
  app.decorateRequest('admission', null)

  // a callback hook: a request that gets its turn at once (nothing waits) costs no promise
  app.addHook('preHandler', (request, reply, done) => {
    // its client is gone already: running it would do work no one will read
    if (request.admission !== null || clientLeft(request)) return done(new ClientGone())
    let asked
    try {
      asked = admission.ask(callerKey(request.caller), request.routeOptions.config.onePerCaller === true)
    } catch (error) {
      void reply.header('retry-after', '1')
      return done(error as ApiError)
    }
    const { ticket, wait } = asked
    request.admission = ticket
    // a client that leaves while its request waits takes its place in the queue with it; one
    // that leaves before its answer is said once, at info: nothing went wrong here
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) clientGone(request)
      // the answer is over: what holds no turn now ends; a running one ends with its answer
      // (onSend), or, a stream's read, when it gives its turn back
      ticket.answered = true
      if (ticket.stage !== 'running') admission.end(ticket)
    })
    if (wait === undefined) return done()
    wait.then(() => {
      // admitted: its client may have left at the very moment its turn came
      done(clientLeft(request) ? new ClientGone() : undefined)
    }, (error: ApiError) => {
      if (!(error instanceof ClientGone)) void reply.header('retry-after', '1')
      done(error)
    })
  })
  // every answer passes here, whatever ended the handler (a request that never reaches a handler
  // holds no turn); a callback hook, so that it costs no promise per request
  app.addHook('onSend', (request, _reply, payload, done) => {
    const ticket = request.admission
    if (payload instanceof Readable) {
      // HEAD costs what its answer costs: the stream is never read (Fastify's HEAD route would
      // drain it into nothing, outside admission and deaf to its client leaving)
      if (request.method === 'HEAD') {
        payload.destroy()
        if (ticket !== null) admission.end(ticket)
        return done(null, Readable.from([]))
      }
      // a stream: the request holds its place until the answer ends; each read takes a turn (inTurn)
      if (ticket !== null) admission.park(ticket)
      return done(null, payload)
    }
    if (ticket !== null) admission.end(ticket)
    done(null, payload)
  })
  app.addHook('onRequestAbort', async (request) => {
    clientGone(request)
    if (request.admission === null) request.admission = GONE // it must never take a turn
    else if (request.admission.stage === 'waiting') admission.end(request.admission)
  })
}, { name: 'team-access-admission', fastify: '5.x' })

/**
 * One read of a streamed answer, in a turn at the database of its own (the request's ticket,
 * resumed, then parked: see Ticket), and then a turn of the event loop, so that other requests'
 * I/O goes on between a stream's reads — the embedded database answers a statement without one.
 * Refused (ClientGone) once the answer is over. Outside admission (a host's own route), it reads.
 */
export async function inTurn<T> (request: FastifyRequest, read: () => Promise<T>): Promise<T> {
  const ticket = request.admission
  if (ticket === null) return await read()
  if (ticket.of === undefined) throw new ClientGone()
  await ticket.of.resume(ticket)
  let value: T
  try {
    value = await read()
  } finally {
    ticket.of.park(ticket)
  }
  await turnOfTheLoop()
  return value
}

/** Its connection is gone (a request's own stream may be done with once its body is read: not a sign). */
const clientLeft = (request: FastifyRequest): boolean => request.raw.socket?.destroyed === true
