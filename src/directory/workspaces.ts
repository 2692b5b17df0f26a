import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { WorkspaceSettings } from '../../schemas/workspaces.js'
import { destroysWorkspace, isAdminOf, isMemberOf, readsWorkspace } from '../access/predicates.js'
import { createsWorkspaceIn, movesWorkspace } from '../access/project-predicates.js'
import type { Database } from '../db/database.js'
import { impossibleId, newId } from '../db/ids.js'
import { table } from '../db/tables.js'
import { isGoneWhileWaiting } from '../db/write-races.js'
import { insertedOrRefused, violates } from './errors.js'
import { recordChange, workspaceEventRows } from './events.js'
import { namedOrganization } from './organizations.js'
import { Removals } from './removals.js'
import { grantsOf, managedBy, mayIf, type ChangeSource } from './source.js'

/**
 * Workspaces created, changed and removed (DESIGN §9.1, §11.1, §14.1), whoever asks: one function
 * per change, each with its audit event (`workspace` create/update/destroy, meta the workspace's
 * name, and for a move `project`: `<from> -> <to>`). An API caller's permission is decided in the
 * change's statement: create — owners, manage-workspaces, a project row with workspace-access
 * create (`createsWorkspaceIn`); a rename, description or settings — workspace admins (`isAdminOf`);
 * a move — owners, manage-projects, or workspace-access move on both projects (`movesWorkspace`);
 * delete — `destroysWorkspace`. The seed and the host are trusted. The rules every source meets: a
 * name is unique in its organization, and a workspace's project is one of its organization's. The
 * API writes only what the API manages (§9.1, §14.1): a seed's or the host's workspace refuses it.
 * Creating grants nobody anything.
 */

/**
 * Why a change changed nothing: `hidden` (404), `project` (no such project there: 404 for the API),
 * `seed`, `host`, `mirror` (another source manages it: 422), `taken` (the name).
 */
export type WorkspaceRefusal = 'hidden' | 'project' | 'seed' | 'host' | 'mirror' | 'taken'
export type WorkspaceResult<T> = { workspace: T } | { refusal: WorkspaceRefusal, id?: string }

/** What the statement answers of the workspace, over a CTE of workspace rows. */
export type WorkspaceAnswer = (workspace: string) => RawBuilder<unknown>

/** Every column of a workspace row, as the host's answer. */
export const WORKSPACE_ROW: WorkspaceAnswer = (workspace) => sql`${sql.table(workspace)}.*`

/** A workspace by id, or by its organization's name and its own (the API's by-name routes). */
export type WorkspaceKey = { id: string } | { organization: string, name: string }

/** A workspace's values a change names; an absent one is kept (on create: its default). */
export interface WorkspaceValues {
  name?: string
  description?: string | null
  /** Each one given replaces its value, null puts back the default; `vcs-repo` is merged key by key. */
  settings?: WorkspaceSettings
  /** Its project: on create, absent is the organization's default project; on a change, a move. */
  projectId?: string
  /** Tag names added to and removed from `tag-names` (go-tfe's AddTags, RemoveTags), on what is kept at that moment. */
  tags?: { add?: string[], remove?: string[] }
}

/** What keeps a workspace's name unique in its organization. */
const WORKSPACE_NAME = 'workspaces_organization_name_key'

/**
 * A settings change as a statement applies it: the keys that go (sent null; `operations` when
 * `execution-mode` is sent and the other way round — they say one thing), the values set, and the
 * `vcs-repo` keys merged into the one kept.
 */
export function settingsChange (settings: WorkspaceSettings = {}): { drop: string[], set: Record<string, unknown>, vcs: Record<string, unknown> | undefined } {
  const drop: string[] = []
  const set: Record<string, unknown> = {}
  let vcs: Record<string, unknown> | undefined
  for (const [key, value] of Object.entries(settings) as Array<[string, unknown]>) {
    if (value === undefined) continue
    if (value === null) drop.push(key)
    else if (key === 'vcs-repo') vcs = value as Record<string, unknown>
    else set[key] = value
  }
  if ('execution-mode' in set) drop.push('operations')
  if ('operations' in set) drop.push('execution-mode')
  return { drop, set, vcs }
}

/**
 * The workspace's tag names (over `c`, the row as it is) with `add` appended and `remove` taken out,
 * each name once, in the order first given: decided in the statement, so concurrent changes add up.
 */
