// The runtime status: one JSON text per session in its own table, never touching the
// transcript or the revision.
import type { StoreContext } from './context.js';
import { errors } from './errors.js';

/** Upserts the status JSON `text` (checked by core's `runtimeStatusText`). Throws `not_found`. */
export async function saveStatus(ctx: StoreContext, id: string, text: string): Promise<void> {
  const r = await ctx.db.query(ctx.statements.events.saveStatus, [id, text], {
    doing: 'saveRuntimeStatus',
    notFoundOnFk: id,
  });
  if (r.rowCount !== 1) throw errors.notFound(id);
}

/** The stored status's JSON text or `null` (the base class parses it). Throws `not_found`. */
export async function loadStatus(ctx: StoreContext, id: string): Promise<string | null> {
  const r = await ctx.db.query(ctx.statements.events.loadStatus, [id], {
    doing: 'loadRuntimeStatus',
  });
  const row = r.rows[0];
  if (!row) throw errors.notFound(id);
  return row.status;
}
