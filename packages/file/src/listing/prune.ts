// `enforceMax`: pruning the oldest root sessions, chosen from the index.

import type { IndexEntryJson } from '../format/records.js';
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
  // The roots in listing order: O(log n + roots), chosen before any is deleted.
  const victims: IndexEntryJson[] = [];
  let kept = 0;
  for (const l of index.listable.roots()) {
    if (kept < max) kept++;
    else victims.push(l.entry);
  }
  let deleted = 0;
  for (const entry of victims) if (await removeSession(ctx, entry.id, entry)) deleted++;
  return deleted;
}
