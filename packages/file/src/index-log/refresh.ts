// The index as listing reads it: `index.log` brought up to date, sessions being written
// read from their tips, and the index rebuilt when it is missing, damaged or abandoned.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isSessionKitError, isValidId } from '@sessionkit/core';
import { isLockHolderGone } from '@sessionkit/core/adapter';
import { entryOf } from '../format/records.js';
import { readSessionTip } from '../session/tip.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';
import { readIndexTail } from './read.js';
import { rebuildIndex } from './rebuild.js';
import { type IndexState, listableOf } from './state.js';

/** The file name of the index lock in `locks/` (see `storePaths`). */
const INDEX_LOCK_NAME = '.index.lock';

/**
 * Brings the in-memory index up to date by reading only what was appended since, and
 * returns it with sessions whose lock file exists read from their tips. Rebuilds the
 * index (once) when it is missing or damaged, or its lock was abandoned.
 */
export async function refreshIndex(ctx: StoreContext, rebuilt = false): Promise<IndexState> {
  const lockNames = readdirSync(ctx.paths.locks);
  if (!rebuilt && lockNames.includes(INDEX_LOCK_NAME) && indexLockAbandoned(ctx)) {
    // A process died while rewriting the index: records appended to the old file after
    // it was read may not have been carried over. Rebuild (this breaks the dead lock).
    await rebuildIndex(ctx);
    return refreshIndex(ctx, true);
  }
  const outcome = readIndexTail(ctx);
  if (outcome !== 'missing' && outcome !== 'damaged') {
    // A session whose lock file names no live process may have been written by a writer
    // killed after its data was durable but before its index entry was: read its tip. A
    // live holder (this store's leases included) appends the entry before each write
    // resolves and before it releases the lock, so its entry is trusted.
    const pending = new Set<string>();
    for (const name of lockNames) {
      const m = /^(.+)\.lock$/.exec(name);
      if (!m || !isValidId(m[1]) || ctx.leases.holds(m[1]!)) continue;
      const path = join(ctx.paths.locks, name);
      if (!ctx.lockJudge.heldByLiveProcess(path, ctx.lockOptions.staleMs)) pending.add(m[1]!);
    }
    if (pending.size > 0) return withPendingWritesRead(ctx, outcome, pending);
    return outcome;
  }
  if (rebuilt) {
    throw errors.make(
      'corrupt',
      `the index ${ctx.paths.index} is ${outcome} right after a rebuild — run repair()`,
    );
  }
  // The index is a cache. Opening the store creates it, so a missing one was deleted; a
  // damaged record (a disk error, or an append cut short by a kill with appends after
  // it) is not worth keeping either: rebuild it from the sessions.
  await rebuildIndex(ctx);
  return refreshIndex(ctx, true);
}

/**
 * True when `locks/.index.lock` names a holder that certainly died (core's
 * `isLockHolderGone`: this host, this pid namespace, process gone) while compacting or
 * rebuilding the index. A lock that cannot be judged that way (empty, unreadable, of
 * another host or namespace, or without a namespace) is left to its age, like any lock.
 */
function indexLockAbandoned(ctx: StoreContext): boolean {
  let content: string;
  try {
    content = readFileSync(ctx.paths.indexLock, 'utf8');
  } catch {
    return false;
  }
  return isLockHolderGone(content);
}

/**
 * A view of the index where sessions with a possibly unfinished write (their lock file
 * exists: a write in flight, or a writer killed after its data was durable but before
 * its index entry was) are read from their tips. Reads snapshot metas and last-record
 * metas, never message bodies.
 */
async function withPendingWritesRead(
  ctx: StoreContext,
  state: IndexState,
  pending: Set<string>,
): Promise<IndexState> {
  const view: IndexState = {
    ...state,
    entries: new Map(state.entries),
    listable: state.listable.copy(),
  };
  for (const id of pending) {
    try {
      const tip = await readSessionTip(ctx, id, 'reader');
      const entry = entryOf(tip.header, tip.messageCount);
      view.entries.set(id, entry);
      view.listable.set(id, listableOf(entry));
    } catch (e) {
      if (!isSessionKitError(e, 'not_found') && !isSessionKitError(e, 'corrupt')) throw e;
      view.entries.delete(id);
      view.listable.delete(id);
    }
  }
  return view;
}
