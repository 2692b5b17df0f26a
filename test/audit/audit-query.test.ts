import t from 'tap'
import { parseAuditPage, parseSince } from '../../src/audit/audit-query.js'
import type { ApiError } from '../../src/jsonapi/errors.js'

/** The audit trail's query parameters (DESIGN §8), as pure functions. */

/** The error document a parameter is refused with, or undefined when it is not refused. */
const refusal = (parse: () => unknown) => {
  try {
    parse()
  } catch (err) {
    return (err as ApiError).toObject()
  }
  return undefined
}

t.test('since: the instant named, in UTC to the microsecond, whatever the offset', async (t) => {
  const cases: Array<[string, string]> = [
    ['2026-11-22T01:02:03Z', '2026-11-22T01:02:03.000000Z'],
    ['2026-11-22T02:02:03+01:00', '2026-11-22T01:02:03.000000Z'],
    ['2026-11-21T20:02:03-05:00', '2026-11-22T01:02:03.000000Z'],
    ['2026-11-22T06:32:03.5+05:30', '2026-11-22T01:02:03.500000Z'],
    ['2026-11-22T01:02:03.123456789Z', '2026-11-22T01:02:03.123456Z'],
    ['2026-11-22T01:02:03,25Z', '2026-11-22T01:02:03.250000Z'],
    ['2026-11-22T02:02:03+0100', '2026-11-22T01:02:03.000000Z'],
    ['2026-11-22T02:02:03+01', '2026-11-22T01:02:03.000000Z'],
    ['2026-11-22T02:02:03 01:00', '2026-11-22T01:02:03.000000Z'],
    ['2026-11-22t01:02:03z', '2026-11-22T01:02:03.000000Z'],
    ['2024-02-29T23:30:00-01:00', '2024-03-01T00:30:00.000000Z'],
    ['0099-01-01T00:00:00Z', '0099-01-01T00:00:00.000000Z']
  ]
  for (const [given, instant] of cases) t.equal(parseSince(given), instant, given)
  t.equal(parseSince(undefined), undefined, 'absent: the whole trail')
})

t.test('since: anything but an ISO 8601 date and time with an offset is 422', async (t) => {
  for (const bad of ['', 'now', '1700000000', '2026-11-22', '2026-11-22T01:02:03', '2026-11-22 01:02:03Z', '2026-13-01T00:00:00Z',
    '2025-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-11-22T24:00:00Z', '2026-11-22T01:60:00Z', '2026-11-22T01:02:60Z',
    '2026-11-22T01:02:03+24:00', '2026-11-22T01:02:03+01:60', '0000-01-01T00:00:00+01:00', '20261122T010203Z']) {
    t.match(refusal(() => parseSince(bad)), { status: '422', source: { parameter: 'since' } }, JSON.stringify(bad))
  }
})

t.test('pages: 1000 events by default, 1 to 1000, numbers from 1', async (t) => {
  t.same(parseAuditPage(undefined, undefined), { number: 1, size: 1000 })
  t.same(parseAuditPage('3', '7'), { number: 3, size: 7 })
  t.same(parseAuditPage(undefined, '1000'), { number: 1, size: 1000 })
  for (const [number, size, parameter] of [['0', undefined, 'page[number]'], ['x', undefined, 'page[number]'], ['1'.repeat(13), undefined, 'page[number]'],
    [undefined, '0', 'page[size]'], [undefined, '1001', 'page[size]'], [undefined, '10000', 'page[size]'], [undefined, '2.5', 'page[size]']] as const) {
    t.match(refusal(() => parseAuditPage(number, size)), { status: '422', source: { parameter } }, `${number} ${size}`)
  }
})
