// A session's `search.txt` (format 4: deflate chunks, see `format/search-codec.ts`) of
// "A" + the lower-cased text of each message (core's `searchTextOf`): derived data written
// without fsync and rebuilt by `repair()`.

import { constants, fstatSync, openSync, readFileSync, statSync } from 'node:fs';
import { searchTextOf, tempPathFor } from '@sessionkit/core/adapter';
import {
  decodeSearchFile,
  encodeCutChunk,
  encodeSearchFile,
  encodeStoredChunk,
  isChunkedSearch,
  mergeNewestChunks,
  SEARCH_MAGIC,
  storedTailBytes,
} from '../format/search-codec.js';
import { closeQuietly, writeAll } from '../io/fs-helpers.js';
import { replaceFileNoSync } from '../io/sync-fd.js';
import { readFullSession } from '../session/full-read.js';
import type { StoreContext } from '../store/context.js';
import { dropSearchMerge, installSearchMerge, startSearchMerge } from './search-merge.js';

/** Replaces the session's search file with the text of `messages` (one chunk). */
export async function writeSearchFile(
  ctx: StoreContext,
  id: string,
  messages: unknown[],
): Promise<void> {
  replaceSearchText(ctx, id, searchTextOf(messages));
}

/** Replaces the session's search file with `text` (one chunk). */
function replaceSearchText(ctx: StoreContext, id: string, text: string): void {
  // Derived data (rebuilt by repair), so no fsync: a crash may only make search stale.
  const path = ctx.sessionPaths(id).search;
  dropSearchMerge(ctx, id);
  ctx.keptFiles.drop(path);
  // A small text is stored as it is (no compressor set up for a create); its first merge
  // compresses it.
  const stored = Buffer.byteLength(text) < MERGE_FROM_BYTES;
  const file = encodeSearchFile(text, stored);
  replaceFileNoSync(path, tempPathFor(path), file);
  noteStoredTail(ctx, path, stored ? file.length - SEARCH_MAGIC.length : 0);
  ctx.searchStale.delete(id);
}

/** The search text stored for the session (`''` when it has no search file). */
export function readSearchText(ctx: StoreContext, id: string): string {
  try {
    return decodeSearchFile(readFileSync(ctx.sessionPaths(id).search)).text;
  } catch (e) {
    if ((e as { code?: unknown }).code === 'ENOENT') return '';
    throw e;
  }
}

/**
 * A merge leaves every compressed chunk alone and compresses only the stored run that
 * ends the file: commits append stored chunks only, so each compressed chunk came from a
 * merge or a rewrite and holds at least `MERGE_FROM_BYTES` of text (or a whole history).
 * Merging one again would cost its whole decompression and compression at every merge,
 * which grows with the history (measured: with Brotli's small chunks this made a long
 * session's commits spend half their time merging).
 */
const KEEP_CHUNK_BYTES = 1;

/**
 * Stored (uncompressed) chunks that end a search file are merged into one compressed chunk
 * only once they hold at least this many bytes: a turn is always appended stored (no
 * compressor on the commit path: setting one up costs more than the rest of a commit's
 * search work), and a merge rewrites the file (temp file and rename), which for a small
 * file would come every few turns. A fold merges whatever is stored.
 */
export const MERGE_FROM_BYTES = 64 * 1024;
/**
 * ...and once they are a quarter of the rest of the file: uncompressed text stays under a
 * fifth of a large file, and a merge rewrites the file only after it has grown by a
 * fifth, so each byte of it is copied by merges a bounded number of times, however long
 * the session.
 */
const MERGE_SHARE = 4;

/**
 * Merges the search chunks appended since the last merge into one (a fold calls it, so a
 * folded session's search text is compressed however little was appended). The caller
 * holds the session lock. Best-effort: derived data; a damaged file is left for
 * `repair()`.
 */
