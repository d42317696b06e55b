// `enforceMax`: pruning the oldest root sessions, chosen from the index by the kit's
// `pruneVictims`.

import { pruneVictims } from '@sessionkit/core/adapter';
import { refreshIndex } from '../index-log/refresh.js';
import { removeSession } from '../session/delete.js';
import type { StoreContext } from '../store/context.js';

/**
 * Deletes the root sessions after the newest `max` (listing order, archived included)
 * and returns how many. Each candidate is re-checked under its lock (`removeSession`):
 * one written, re-parented or deleted since the index was read is skipped. Cost: the
 * index's roots ranked once, then one delete per victim; no transcript is read.
 */
export async function pruneRoots(ctx: StoreContext, max: number): Promise<number> {
  const index = await refreshIndex(ctx);
  // Chosen before any is deleted.
  const roots = [...index.listable.roots()].map((l) => l.entry);
  let deleted = 0;
  for (const entry of pruneVictims(roots, max)) {
    if (await removeSession(ctx, entry.id, entry)) deleted++;
  }
  return deleted;
}
