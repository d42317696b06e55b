// The lock a store-level write takes on its session: the session lock, then the index
// compaction that write may have made due.

import { compactIndexIfDue } from '../index-log/compaction.js';
import { withSessionLock } from '../session/lock.js';
import type { StoreContext } from './context.js';

/**
 * Runs `fn` under the session's lock (`withSessionLock`; `keepLease` for commits, whose
 * next one then finds the lock already held), then compacts the index when an
 * append made it due and no other session lock of this store is held. For the outermost
 * lock of a call; locks taken inside another (a branch's child, a delete's children, the
 * index rewrite's carry-over) use `withSessionLock`, where a compaction could never run.
 */
export async function lockForWrite<T>(
  ctx: StoreContext,
  id: string,
  fn: () => Promise<T>,
  keepLease = false,
): Promise<T> {
  const result = await withSessionLock(ctx, id, fn, keepLease);
  await compactIndexIfDue(ctx);
  return result;
}
