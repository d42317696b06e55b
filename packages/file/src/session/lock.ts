// The session lock (`locks/<id>.lock`, held as a lease across consecutive writes: see
// `lease.ts`), the promise every write keeps before it ends (the index entry matches the
// session's tip), and the index compaction a store-level write may have made due.

import { isDeepStrictEqual } from 'node:util';
import { isSessionKitError } from '@sessionkit/core';
import { entryOf, type IndexEntryJson } from '../format/records.js';
import { appendIndexRecords, delRecord, putRecord } from '../index-log/append.js';
import { compactIndexIfDue } from '../index-log/compaction.js';
import { readIndexTail } from '../index-log/read.js';
import type { StoreContext } from '../store/context.js';
import { readSessionTip } from './tip.js';

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

/**
 * Runs `fn` under the session's lock file (`ctx.leases`; with `keepLease`, a lease this
 * call takes is kept for the next write). Before it ends, when `fn` appended no index
 * record for the session (a runtime status, an event, a branch of it, a write that
 * failed), makes sure the index entry matches the session's tip: a writer killed after
 * its data was durable but before its index record leaves its lock file behind, naming a
 * dead process, which is what makes listing read the tip, so whoever takes that lock
 * must first append the missing entry. Does not compact the index (see `lockForWrite`).
 * `outer`: the sessions whose locks the caller holds already (see `LeaseTable.run`).
 */
export async function withSessionLock<T>(
  ctx: StoreContext,
  id: string,
  fn: () => Promise<T>,
  keepLease = false,
  outer: readonly string[] = [],
): Promise<T> {
  return ctx.leases.run(
    id,
    async () => {
      ctx.lockedSessions.add(id);
      ctx.indexedUnderLock.delete(id);
      try {
        return await fn();
      } finally {
        try {
          if (!ctx.indexedUnderLock.has(id)) await syncIndexEntry(ctx, id);
        } catch {
          // best-effort: the lock file is still ours until we return, listing stays right
          // for as long as it exists, and `repair()` fixes any entry left stale
        }
        ctx.indexedUnderLock.delete(id);
        ctx.lockedSessions.delete(id);
      }
    },
    keepLease,
    outer,
  );
}

/**
 * Appends the session's tip to the index when the index entry differs from it (or a
 * `del` when the session is gone). The caller holds the session's lock, so the tip is
 * the truth and the record lands in write order. Reads metas only.
 */
async function syncIndexEntry(ctx: StoreContext, id: string): Promise<void> {
  const state = readIndexTail(ctx);
  if (typeof state === 'string') return; // missing or damaged: the next reader rebuilds it
  let entry: IndexEntryJson | undefined;
  try {
    const tip = await readSessionTip(ctx, id, 'reader');
    entry = entryOf(tip.header, tip.messageCount);
  } catch (e) {
    if (isSessionKitError(e, 'corrupt')) return; // left as is: repair() reports it
    if (!isSessionKitError(e, 'not_found')) throw e;
  }
  const current = state.entries.get(id);
  if (entry === undefined) {
    if (current) await appendIndexRecords(ctx, [delRecord(id)], id);
    return;
  }
  if (current && isDeepStrictEqual(jsonCopy(current), jsonCopy(entry))) return;
  await appendIndexRecords(ctx, [putRecord(entry)], id);
}

/** `value` as JSON would store it (no `undefined` members), for comparisons. */
function jsonCopy(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}
