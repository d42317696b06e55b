// Search merges off the commit path. When a commit's append makes the stored chunks that
// end a search file due for a merge, the text they hold is compressed in libuv's thread
// pool instead of on the event loop (Brotli takes milliseconds for the 64 KiB a merge
// starts at, several turns' worth of a commit's own work), and the session's next commit
// of this store puts the merged file in place under its lock, before its own append.
// Derived data: a merge that is dropped (the store closed, another writer took the lock
// meanwhile, the file changed) leaves the file valid, with its stored tail, and the next
// append that finds the merge due starts one again.

import { readFileSync, statSync } from 'node:fs';
import { tempPathFor } from '@sessionkit/core/adapter';
import { encodeSearchChunkInPool, mergedFile, planNewestMerge } from '../format/search-codec.js';
import { replaceFileNoSync } from '../io/sync-fd.js';
import type { StoreContext } from '../store/context.js';

/** Merges a store keeps waiting at most (each holds one compressed chunk). */
const PENDING_MERGES_KEPT = 4096;

/** A merge planned by one commit, put in place by the session's next one. */
export interface PendingSearchMerge {
  path: string;
  ino: number;
  /** The file's length when it was planned: the bytes after it were appended since. */
  size: number;
  /** Bytes at the file's start the merge keeps byte for byte. */
  keep: number;
  /** The unbroken holding of the session's lock it was planned under (see `epochOf`). */
  epoch: number;
  /** The merged chunk once compressed (`''`: the merge drops the text, a cut of all). */
  chunk: Buffer | '' | undefined;
  /** Settles once the compression has ended, either way (never rejects). */
  settled: Promise<void>;
}

/**
 * Plans the merge of the newest chunks of the search file at `path` (inode `ino`, just
 * appended to under session `id`'s lock) and starts compressing them in the thread pool;
 * nothing when one is waiting for the session already, or the lock is not a write's.
 * Throws what reading the file throws (the caller's merge is best-effort).
 */
export function startSearchMerge(
  ctx: StoreContext,
  id: string,
  path: string,
  ino: number,
  keepBytes: number,
): void {
  const epoch = ctx.leases.epochOf(id);
  if (ctx.searchMerges.has(id) || epoch === undefined) return;
  const buf = readFileSync(path);
  const plan = planNewestMerge(buf, keepBytes);
  if (!plan) return;
  if (ctx.searchMerges.size >= PENDING_MERGES_KEPT) ctx.searchMerges.clear();
  const merge: PendingSearchMerge = {
    path,
    ino,
    size: buf.length,
    keep: plan.keep,
    epoch,
    chunk: undefined,
    settled: Promise.resolve(),
  };
  const compressed = plan.text ? encodeSearchChunkInPool(plan.text) : Promise.resolve('' as const);
  merge.settled = compressed.then(
    (chunk) => {
      merge.chunk = chunk;
    },
    () => {
      if (ctx.searchMerges.get(id) === merge) ctx.searchMerges.delete(id);
    },
  );
  ctx.searchMerges.set(id, merge);
}

/**
 * The compression of the merge waiting for session `id`, while it runs: a write of the
 * session awaits it before appending to the search file, so the stored tail never grows
 * past one merge's worth. `undefined` when none runs.
 */
export function searchMergeRunning(ctx: StoreContext, id: string): Promise<void> | undefined {
  const merge = ctx.searchMerges.get(id);
  return merge && merge.chunk === undefined ? merge.settled : undefined;
}

/**
 * Puts the compressed merge waiting for session `id` in place of its search file at
 * `path` (temp file and rename, as every search rewrite), keeping what was appended after
 * it was planned, and returns the bytes of stored chunks that end the new file. Only while
 * the lock has been held without a break since it was planned and the file is the same
 * inode, at least as long (appends only add to it; a rewrite replaces it): else the merge
 * is dropped. `undefined` when nothing was put in place. The caller holds the lock.
 * Throws what reading or replacing the file throws; the merge is dropped either way.
 */
export function installSearchMerge(
  ctx: StoreContext,
  id: string,
  path: string,
): number | undefined {
  const merge = ctx.searchMerges.get(id);
  if (merge?.chunk === undefined) return undefined;
  ctx.searchMerges.delete(id);
  if (merge.path !== path || ctx.leases.epochOf(id) !== merge.epoch) return undefined;
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st || Number(st.ino) !== merge.ino || st.size < merge.size) return undefined;
  const current = readFileSync(path);
  if (current.length < merge.size) return undefined;
  const after = current.subarray(merge.size);
  ctx.keptFiles.drop(path);
  replaceFileNoSync(
    path,
    tempPathFor(path),
    mergedFile(current.subarray(0, merge.keep), merge.chunk, after),
  );
  return after.length;
}

/** Forgets the merge waiting for session `id` (its search file is being rewritten). */
export function dropSearchMerge(ctx: StoreContext, id: string): void {
  ctx.searchMerges.delete(id);
}

/** Waits for every compression in flight and forgets the merges (the store closes). */
export async function settleSearchMerges(ctx: StoreContext): Promise<void> {
  await Promise.all([...ctx.searchMerges.values()].map((m) => m.settled));
  ctx.searchMerges.clear();
}
