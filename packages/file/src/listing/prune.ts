// `enforceMax`: pruning the oldest root sessions, chosen from the index.

import { compareListOrder } from '@sessionkit/core/adapter';
import { refreshIndex } from '../index-log/refresh.js';
import { removeSession } from '../session/delete.js';
import type { StoreContext } from '../store/context.js';

/**
 * Deletes the root sessions after the newest `max` (listing order, archived included)
 * and returns how many. Each candidate is re-checked under its lock (`removeSession`):
 * one written, re-parented or deleted since the index was read is skipped.
 */
export async function pruneRoots(ctx: StoreContext, max: number): Promise<number> {
  const index = await refreshIndex(ctx);
  const roots = [...index.entries.values()].filter((e) => e.parentId === undefined);
  roots.sort((a, b) => compareListOrder(a, b, false));
  let deleted = 0;
  for (const entry of roots.slice(max)) if (await removeSession(ctx, entry.id, entry)) deleted++;
  return deleted;
}
