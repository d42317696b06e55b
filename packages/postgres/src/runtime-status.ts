// The runtime status: one JSON text per session in its own table, never touching the
// transcript or the revision.
import type { JsonValue } from '@sessionkit/core';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { parseJson } from './rows.js';

/** Upserts the status JSON `text` (checked by core's `runtimeStatusText`). Throws `not_found`. */
export async function saveStatus(ctx: StoreContext, id: string, text: string): Promise<void> {
  const r = await ctx.db.query(ctx.statements.events.saveStatus, [id, text], {
    doing: 'saveRuntimeStatus',
    notFoundOnFk: id,
  });
  if (r.rowCount !== 1) throw errors.notFound(id);
}

/** The stored status (freshly parsed) or `null`. Throws `not_found`, `corrupt`. */
export async function loadStatus(ctx: StoreContext, id: string): Promise<JsonValue | null> {
  const r = await ctx.db.query(ctx.statements.events.loadStatus, [id], {
    doing: 'loadRuntimeStatus',
  });
  const row = r.rows[0];
  if (!row) throw errors.notFound(id);
  return row.status === null ? null : parseJson(id, row.status, 'runtime status');
}
