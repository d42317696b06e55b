// A session's `search.txt`: "A" + the lower-cased text of each message (core's
// `searchTextOf`), derived data written without fsync and rebuilt by `repair()`.

import { fstatSync, openSync, statSync } from 'node:fs';
import { searchTextOf, tempPathFor } from '@sessionkit/core/adapter';
import { closeQuietly, writeAll } from '../io/fs-helpers.js';
import { replaceFileNoSync } from '../io/sync-fd.js';
import { readFullSession } from '../session/full-read.js';
import type { StoreContext } from '../store/context.js';

/** Replaces the session's search file with the text of `messages`. */
export async function writeSearchFile(
  ctx: StoreContext,
  id: string,
  messages: unknown[],
): Promise<void> {
  // Derived data (rebuilt by repair), so no fsync: a crash may only make search stale.
  const path = ctx.sessionPaths(id).search;
  ctx.keptFiles.drop(path);
  replaceFileNoSync(path, tempPathFor(path), searchTextOf(messages));
  ctx.searchStale.delete(id);
}

/**
 * Appends the text of `messages` to the search file through a kept descriptor while the
 * file at its path is still that inode (it is replaced, never rewritten in place, by
 * `writeSearchFile`). Synchronous: it runs while the commit's fdatasync does.
 */
export function appendSearchFile(ctx: StoreContext, id: string, messages: unknown[]): void {
  const text = searchTextOf(messages);
  if (!text) return;
  const path = ctx.sessionPaths(id).search;
  const st = statSync(path, { throwIfNoEntry: false });
  let fd = st ? ctx.keptFiles.take(path, Number(st.ino)) : undefined;
  let ino = st ? Number(st.ino) : 0;
  if (fd === undefined) {
    fd = openSync(path, 'a', 0o600);
    ino = Number(fstatSync(fd).ino);
  }
  try {
    // Each message's text starts with core's separator: appending keeps the file equal
    // to `searchTextOf` of the whole history.
    writeAll(fd, Buffer.from(text, 'utf8'));
  } catch (e) {
    closeQuietly(fd);
    throw e;
  }
  ctx.keepFile(path, fd, ino);
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
