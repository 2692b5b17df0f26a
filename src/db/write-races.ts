/**
 * An insert that found its team or workspace gone once the delete it waited for committed: the
 * foreign key finds no row (23503), or the team's visibility, which a trigger copies onto a
 * team-access row (migration 0005), is null (23502). The write had nothing to add to: the
 * answer is the 404 of a missing id, never a 500.
 */
export function isGoneWhileWaiting (err: unknown): boolean {
  const e = err as { code?: unknown, column?: unknown, message?: unknown } | null
  if (e?.code === '23503') return true
  return e?.code === '23502' && (e.column === 'team_visibility' || (typeof e.message === 'string' && e.message.includes('"team_visibility"')))
}
