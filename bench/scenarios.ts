/**
 * What `npm run bench` drives (bench/run.ts): the service's rows — reads, pages, writes, issue 23's
 * writes of the directory, the audit trail — each with what it is compared with and its target, and
 * the floors (bench/floor-server.ts) they are compared with.
 */
import type { Options } from 'autocannon'
import { ORG_TOKEN, userToken } from './dataset.js'
import { AUDIT_TRAIL } from './settings.js'

export type FloorKey = 'read' | 'update' | 'insertDelete' | 'page' | 'showBound' | 'showMemberBound'

export interface Scenario {
  /** What other rows compare with. */
  key: string
  name: string
  /** The ratio of this row's req/s to a floor's (floor:…) or to another row's (its key); a target, with the issue that set it. */
  compare?: { with: `floor:${FloorKey}` | string, label: string, target?: number, issue?: number }
  /** Counts cycles of two requests (POST + DELETE), not requests. */
  cycle?: boolean
  /** Only on PostgreSQL (the 100,000 rows are loaded by SQL there; issue 23's directory writes, to keep the run short). */
  postgresOnly?: boolean
  /** Left out of the side-by-side section (BENCH_BASELINE): rows added after it, to keep its run short. */
  sideBySide?: boolean
  /** Counts the audit events the row's run records, where the service keeps an audit trail. */
  countsAuditEvents?: boolean
  options: { path?: string, method?: Options['method'], headers?: Record<string, string>, body?: string, requests?: Options['requests'] }
}

export const owner = { authorization: `Bearer ${ORG_TOKEN}` }
const member = { authorization: `Bearer ${userToken(7)}` }
const jsonapi = { 'content-type': 'application/vnd.api+json' }
const list = (ws: string, page = '') => `/api/v2/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=${ws}${page}`
const page100 = (n: number) => `&page%5Bnumber%5D=${n}&page%5Bsize%5D=100`