const retagged = ({ add = [], remove = [] }: { add?: string[], remove?: string[] }): RawBuilder<unknown> => sql`(
  select coalesce(jsonb_agg(t.name order by t.at), '[]'::jsonb) from (
    select distinct on (u.name) u.name, u.at from (
      select e.name, e.at from jsonb_array_elements_text(coalesce(c.settings -> 'tag-names', '[]'::jsonb)) with ordinality e(name, at)
      union all
      select a.name, 1000000 + a.at from unnest(${add}::text[]) with ordinality a(name, at)
    ) u where u.name <> all(${remove}::text[]) order by u.name, u.at) t)`

const whereKey = (key: WorkspaceKey): RawBuilder<unknown> => 'id' in key
  ? sql`where w.id = ${key.id}::text`
  : sql`where w.name = ${key.name}::text and w.organization_id = (select o.id from ${table.organizations} o where o.name = ${key.organization}::text)`

const impossibleKey = (key: WorkspaceKey): boolean => 'id' in key ? impossibleId(key.id) : impossibleId(key.organization) || impossibleId(key.name)

/** The API's refusal of a workspace another source manages (that source), in SQL over `w`; null when there is none. */
const managedElsewhere = (source: ChangeSource, w: string): RawBuilder<unknown> => source.by === 'api'
  ? sql`case when ${sql.ref(`${w}.managed_by`)} <> 'api' then ${sql.ref(`${w}.managed_by`)} end`
  : sql`null::text`

/**
 * Creates a workspace in the organization named (the API) or given by id (the host), in the
 * project named or the organization's default project, with its `create` event, managed by the
 * source, its settings as given. Refused `hidden`: no such organization or project there, or an
 * API caller who may not create in that project; `taken`: the name is.
 */
export async function createWorkspace<T> (db: Kysely<Database>, source: ChangeSource, organization: { name: string } | { id: string },
  workspace: WorkspaceValues & { name: string, id?: string | undefined }, answer: WorkspaceAnswer): Promise<WorkspaceResult<T>> {
  if (workspace.projectId !== undefined && impossibleId(workspace.projectId)) return { refusal: 'hidden' }
  const { set, vcs } = settingsChange(workspace.settings)
  const settings = { ...set, ...(vcs === undefined ? {} : { 'vcs-repo': vcs }) }
  const project = workspace.projectId === undefined ? sql`p.is_default` : sql`p.id = ${workspace.projectId}::text`
  const query = sql<T>`with ${grantsOf(db, source)}
    ${namedOrganization(organization, mayIf(source, isMemberOf('o.id')))},
    target as (select p.id, p.organization_id from ${table.projects} p join org on org.id = p.organization_id
      where ${project} and ${mayIf(source, createsWorkspaceIn('p.id', 'p.organization_id'))}),
    inserted as (insert into ${table.workspaces} (id, organization_id, name, project_id, description, settings, managed_by)
      select ${workspace.id ?? newId('ws')}::text, t.organization_id, ${workspace.name}::text, t.id, ${workspace.description ?? null}::text,
        ${JSON.stringify(settings)}::jsonb, ${managedBy(source)}::text
      from target t returning *),
    events as (${workspaceEventRows('inserted')}),
    audit as (${recordChange(db, 'events', 'workspace', 'create', source)})
    select ${answer('inserted')} from inserted`
  const created = await insertedOrRefused(async () => (await query.execute(db)).rows[0], WORKSPACE_NAME)
  return 'row' in created ? { workspace: created.row } : created
}

/**
 * Changes a workspace in one statement: the workspace is locked (for an API caller, one it reads),
 * its name, description and settings merged, its project changed when another is named — written
 * (with its `update` event) only when a value differs: a change that changes nothing answers the
 * workspace as it is. An API caller must be a workspace admin for anything but a move, and may move
 * only as `movesWorkspace` says. Refused `hidden`: no such workspace, or an API caller who may not;
 * `project`: no such project in the workspace's organization; `seed`, `host`: an API change of a
 * workspace another source manages; `taken`: the name is.
 */
