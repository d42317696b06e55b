// A session's children, derived from the index (they are not stored in the session).

import { compareIds } from '@sessionkit/core/adapter';
import type { StoreContext } from '../store/context.js';
import { readIndexTail } from './read.js';
import { refreshIndex } from './refresh.js';
import type { IndexState } from './state.js';

/**
 * The children of `id` per the index. Unlike `list`, it does not re-read the tips of
 * sessions being written (a reparent in flight shows once its write completes).
 */
export async function childrenOf(ctx: StoreContext, id: string): Promise<string[]> {
  const tail = readIndexTail(ctx);
  const index = typeof tail === 'string' ? await refreshIndex(ctx) : tail;
  return [...(childrenMap(index).get(id) ?? [])];
}

/** Every parent's children in id order, computed once per index state. */
export function childrenMap(index: IndexState): Map<string, string[]> {
  if (index.children) return index.children;
  const map = new Map<string, string[]>();
  for (const e of index.entries.values()) {
    if (e.parentId === undefined) continue;
    const list = map.get(e.parentId);
    if (list) list.push(e.id);
    else map.set(e.parentId, [e.id]);
  }
  for (const list of map.values()) list.sort(compareIds);
  index.children = map;
  return map;
}
