/**
 * The floors: bare Fastify routes on a pool built exactly as the service builds its own
 * (src/db/connect.ts: the same pg settings, every statement a named prepared statement). No
 * logger, no auth, no validation, no admission queue: what the database work of an operation
 * costs through Fastify, and nothing else.
 *
 * - GET  /floor/read/:id            one primary-key SELECT of a team-workspace row (the one-row floor)
 * - POST /floor/update/:id          one UPDATE of one team-workspace row by primary key, RETURNING it
 *                                   (the write floor: what a PATCH of one row costs at the least)
 * - POST /floor/write               one INSERT and one DELETE of a row of a bare table (the insert + delete floor)
 * - GET  /floor/page/:workspace/:n  page n of 100 of a workspace's rows by the naive statement
 *                                   `… WHERE workspace_id = $1 ORDER BY created_at, id LIMIT 100 OFFSET $2`,
 *                                   then a count(*) of the workspace's rows (with the workspace's and
 *                                   organization's names, which the links need), built into the very
 *                                   JSON:API document the service answers — the service's serializer
 *                                   (toResource, paged) and response schema — so that the page ratio
 *                                   compares like with like, serialization included.
 * - GET  /floor/show-bound/:id      the least any show of DESIGN §4 can do, as a bound on the show's
 *                                   ratio: the bearer token's digest, then one statement that reads the
 *                                   row with its workspace's and organization's names (the links need
 *                                   them) while the token is still usable (§9.6: a revocation counts from
 *                                   the next request), answered as the service's JSON:API document
 *                                   (toResource, its response schema). It applies no visibility rule at
 *                                   all (§3: the caller's teams, rows and project rows), so a show that
 *                                   keeps the contract costs at least this.
 * - GET  /floor/show-member-bound/:id the least a member's show can do (DESIGN §3, §9.6): the least
 *                                   show, and, at the request, the token's user's team memberships and
 *                                   a row of one of those teams on the row's workspace, probed by key,
 *                                   the row's team seen when visible to the organization or one of
 *                                   them. It reads no team's flags and no project rows, which the
 *                                   contract asks too: a member's show costs at least this.
 */
import Fastify from 'fastify'
import { sql } from 'kysely'
import { randomUUID } from 'node:crypto'
import { TeamWorkspaceDocument, TeamWorkspaceListDocument } from '../schemas/team-workspaces.js'
import { connect } from '../src/db/connect.js'
import { paged, single } from '../src/jsonapi/document.js'
import { tokenDigest } from '../src/auth/token-digest.js'
import { ROW_COLUMNS } from '../src/team-workspaces/team-workspaces-lists.js'
import { toResource } from '../src/team-workspaces/team-workspaces-serialize.js'
import type { TeamWorkspaceView } from '../src/team-workspaces/team-workspaces-repository.js'
import { table } from '../src/db/tables.js'

const PREFIX = '/api/v2'
const PAGE_SIZE = 100

const url = process.env.DATABASE_URL
if (!url) throw new Error('DATABASE_URL is required')
const { db } = await connect({ url })
await sql`create table if not exists bench_floor (id text primary key, payload text not null)`.execute(db)

