// Appending records to `index.log`: one `O_APPEND` write under the session's lock, with no
// store-wide lock.

import { constants, fstatSync, openSync, type Stats, statSync } from 'node:fs';
import { encodeFrame } from '../format/frame.js';
import type { IndexEntryJson, IndexMeta } from '../format/records.js';
import { FORMAT_VERSION } from '../format/version.js';
import { closeQuietly, isEnoent, writeAll } from '../io/fs-helpers.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';

/**
 * How often an append is repeated because a compaction or repair renamed a new index over
 * the file it wrote to.
 */
const INDEX_APPEND_ATTEMPTS = 50;

/** The index record that says session `entry.id` now has this entry (see `entryOf`). */
export function putRecord(entry: IndexEntryJson): IndexMeta {
  return { v: FORMAT_VERSION, op: 'put', entry };
}

/** The index record that says session `id` is gone. */
export function delRecord(id: string): IndexMeta {
  return { v: FORMAT_VERSION, op: 'del', id };
}

/**
 * Appends records (or their encoded frames) to `index.log` without a store-wide lock: one
 * `O_APPEND` write, which the kernel never interleaves with another. The caller holds the
 * session's lock, so a session's records land in write order. If the file was replaced
 * meanwhile (compaction or repair renamed a new one over it), the record went to the old
 * file: append again. Marks the session as indexed under the lock held now, and the index
 * as due for compaction once it has grown past its threshold.
 */
export async function appendIndexRecords(
  ctx: StoreContext,
  records: IndexMeta[] | Buffer,
  id: string,
): Promise<void> {
  const bytes = Buffer.isBuffer(records)
    ? records
    : Buffer.concat(records.map((r) => encodeFrame(r)));
  const path = ctx.paths.index;
  for (let attempt = 0; attempt < INDEX_APPEND_ATTEMPTS; attempt++) {
    const opened = openIndexForAppend(ctx, path);
    if (!opened) {
      // No O_CREAT: a deleted index is rebuilt from the sessions by the next reader, which
      // then includes this write, so there is nothing to append to.
      ctx.indexedUnderLock.add(id);
      return;
    }
    const { fd, ino } = opened;
    let current: Stats | undefined;
    try {
      writeAll(fd, bytes);
      current = statSync(path, { throwIfNoEntry: false });
    } catch (e) {
      closeQuietly(fd);
      throw e;
    }
    // Still the file at the path after the write: the record is in the live index (a
    // compaction that replaces it later carries late records over).
    if (current && Number(current.ino) === ino) {
      ctx.indexedUnderLock.add(id);
      ctx.keepFile(path, fd, ino);
      if (current.size > ctx.indexCompactedSize * 2 + ctx.options.indexSlackBytes)
        ctx.indexCompactionDue = true;
      return;
    }
    closeQuietly(fd);
    if (!current) {
      ctx.indexedUnderLock.add(id);
      return;
    }
  }
  throw errors.unavailable(`the index ${ctx.paths.index} kept being replaced`);
}

/** The descriptor kept from the last append, or a new one; `undefined` when no index exists. */
function openIndexForAppend(
  ctx: StoreContext,
  path: string,
): { fd: number; ino: number } | undefined {
  const keptIno = ctx.keptFiles.inoOf(path);
  const kept = keptIno !== undefined ? ctx.keptFiles.take(path, keptIno) : undefined;
  if (kept !== undefined && keptIno !== undefined) return { fd: kept, ino: keptIno };
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_APPEND);
  } catch (e) {
    if (isEnoent(e)) return undefined;
    throw e;
  }
  return { fd, ino: Number(fstatSync(fd).ino) };
}
