/**
 * The floor: a bare Fastify route doing one primary-key SELECT, and one doing one INSERT and one
 * DELETE, on a pool built exactly as the service builds its own (src/db/connect.ts). No logger,
 * no auth, no JSON:API: what one indexed query on this PostgreSQL costs through Fastify.
 */
import Fastify from 'fastify'
import { sql } from 'kysely'
import { randomUUID } from 'node:crypto'
import { connect } from '../src/db/connect.js'

const url = process.env.DATABASE_URL
if (!url) throw new Error('DATABASE_URL is required')
const { db } = await connect({ url })
await sql`create table if not exists bench_floor (id text primary key, payload text not null)`.execute(db)

const app = Fastify()
app.get('/floor/read/:id', async (request) => {
  const { id } = request.params as { id: string }
  return await db.selectFrom('team_workspaces').select(['id', 'access', 'runs']).where('id', '=', id).executeTakeFirst()
})
app.post('/floor/write', async () => {
  const id = randomUUID()
  await sql`insert into bench_floor (id, payload) values (${id}, 'x')`.execute(db)
  await sql`delete from bench_floor where id = ${id}`.execute(db)
  return { id }
})
await app.listen({ port: Number(process.env.PORT ?? 3101), host: '127.0.0.1' })
process.once('SIGTERM', () => { void app.close().then(() => process.exit(0)) })
