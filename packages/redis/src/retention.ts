// enforceMax(): the newest `max` roots (as `list` orders them, archived included) stay; the
// other roots are deleted with delete's full semantics. Victims are chosen from one walk
// of the index, read from the sessions' own keys, before anything is deleted, so children
// promoted by this pass are never selected.
import type { StoreContext } from './context.js';
import { walkHealed } from './listing.js';
import type { StateCache } from './state-cache.js';
import { removeSession } from './tree.js';

/** Deletes every root after the newest `max`; returns how many were deleted. */
export async function pruneRoots(
  ctx: StoreContext,
  cache: StateCache,
  max: number,
): Promise<number> {
  const rows = await walkHealed(ctx, {
    opts: { includeArchived: true, oldestFirst: false, limit: 1, offset: 0 },
    want: Number.POSITIVE_INFINITY,
  });
  const roots = rows.filter((r) => r.header.parentId === undefined);
  let deleted = 0;
  for (const victim of roots.slice(max)) {
    if (await removeSession(ctx, cache, victim.header.id)) deleted++;
  }
  return deleted;
}