export function scenarios (audit: boolean): Scenario[] {
  // teams 10000.. have no rows on small workspaces: each cycle borrows a (team, small workspace)
  // pair and gives it back after its DELETE (autocannon's context lives for one POST + DELETE
  // sequence only); pairs on different workspaces, as adds by different people usually are
  // (one workspace's adds and removes queue on its row-count row)
  const free = Array.from({ length: 200 }, (_, i) => ({ team: `team-${10_000 + i}`, workspace: `ws-small-${i}` }))
  // updates go round the first row of each small workspace (custom or plan: runs=plan is valid on both)
  let nextRow = 0
  // the audited writes go round one custom row of each small workspace (row 4 of the even ones,
  // row 2 of the odd ones) and flip runs between plan and apply on each pass: every request is a change
  let nextAudited = 0
  const audited = (n: number) => {
    const k = n % 200
    return { path: `/api/v2/team-workspaces/tws-s${k}-${k % 2 === 0 ? 4 : 2}`, runs: Math.floor(n / 200) % 2 === 0 ? 'apply' : 'plan' }
  }
  const readFloor = { with: 'floor:read', label: 'one-row floor' }
  const writeFloor = { with: 'floor:update', label: 'write floor (one-row UPDATE)' }
  /** One of issue 23's writes of the directory: one request, set up anew each time (a real change), against the write floor, on PostgreSQL only. */
  const directoryWrite = (key: string, name: string, request: Record<string, unknown>): Scenario =>
    ({ key, name, compare: writeFloor, sideBySide: false, postgresOnly: true, options: { requests: [request] as any } })
  let nextTeam = 0
  let nextMember = 0
  let nextToken = 0
  let nextWorkspace = 0
  return [
    { key: 'show-member', name: 'show, as a member', compare: { ...readFloor, target: 0.75, issue: 23 }, options: { path: '/api/v2/team-workspaces/tws-s0-7', headers: member } },
    { key: 'show-owner', name: 'show, as an owner', compare: { ...readFloor, target: 0.75, issue: 23 }, options: { path: '/api/v2/team-workspaces/tws-h-5000', headers: owner } },
    { key: 'list-50', name: 'list 50 rows, unpaginated', options: { path: list('ws-small-1'), headers: owner } },
    { key: 'page5-1k', name: 'list page 5 of 100 at 1,000 rows', options: { path: list('ws-mid', page100(5)), headers: owner } },
    { key: 'page5-10k', name: 'list page 5 of 100 at 10,000 rows', compare: { with: 'page5-1k', label: 'page 5 at 1,000 rows', target: 0.8, issue: 5 }, options: { path: list('ws-huge', page100(5)), headers: owner } },
    { key: 'page5-100k', name: 'list page 5 of 100 at 100,000 rows', postgresOnly: true, compare: { with: 'page5-1k', label: 'page 5 at 1,000 rows', target: 0.9, issue: 13 }, options: { path: list('ws-large', page100(5)), headers: owner } },
    { key: 'page50-10k', name: 'list page 50 of 100 at 10,000 rows (deep)', compare: { with: 'floor:page', label: 'page floor, same page', target: 0.8, issue: 23 }, options: { path: list('ws-huge', page100(50)), headers: owner } },
    { key: 'page5-10k-member', name: 'list page 5 of 100 at 10,000 rows, as a member', compare: { with: 'page5-10k', label: "an owner's same page", target: 0.9, issue: 23 }, options: { path: list('ws-huge', page100(5)), headers: member } },
    {
      key: 'update',
      name: 'update',
      compare: { with: 'floor:update', label: 'write floor (one-row UPDATE)', target: 0.8, issue: 13 },
      options: {
        requests: [{
          method: 'PATCH',
          headers: { ...owner, ...jsonapi },
          body: JSON.stringify({ data: { attributes: { runs: 'plan' } } }),
          setupRequest: (request: any) => ({ ...request, path: `/api/v2/team-workspaces/tws-s${nextRow++ % 200}-0` })
        }] as any
      }
    },
    {
      key: 'add-remove',
      name: 'add + remove cycle',
      compare: { with: 'floor:insertDelete', label: 'insert + delete floor', target: 0.6, issue: 13 },
      cycle: true,
      options: {
        requests: [
          {
            method: 'POST',
            path: '/api/v2/team-workspaces',
            headers: { ...owner, ...jsonapi },
            setupRequest: (request: any, context: any) => {
              context.pair = free.shift()
              return { ...request, body: JSON.stringify({ data: { type: 'team-workspaces', attributes: { access: 'write' }, relationships: { team: { data: { type: 'teams', id: context.pair.team } }, workspace: { data: { type: 'workspaces', id: context.pair.workspace } } } } }) }
            },
            onResponse: (_status: number, body: string, context: any) => { context.id = JSON.parse(body).data?.id }
          },
          {
            method: 'DELETE',
            headers: owner,
            setupRequest: (request: any, context: any) => ({ ...request, path: `/api/v2/team-workspaces/${context.id}` }),
            onResponse: (_status: number, _body: string, context: any) => { free.push(context.pair) }
          }
        ] as any
      }
    },
    {
      key: 'audit-write',
      name: 'audit event write: an update that changes a permission',
      compare: { with: 'floor:update', label: 'write floor (one-row UPDATE)' },
      countsAuditEvents: true,
      options: {
        requests: [{
          method: 'PATCH',
          headers: { ...owner, ...jsonapi },
          setupRequest: (request: any) => {
            const { path, runs } = audited(nextAudited++)
            return { ...request, path, body: JSON.stringify({ data: { attributes: { runs } } }) }
          }
        }] as any
      }
    },
    { key: 'workspace-show', name: 'workspace: show by id', compare: readFloor, options: { path: '/api/v2/workspaces/ws-small-3', headers: owner } },
    { key: 'workspace-by-name', name: 'workspace: show by organization and name', compare: readFloor, options: { path: '/api/v2/organizations/bench/workspaces/small3', headers: owner } },
    { key: 'workspace-list', name: 'workspaces: list, page 1 (20 of 204)', options: { path: '/api/v2/organizations/bench/workspaces', headers: owner } },
    { key: 'team-show', name: 'team: show by id', compare: readFloor, options: { path: '/api/v2/teams/team-5000', headers: owner } },
    { key: 'team-filter', name: 'teams: list, filter[names] of 2 teams', options: { path: '/api/v2/organizations/bench/teams?filter%5Bnames%5D=team5000%2Cteam42', headers: owner } },
    // issue 23's writes of the directory, each request a real change, against the write floor
    directoryWrite('team-create', 'team: create', {
      method: 'POST',
      path: '/api/v2/organizations/bench/teams',
      headers: { ...owner, ...jsonapi },
      setupRequest: (request: any) => ({ ...request, body: JSON.stringify({ data: { type: 'teams', attributes: { name: `made-${nextTeam++}` } } }) })
    }),
    directoryWrite('member-add', 'team: add a member', {
      method: 'POST',
      headers: { ...owner, ...jsonapi },
      setupRequest: (request: any) => {
        // teams 6000 … 10499 have no members in the dataset: every (team, user) pair is new
        const n = nextMember++
        return { ...request, path: `/api/v2/teams/team-${6000 + n % 4500}/relationships/users`, body: JSON.stringify({ data: [{ type: 'users', id: `user${Math.floor(n / 4500) % 2000}` }] }) }
      }
    }),
    directoryWrite('token-create', "token: create (regenerate a team's token)", {
      method: 'POST',
      headers: owner,
      // 200 teams in turn (not the one the 401 measure uses): each request creates one token and revokes the one before it
      setupRequest: (request: any) => ({ ...request, path: `/api/v2/teams/team-${6000 + nextToken++ % 200}/authentication-token` })
    }),
    {
      // DESIGN §14.1: a workspace made through the API in the default project, then deleted (its event each), beside one INSERT + one DELETE
      key: 'workspace-create-delete',
      name: 'workspace: create + delete cycle',
      compare: { with: 'floor:insertDelete', label: 'insert + delete floor' },
      cycle: true,
      options: {
        requests: [
          {
            method: 'POST',
            path: '/api/v2/organizations/bench/workspaces',
            headers: { ...owner, ...jsonapi },
            setupRequest: (request: any) => ({ ...request, body: JSON.stringify({ data: { type: 'workspaces', attributes: { name: `made-ws-${nextWorkspace++}` } } }) }),
            onResponse: (_status: number, body: string, context: any) => { context.id = JSON.parse(body).data?.id }
          },
          { method: 'DELETE', headers: owner, setupRequest: (request: any, context: any) => ({ ...request, path: `/api/v2/workspaces/${context.id}` }) }
        ] as any
      }
    },
    ...(audit ? [{ key: 'audit-read', name: 'audit trail: read page 1 (100 events)', options: { path: `${AUDIT_TRAIL}?page%5Bsize%5D=100`, headers: owner } }] : [])
  ]
}