export async function changeWorkspace<T> (db: Kysely<Database>, source: ChangeSource, key: WorkspaceKey, changes: WorkspaceValues, answer: WorkspaceAnswer): Promise<WorkspaceResult<T>> {
  if (impossibleKey(key)) return { refusal: 'hidden' }
  if (changes.projectId !== undefined && impossibleId(changes.projectId)) return { refusal: 'project' }
  const { drop, set, vcs } = settingsChange(changes.settings)
  const settings = sql`(c.settings - ${drop}::text[]) || ${JSON.stringify(set)}::jsonb`
  const withVcs = vcs === undefined
    ? settings
    : sql`jsonb_set(${settings}, '{vcs-repo}', coalesce(nullif(c.settings -> 'vcs-repo', 'null'::jsonb), '{}'::jsonb) || ${JSON.stringify(vcs)}::jsonb)`
  const merged = changes.tags === undefined ? withVcs : sql`jsonb_set(${withVcs}, '{tag-names}', ${retagged(changes.tags)})`
  const moving = changes.projectId !== undefined
  const query = sql<T & { id: string, refusal: WorkspaceRefusal | null }>`with ${grantsOf(db, source)}
    current as (select w.* from ${table.workspaces} w ${whereKey(key)} and ${mayIf(source, readsWorkspace('w.id', 'w.organization_id', 'w.project_id', 'one'))} for update of w),
    target as (select p.id from ${table.projects} p join current c on c.organization_id = p.organization_id where p.id = ${changes.projectId ?? null}::text),
    merged as (select c.id, coalesce(${changes.name ?? null}::text, c.name) as name,
        case when ${changes.description !== undefined}::boolean then ${changes.description ?? null}::text else c.description end as description,
        ${merged} as settings, coalesce((select t.id from target t), c.project_id) as project_id
      from current c),
    verdict as (select case
          when (m.name <> c.name or m.description is distinct from c.description or m.settings <> c.settings or m.project_id = c.project_id)
            and not ${mayIf(source, isAdminOf('c.id', 'c.organization_id', 'c.project_id', 'one'))} then 'hidden'
          when ${moving}::boolean and not exists (select 1 from target) then 'project'
          when m.project_id <> c.project_id and not ${mayIf(source, movesWorkspace('c.project_id', 'm.project_id', 'c.organization_id'))} then 'hidden'
          else ${managedElsewhere(source, 'c')}
        end as refusal,
        (m.name <> c.name or m.description is distinct from c.description or m.settings <> c.settings or m.project_id <> c.project_id) as differs
      from current c join merged m on m.id = c.id),
    updated as (update ${table.workspaces} w set name = m.name, description = m.description, settings = m.settings, project_id = m.project_id
      from merged m, verdict v where w.id = m.id and v.refusal is null and v.differs returning w.*),
    events as (${workspaceEventRows('updated', 'current')}),
    audit as (${recordChange(db, 'events', 'workspace', 'update', source)})
    select ${answer('updated')}, null::text as refusal from updated
    union all
    select ${answer('current')}, v.refusal from current, verdict v where not exists (select 1 from updated)`
  try {
    const row = (await query.execute(db)).rows[0]
    if (row === undefined) return { refusal: 'hidden' }
    if (row.refusal !== null) return { refusal: row.refusal, id: row.id }
    const { refusal: _, ...workspace } = row
    return { workspace: workspace as T }
  } catch (err) {
    if (violates(err, WORKSPACE_NAME)) return { refusal: 'taken' }
    // the project named went while the move waited for it
    if (isGoneWhileWaiting(err)) return { refusal: 'project' }
    throw err
  }
}

/**
 * Removes a workspace in one transaction: the workspace is locked (for an API caller, as it may
 * delete it: `destroysWorkspace`), then it goes with its team access, each row with its
 * `remove_team` event, and its own `destroy` event (src/directory/removals.ts). Refused `hidden`:
 * no such workspace, or an API caller who may not; `seed`, `host`: an API removal of a workspace
 * another source manages.
 */
export async function removeWorkspace (db: Kysely<Database>, source: ChangeSource, key: WorkspaceKey): Promise<{ refusal?: WorkspaceRefusal, id?: string }> {
  if (impossibleKey(key)) return { refusal: 'hidden' }
  const remove = async (trx: Kysely<Database>): Promise<{ refusal?: WorkspaceRefusal, id?: string }> => {
    const target = (await sql<{ id: string, refusal: WorkspaceRefusal | null }>`with ${grantsOf(trx, source)}
      found as (select w.id, ${managedElsewhere(source, 'w')} as refusal from ${table.workspaces} w ${whereKey(key)}
        and ${mayIf(source, destroysWorkspace('w.id', 'w.organization_id', 'w.project_id', 'one'))} for update of w)
      select id, refusal from found`.execute(trx)).rows[0]
    if (target === undefined) return { refusal: 'hidden' }
    if (target.refusal !== null) return { refusal: target.refusal, id: target.id }
    await new Removals(trx, source).removeWorkspaces([target.id])
    return {}
  }
  return db.isTransaction ? await remove(db) : await db.transaction().execute(remove)
}