export function compactSearchFile(ctx: StoreContext, id: string): void {
  dropSearchMerge(ctx, id);
  if (!ctx.searchStale.has(id)) mergeSearchTail(ctx, ctx.sessionPaths(id).search);
}

/** `mergeNewestChunks` of the file at `path`, put in its place (best-effort). */
function mergeSearchTail(ctx: StoreContext, path: string): void {
  try {
    const merged = mergeNewestChunks(readFileSync(path), KEEP_CHUNK_BYTES);
    if (!merged) return;
    ctx.keptFiles.drop(path);
    replaceFileNoSync(path, tempPathFor(path), merged);
    noteStoredTail(ctx, path, 0);
  } catch {
    // left as it is; repair() rewrites it
  }
}

/**
 * Appends the text of `messages` as one stored chunk to the search file, through a kept
 * descriptor while the file at its path is still that inode (it is replaced, never
 * rewritten in place, by rewrites and merges), then merges the stored chunks that end the
 * file once they are large enough (`MERGE_FROM_BYTES`, `MERGE_SHARE`): compressed in the
 * thread pool and put in place by the session's next append (see `search-merge.ts`),
 * which first puts a merge that is ready in place. `dropped`: the
 * messages a truncation dropped from the end of the history before them, whose text a
 * cut chunk first removes (their `searchTextOf` is exactly the end of the stored text).
 * A format-3 file (plain text) is first rewritten as chunks. Synchronous.
 */
export function appendSearchFile(
  ctx: StoreContext,
  id: string,
  messages: unknown[],
  dropped: unknown[] = [],
): void {
  const text = searchTextOf(messages);
  const cut = dropped.length > 0 ? searchTextOf(dropped).length : 0;
  if (!text && cut === 0) return;
  const path = ctx.sessionPaths(id).search;
  installMergeQuietly(ctx, id, path);
  const st = knownSearchEnd(ctx, id, path) ?? statEnd(path);
  const size = st?.size ?? 0;
  let ino = st?.ino ?? 0;
  let tail = size > 0 ? storedTailOf(ctx, path, ino) : 0;
  if (tail === undefined) {
    // Format 3: the plain text; the whole file becomes one chunk with the turn's text.
    const old = decodeSearchFile(readFileSync(path)).text;
    replaceSearchText(ctx, id, old.slice(0, Math.max(0, old.length - cut)) + text);
    return;
  }
  let fd = st ? ctx.keptFiles.take(path, ino) : undefined;
  if (fd === undefined) {
    // An existing file is the one just stat'ed: only this lock's holder replaces it.
    fd = openSync(path, st ? constants.O_WRONLY | constants.O_APPEND : 'a', 0o600);
    if (!st) ino = Number(fstatSync(fd).ino);
  }
  // A new or empty file starts with the magic; each chunk holds whole messages' text,
  // each starting with core's separator, so the chunks' texts concatenate to
  // `searchTextOf` of the whole history.
  const appended = text ? encodeStoredChunk(text) : undefined;
  const cutChunk = cut > 0 ? encodeCutChunk(cut) : undefined;
  const chunk =
    cutChunk && appended ? Buffer.concat([cutChunk, appended]) : (cutChunk ?? appended!);
  const bytes = size > 0 ? chunk : Buffer.concat([SEARCH_MAGIC, chunk]);
  try {
    writeAll(fd, bytes);
  } catch (e) {
    closeQuietly(fd);
    throw e;
  }
  ctx.keepFile(path, fd, ino);
  noteSearchEnd(ctx, id, path, ino, size + bytes.length);
  // A damaged file stays marked (`-Infinity`): never merged until `repair()`.
  tail += chunk.length;
  const rest = size + chunk.length - tail;
  noteStoredTail(ctx, path, tail, ino);
  if (tail >= MERGE_FROM_BYTES && tail * MERGE_SHARE >= rest) {
    try {
      startSearchMerge(ctx, id, path, ino, KEEP_CHUNK_BYTES);
    } catch {
      // left unmerged: the next append finds the merge due again
    }
  }
}