const app = Fastify()
app.get('/floor/read/:id', async (request) => {
  const { id } = request.params as { id: string }
  return await db.selectFrom('team_workspaces').select(['id', 'access', 'runs']).where('id', '=', id).executeTakeFirst()
})
app.post('/floor/update/:id', async (request) => {
  const { id } = request.params as { id: string }
  return await db.updateTable('team_workspaces').set({ runs: sql`${'plan'}::text` }).where('id', '=', id)
    .returning(['id', 'access', 'runs']).executeTakeFirst()
})
app.post('/floor/write', async () => {
  const id = randomUUID()
  await sql`insert into bench_floor (id, payload) values (${id}, 'x')`.execute(db)
  await sql`delete from bench_floor where id = ${id}`.execute(db)
  return { id }
})
app.get('/floor/page/:workspace/:number', { schema: { response: { 200: TeamWorkspaceListDocument } } }, async (request, reply) => {
  const { workspace, number } = request.params as { workspace: string, number: string }
  const page = { number: Number(number), size: PAGE_SIZE }
  const rows = await db.selectFrom('team_workspaces').select(ROW_COLUMNS).where('workspace_id', '=', workspace)
    .orderBy('created_at').orderBy('id').limit(page.size).offset((page.number - 1) * page.size).execute()
  const { rows: [about] } = await sql<{ workspace_name: string, organization_name: string, total: string }>`
    select w.name as workspace_name, o.name as organization_name,
      (select count(*) from ${table.team_workspaces} where workspace_id = ${workspace}) as total
    from ${table.workspaces} w join ${table.organizations} o on o.id = w.organization_id where w.id = ${workspace}`.execute(db)
  if (about === undefined) throw Object.assign(new Error('no such workspace'), { statusCode: 404 })
  const data = rows.map((row) => toResource({ ...row, workspace_name: about.workspace_name, organization_name: about.organization_name }, PREFIX))
  return await reply.type('application/vnd.api+json').send(paged(data, page, Number(about.total), {
    origin: `${request.protocol}://${request.headers.host ?? '127.0.0.1'}`,
    path: `${PREFIX}/team-workspaces`,
    params: { 'filter[workspace][id]': workspace }
  }))
})
// built and compiled once, replayed with each request's values (as the service replays its shapes)
// the names read as the service's show reads them (a lateral probe of the workspace, a subquery for
// the organization's name): as plain joins, the generic plan hashed every workspace to join one
const leastShow = (member: boolean) => db.selectFrom('team_workspaces as tw')
  .innerJoinLateral((eb) => eb.selectFrom('workspaces as w').select('w.name').where(sql<boolean>`w.id = tw.workspace_id`).modifyEnd(sql`limit 1`).as('w'), (join) => join.onTrue())
  .select(ROW_COLUMNS.map((c) => `tw.${c}` as const))
  .select(['w.name as workspace_name', sql<string>`(select o.name from ${table.organizations} o where o.id = tw.organization_id)`.as('organization_name')])
  .where('tw.id', '=', '$id')
  .where(({ exists, selectFrom }) => exists(selectFrom('tokens as tk').select(sql`1`.as('one'))
    .where('tk.digest', '=', '$digest').where(sql<boolean>`(tk.expires_at is null or tk.expires_at > now())`)
    .$if(member, (qb) => qb.where(sql<boolean>`exists (select 1 from ${table.team_memberships} m join ${table.team_workspaces} a
        on a.team_id = m.team_id and a.workspace_id = tw.workspace_id where m.user_id = tk.user_id)`)
      .where(sql<boolean>`(tw.team_visibility = 'organization'
        or exists (select 1 from ${table.team_memberships} m where m.user_id = tk.user_id and m.team_id = tw.team_id))`))))
  .compile()
const bounds = { '/floor/show-bound/:id': leastShow(false), '/floor/show-member-bound/:id': leastShow(true) }
for (const [path, bound] of Object.entries(bounds)) {
  if (bound.parameters.join() !== '$id,$digest') throw new Error(`the bound's parameters are ${bound.parameters.join()}`)
  app.get(path, { schema: { response: { 200: TeamWorkspaceDocument } } }, async (request, reply) => {
    const { id } = request.params as { id: string }
    const digest = tokenDigest((request.headers.authorization ?? '').replace(/^Bearer /, ''))
    const [row] = (await db.executeQuery<TeamWorkspaceView>({ ...bound, parameters: [id, digest] })).rows
    if (row === undefined) throw Object.assign(new Error('no such row'), { statusCode: 404 })
    return await reply.type('application/vnd.api+json').send(single(toResource(row, PREFIX)))
  })
}
await app.listen({ port: Number(process.env.PORT ?? 3101), host: '127.0.0.1' })
process.once('SIGTERM', () => { void app.close().then(() => process.exit(0)) })
