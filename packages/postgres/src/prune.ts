// Pruning (`enforceMax`): one call of the server-side `sk_enforce_max`, which selects
// and locks the victims, promotes their children to roots (core's `promotedChild` for a
// deleted root), drops follow pins and deletes the rows (see migrations/004-lineage.ts).
import type { StoreContext } from './context.js';

/** Keeps the newest `max` (> 0) roots and deletes the others; returns how many went. */
export async function pruneRoots(ctx: StoreContext, max: number): Promise<number> {
  const r = await ctx.db.query(ctx.statements.maintenance.enforceMax, [max], {
    doing: 'enforceMax',
  });
  return Number(r.rows[0]?.n ?? 0);
}
