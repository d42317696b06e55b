// Reading `index.log` incrementally: only what was appended since the last read, the
// whole file again once it was replaced.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { PREFIX_BYTES, scanFrames } from '../format/frame.js';
import type { IndexEntryJson, IndexMeta } from '../format/records.js';
import { isEnoent } from '../io/fs-helpers.js';
import type { StoreContext } from '../store/context.js';
import {
  applyEntryRecord,
  applyIndexRecord,
  buildListable,
  emptyIndex,
  type IndexState,
} from './state.js';

/**
 * Applies what was appended to `index.log` since the last call to the cached state
 * (`ctx.index`), in one synchronous step (so concurrent calls never apply a tail twice).
 * Re-reads the whole file when it was replaced (compaction, repair): another inode, a
 * smaller size, or another first frame prefix (every rewritten index starts with a random
 * `gen` record, so a new file that got the old inode number is told apart).
 */
export function readIndexTail(ctx: StoreContext): IndexState | 'missing' | 'damaged' {
  let fd: number;
  try {
    fd = openSync(ctx.paths.index, 'r');
  } catch (e) {
    if (isEnoent(e)) return 'missing';
    throw e;
  }
  try {
    const st = fstatSync(fd);
    const ino = Number(st.ino);
    let state = ctx.index;
    let same = state.ino === ino && st.size >= state.size;
    if (same && state.size > 0) {
      const first = Buffer.alloc(PREFIX_BYTES);
      const n = readSync(fd, first, 0, PREFIX_BYTES, 0);
      same =
        state.firstPrefix !== undefined && n === PREFIX_BYTES && first.equals(state.firstPrefix);
    }
    if (!same) {
      state = emptyIndex();
      state.ino = ino;
    }
    if (st.size > state.size && applyAppended(fd, state, st.size) === 'damaged') return 'damaged';
    ctx.index = state;
    return state;
  } finally {
    closeSync(fd);
  }
}

/** Reads `[state.size, size)` of the index and applies its records to `state`. */
function applyAppended(fd: number, state: IndexState, size: number): 'damaged' | undefined {
  // Unfilled: only the `done` bytes read are looked at.
  const buf = Buffer.allocUnsafe(size - state.size);
  let done = 0;
  while (done < buf.length) {
    const n = readSync(fd, buf, done, buf.length - done, state.size + done);
    if (n === 0) break;
    done += n;
  }
  // Records are applied as they are parsed (no array of 100,000 frames first), into a new
  // map or a list of tail records, and put into `state` only once the whole read parsed:
  // a damaged index leaves the cached state as it was.
  const fresh = state.size === 0;
  const entries = new Map<string, IndexEntryJson>();
  const tail: IndexMeta[] = [];
  const parsed = scanFrames<IndexMeta>(
    buf.subarray(0, done),
    0,
    true,
    fresh ? (r) => applyEntryRecord(entries, r) : (r) => tail.push(r),
  );
  if (parsed.corrupt) return 'damaged';
  if (fresh && parsed.validEnd >= PREFIX_BYTES) {
    state.firstPrefix = Buffer.from(buf.subarray(0, PREFIX_BYTES));
  }
  if (fresh) {
    state.entries = entries;
    buildListable(state);
  } else for (const r of tail) applyIndexRecord(state, r);
  state.size += parsed.validEnd;
  return undefined;
}
