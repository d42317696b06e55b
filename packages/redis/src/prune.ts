// enforceMax(): the newest `max` roots (as `list` orders them, archived included) stay; the
// kit's `pruneVictims` picks the others, deleted with delete's full semantics. Victims are
// chosen from one walk of the index, read from the sessions' own keys, before anything is
// deleted, so children promoted by this pass are never selected.
import { pruneVictims, throwIfAborted } from '@sessionkit/core/adapter';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { walkHealed } from './list.js';
import { removeSession } from './tree.js';

/**
 * Deletes every root after the newest `max`; returns how many were deleted. Not one atomic
 * step across sessions: each victim is deleted whole, one by one. `aborted` only before
 * the first deletion (after it, the pass finishes).
 */
export async function pruneRoots(
  ctx: StoreContext,
  max: number,
  signal?: AbortSignal,
): Promise<number> {
  const rows = await walkHealed(ctx, {
    opts: { includeArchived: true, oldestFirst: false, limit: 1, offset: 0 },
    want: Number.POSITIVE_INFINITY,
  });
  const roots = rows
    .filter((r) => r.header.parentId === undefined)
    .map((r) => ({ id: r.header.id, updatedAt: r.header.updatedAt }));
  const victims = pruneVictims(roots, max);
  throwIfAborted(errors, signal, 'enforceMax');
  let deleted = 0;
  for (const victim of victims) if (await removeSession(ctx, victim.id)) deleted++;
  return deleted;
}
