// A session's `search.txt` (format 4: compressed chunks, see `format/search-codec.ts`) of
// "A" + the lower-cased text of each message (core's `searchTextOf`): derived data written
// without fsync and rebuilt by `repair()`.

import { constants, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { searchTextOf, tempPathFor } from '@sessionkit/core/adapter';
import {
  decodeSearchFile,
  encodeSearchChunk,
  encodeSearchFile,
  isChunkedSearch,
  mergeNewestChunks,
  SEARCH_MAGIC,
} from '../format/search-codec.js';
import { closeQuietly, writeAll } from '../io/fs-helpers.js';
import { replaceFileNoSync } from '../io/sync-fd.js';
import { readFullSession } from '../session/full-read.js';
import type { StoreContext } from '../store/context.js';

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
  ctx.keptFiles.drop(path);
  replaceFileNoSync(path, tempPathFor(path), encodeSearchFile(text));
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
 * A chunk of this many compressed bytes (about 100 KiB of text) is left as it is by a
 * fold's compaction: merging it again would cost its whole inflate and deflate once per
 * fold for no fewer bytes, as deflate looks back only 32 KiB.
 */
const KEEP_CHUNK_BYTES = 32 * 1024;

/**
 * Merges the search chunks appended since the last fold into one (a fold calls it: a
 * turn's text compresses far worse alone than with its neighbours). It runs on the commit
 * path, about once per doubling of the session, and costs what was appended since the
 * fold before, not the whole history: older merged chunks are copied as they are. The
 * caller holds the session lock. Best-effort: derived data; a damaged file is left for
 * `repair()`.
 */
export function compactSearchFile(ctx: StoreContext, id: string): void {
  if (ctx.searchStale.has(id)) return;
  try {
    const path = ctx.sessionPaths(id).search;
    const merged = mergeNewestChunks(readFileSync(path), KEEP_CHUNK_BYTES);
    if (!merged) return;
    ctx.keptFiles.drop(path);
    replaceFileNoSync(path, tempPathFor(path), merged);
  } catch {
    // left as it is; repair() rewrites it
  }
}

/**
 * Appends the text of `messages` as one compressed chunk to the search file, through a
 * kept descriptor while the file at its path is still that inode (it is replaced, never
 * rewritten in place, by `writeSearchFile`). A format-3 file (plain text) is first
 * rewritten as format 4. Synchronous: it runs while the commit's fdatasync does.
 */
export function appendSearchFile(ctx: StoreContext, id: string, messages: unknown[]): void {
  const text = searchTextOf(messages);
  if (!text) return;
  const path = ctx.sessionPaths(id).search;
  const st = statSync(path, { throwIfNoEntry: false });
  if (st && st.size > 0 && !startsChunked(ctx, path, Number(st.ino))) {
    // Format 3: the plain text; the whole file becomes one chunk with the turn's text.
    replaceSearchText(ctx, id, decodeSearchFile(readFileSync(path)).text + text);
    return;
  }
  let fd = st ? ctx.keptFiles.take(path, Number(st.ino)) : undefined;
  let ino = st ? Number(st.ino) : 0;
  if (fd === undefined) {
    fd = openSync(path, st ? constants.O_WRONLY | constants.O_APPEND : 'a', 0o600);
    ino = Number(fstatSync(fd).ino);
  }
  try {
    // A new or empty file starts with the magic; each chunk holds whole messages' text,
    // each starting with core's separator, so the chunks' texts concatenate to
    // `searchTextOf` of the whole history.
    const chunk = encodeSearchChunk(text, true);
    writeAll(fd, st && st.size > 0 ? chunk : Buffer.concat([SEARCH_MAGIC, chunk]));
  } catch (e) {
    closeQuietly(fd);
    throw e;
  }
  ctx.keepFile(path, fd, ino);
  ctx.chunkedSearch.add(`${path}\u0000${ino}`);
}

/** Whether the search file at `path` (inode `ino`) is format 4 (remembered per inode). */
function startsChunked(ctx: StoreContext, path: string, ino: number): boolean {
  const key = `${path}\u0000${ino}`;
  if (ctx.chunkedSearch.has(key)) return true;
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return true; // gone meanwhile: the append creates a new one
  }
  try {
    const head = Buffer.alloc(SEARCH_MAGIC.length);
    const n = readSync(fd, head, 0, head.length, 0);
    const chunked = isChunkedSearch(head.subarray(0, n));
    if (chunked) {
      if (ctx.chunkedSearch.size >= 65_536) ctx.chunkedSearch.clear();
      ctx.chunkedSearch.add(key);
    }
    return chunked;
  } finally {
    closeQuietly(fd);
  }
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
