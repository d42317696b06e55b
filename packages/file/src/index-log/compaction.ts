// Compaction: rewriting `index.log` with one entry per live session once it has grown past
// twice its size after the last compaction plus `indexSlackBytes`.

import { parseFrames } from '../format/frame.js';
import type { IndexMeta } from '../format/records.js';
import type { StoreContext } from '../store/context.js';
import { replaceIndex } from './rewrite.js';
import { applyIndexRecord, emptyIndex, serializeIndex } from './state.js';

/** Rewrites `index.log` with one entry per live session. */
export async function compactIndex(ctx: StoreContext): Promise<void> {
  // timeoutMs 0: a busy index lock means another store is rewriting it right now.
  await replaceIndex(
    ctx,
    (buf) => {
      const parsed = parseFrames<IndexMeta>(buf);
      if (parsed.corrupt) return undefined; // the next reader rebuilds it from the sessions
      const state = emptyIndex();
      for (const f of parsed.frames) applyIndexRecord(state, f.meta);
      return serializeIndex(state.entries);
    },
    0,
  );
}

/**
 * Compacts the index when an append found it due and this store holds no session lock
 * and is not rewriting the index itself. Best-effort: the index is a cache and its
 * compaction an optimisation, so a failure (e.g. `.index.lock` busy in another process)
 * never fails the durable write before it; it is retried after a later write.
 */
export async function compactIndexIfDue(ctx: StoreContext): Promise<void> {
  if (!ctx.indexCompactionDue || ctx.lockedSessions.size > 0 || ctx.rewritingIndex) return;
  ctx.indexCompactionDue = false;
  try {
    await compactIndex(ctx);
  } catch {
    ctx.indexCompactionDue = true;
  }
}