export const floors: Record<FloorKey, Scenario> = {
  read: { key: 'floor:read', name: 'floor: one primary-key SELECT', options: { path: '/floor/read/tws-h-5000' } },
  update: (() => {
    let next = 0
    return { key: 'floor:update', name: 'floor: one primary-key UPDATE (the write floor)', options: { requests: [{ method: 'POST', setupRequest: (request: any) => ({ ...request, path: `/floor/update/tws-s${next++ % 200}-0` }) }] as any } }
  })(),
  insertDelete: { key: 'floor:insertDelete', name: 'floor: one INSERT + one DELETE', options: { method: 'POST', path: '/floor/write' } },
  showBound: { key: 'floor:showBound', name: 'bound: the least show of §4 (token still usable, the row, its names, the document; no visibility rule)', compare: { with: 'floor:read', label: 'one-row floor' }, options: { path: '/floor/show-bound/tws-h-5000', headers: owner } },
  showMemberBound: { key: 'floor:showMemberBound', name: 'bound: the least show of §4 by a member (the least show, the token\'s user\'s memberships, a row of theirs on the workspace; no flags, no project rows)', compare: { with: 'floor:read', label: 'one-row floor' }, options: { path: '/floor/show-member-bound/tws-s0-7', headers: member } },
  page: { key: 'floor:page', name: 'floor: naive page 50 of 100 at 10,000 rows (OFFSET + count)', options: { path: '/floor/page/ws-huge/50' } }
}
