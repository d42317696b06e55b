// Replacing `index.log` with a rewritten one (compaction, repair) under `.index.lock`,
// carrying over the records appenders wrote to the old file meanwhile.

import { constants, readFileSync } from 'node:fs';
import { withFileLock } from '@sessionkit/core/adapter';
import { parseFrames } from '../format/frame.js';
import type { IndexMeta } from '../format/records.js';
import { isEnoent } from '../io/fs-helpers.js';
import { type Fd, openFd } from '../io/sync-fd.js';
import type { StoreContext } from '../store/context.js';

/** Builds the new index from the current file's bytes and inode; `undefined`: keep it. */
export type IndexBuilder = (buf: Buffer, ino: number) => Buffer | undefined;

/** The session a record is about. */
const recordId = (r: IndexMeta): string => (r.op === 'put' ? r.entry.id : r.id);

/**
 * Replaces `index.log` with `build(current content)` under the index lock (no-op when
 * `build` returns undefined), waiting at most `timeoutMs` for the lock.
 */
export async function replaceIndex(
  ctx: StoreContext,
  build: IndexBuilder,
  timeoutMs = ctx.lockOptions.timeoutMs,
): Promise<void> {
  await withFileLock(ctx.paths.indexLock, () => replaceIndexLocked(ctx, build), {
    ...ctx.lockOptions,
    timeoutMs,
  });
}

/**
 * `replaceIndex`'s work; the caller holds the index lock. Appenders do not take that
 * lock, so records they append to the old file after it was read are carried over: each
 * under its session's lock, and only when the new file holds no later record of that
 * session (its writer may already have appended again itself).
 */
export async function replaceIndexLocked(ctx: StoreContext, build: IndexBuilder): Promise<void> {
  let old: Fd | undefined;
  let buf = Buffer.alloc(0);
  let ino = 0;
  try {
    old = openFd(ctx.paths.index, 'r');
  } catch (e) {
    if (!isEnoent(e)) throw e;
  }
  const wasRewriting = ctx.rewritingIndex;
  ctx.rewritingIndex = true;
  try {
    if (old) {
      const st = await old.stat();
      ino = Number(st.ino);
      buf = Buffer.alloc(st.size);
      await old.read(buf, 0, st.size, 0);
    }
    const content = build(buf, ino);
    if (!content) return;
    await ctx.writeAtomic(ctx.paths.index, content);
    ctx.keptFiles.drop(ctx.paths.index);
    ctx.indexCompactedSize = content.length;
    if (old) await carryLateRecords(ctx, old, buf.length, content.length);
  } finally {
    ctx.rewritingIndex = wasRewriting;
    await old?.close();
  }
}

/**
 * Appends to the new index the records written to the `old` file after its first
 * `readBytes` were read, each under its session's lock unless none of them is newer in
 * the new file (past its first `writtenBytes`).
 */
async function carryLateRecords(
  ctx: StoreContext,
  old: Fd,
  readBytes: number,
  writtenBytes: number,
): Promise<void> {
  const size = (await old.stat()).size;
  if (size <= readBytes) return;
  const late = Buffer.alloc(size - readBytes);
  await old.read(late, 0, late.length, readBytes);
  for (const f of parseFrames<IndexMeta>(late).frames) {
    const id = recordId(f.meta);
    const carry = async () => {
      const now = readFileSync(ctx.paths.index);
      const newer = parseFrames<IndexMeta>(now, writtenBytes).frames.some(
        (g) => recordId(g.meta) === id,
      );
      if (!newer) {
        const out = openFd(ctx.paths.index, constants.O_WRONLY | constants.O_APPEND);
        try {
          await out.write(late.subarray(f.start, f.end));
        } finally {
          await out.close();
        }
      }
    };
    // The session's lock itself (not `withSessionLock`, whose index check would import
    // this file back): the carried record is the session's own, nothing else to check.
    if (ctx.lockedSessions.has(id)) await carry();
    else await ctx.leases.run(id, carry, false);
  }
}
