// A session's children, derived from the index (they are not stored in the session).

import type { StoreContext } from '../store/context.js';
import { readIndexTail } from './read.js';
import { refreshIndex } from './refresh.js';

/**
 * The children of `id` per the index, ascending (O(log n + their number)). Unlike `list`,
 * it does not re-read the tips of sessions being written (a reparent in flight shows once
 * its write completes).
 */
export async function childrenOf(ctx: StoreContext, id: string): Promise<string[]> {
  const tail = readIndexTail(ctx);
  const index = typeof tail === 'string' ? await refreshIndex(ctx) : tail;
  return index.listable.children(id);
}