/** The inode and size of the file at `path`, or `undefined` when there is none. */
function statEnd(path: string): { ino: number; size: number } | undefined {
  const st = statSync(path, { throwIfNoEntry: false });
  return st && { ino: Number(st.ino), size: st.size };
}

/**
 * The inode and size this store's last append left the search file at `path` with, while
 * they are certainly current: the lock has been held without a break since (no other store
 * or process can have written the session) and the descriptor of that append is still
 * kept (every rewrite of the file in this store, and a delete, closes it first). Spares
 * an append its `stat`. `undefined` otherwise.
 */
function knownSearchEnd(
  ctx: StoreContext,
  id: string,
  path: string,
): { ino: number; size: number } | undefined {
  const end = ctx.searchEnds.get(path);
  const epoch = ctx.leases.epochOf(id);
  if (end === undefined || epoch === undefined || end.epoch !== epoch) return undefined;
  return ctx.keptFiles.isPinned(path, end.ino) ? end : undefined;
}

/** Remembers where an append under session `id`'s lock left the search file (see above). */
function noteSearchEnd(ctx: StoreContext, id: string, path: string, ino: number, size: number) {
  const epoch = ctx.leases.epochOf(id);
  if (epoch === undefined) {
    ctx.searchEnds.delete(path);
    return;
  }
  if (ctx.searchEnds.size >= 65_536) ctx.searchEnds.clear();
  ctx.searchEnds.set(path, { ino, size, epoch });
}

/**
 * Puts the session's merge that is ready in place (best-effort: a failure leaves the file
 * as it was, or merged, both valid) and notes the stored tail it leaves.
 */
function installMergeQuietly(ctx: StoreContext, id: string, path: string): void {
  try {
    const tail = installSearchMerge(ctx, id, path);
    if (tail !== undefined) noteStoredTail(ctx, path, tail);
  } catch {
    // the file is the old one or the merged one, either valid; repair() rewrites it if not
  }
}

/**
 * Bytes of the stored chunks that end the search file at `path` (inode `ino`), known
 * from this store's last append or merge of that inode, or else read from the file once;
 * `undefined` for a format-3 file. A file with damaged bytes gets `-Infinity`: it is
 * never merged (a merge would leave it as it is) until `repair()` rewrites it.
 */
function storedTailOf(ctx: StoreContext, path: string, ino: number): number | undefined {
  const known = ctx.searchTails.get(tailKey(path, ino));
  if (known !== undefined) return known;
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch {
    return 0; // gone meanwhile: the append fails, and the commit marks search stale
  }
  if (!isChunkedSearch(buf)) return undefined;
  return storedTailBytes(buf) ?? Number.NEGATIVE_INFINITY;
}

/** The key of a search file (path and inode) in `ctx.searchTails`. */
const tailKey = (path: string, ino: number) => `${path}\u0000${ino}`;

/** Remembers the stored tail of the search file at `path` (inode `ino`, else its current one). */
function noteStoredTail(ctx: StoreContext, path: string, bytes: number, ino?: number): void {
  const current = ino ?? statSync(path, { throwIfNoEntry: false })?.ino;
  if (current === undefined) return;
  if (ctx.searchTails.size >= 65_536) ctx.searchTails.clear();
  ctx.searchTails.set(tailKey(path, Number(current)), bytes);
}

/**
 * Rewrites the search file of a session whose last search append failed, from the full
 * transcript (best-effort: on failure it stays marked; `repair()` rewrites it too).
 * The caller holds the session lock.
 */
export async function rewriteStaleSearchFile(ctx: StoreContext, id: string): Promise<void> {
  try {
    const full = await readFullSession(ctx, id);
    await writeSearchFile(ctx, id, full.messages);
  } catch {
    // still marked
  }
}
