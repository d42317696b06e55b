// delete(): a tombstone version (so a racing writer loses, as against any other write),
// then the children promoted by core's rule, the router rows dropped and the generation's
// objects removed. A session whose head cannot be read is wiped outright.
import { isSessionKitError } from '@sessionkit/core';
import { promotedChild } from '@sessionkit/core/adapter';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { headKey, shardOf } from './keys.js';
import { childrenIn } from './listing.js';
import type { State } from './records.js';
import { dropRoutesTo } from './router.js';
import { readCurrent } from './session-log.js';
import { changeSession, marked, removeGeneration } from './writes.js';

/**
 * Deletes `id` with DESIGN's semantics. Throws `not_found` (missing or already deleted),
 * `unavailable`. A session whose data is unreadable is still deleted.
 */
export async function deleteSession(ctx: StoreContext, id: string): Promise<void> {
  let current: Awaited<ReturnType<typeof readCurrent>>;
  try {
    current = await readCurrent(ctx.io, id);
  } catch (e) {
    if (!isSessionKitError(e, 'corrupt')) throw e;
    return wipeUnreadable(ctx, id);
  }
  if (current === undefined || current.tombstone) throw errors.notFound(id);
  const deleted = await changeSession(ctx, id, (cur) => ({
    next: { state: cur.state, tombstone: true },
    result: (written) => ({ gen: written.gen, state: written.state }),
  }));
  await promoteChildren(ctx, id, deleted.state);
  await dropRoutesTo(ctx, id);
  await removeGeneration(ctx, id, deleted.gen);
}

/** Re-parents the children of a deleted session (core's `promotedChild`). */
async function promoteChildren(ctx: StoreContext, id: string, gone: State): Promise<void> {
  const entries = await ctx.index.readAll();
  for (const childId of childrenIn(entries, id)) {
    try {
      await changeSession(ctx, childId, (cur) => {
        if (cur.state.header.parentId !== id) return { result: () => undefined };
        const promoted = promotedChild(
          { header: cur.state.header, lineage: cur.state.lineage },
          { header: gone.header, lineage: gone.lineage },
        );
        return {
          next: { state: { ...cur.state, header: promoted.header, lineage: promoted.lineage } },
          result: () => undefined,
        };
      });
    } catch (e) {
      // A child deleted meanwhile, or unreadable, is left as it is (repair reports it).
      if (!isSessionKitError(e, 'not_found') && !isSessionKitError(e, 'corrupt')) throw e;
    }
  }
}

/** Removes every object of a session whose head is unreadable, and its index entry. */
async function wipeUnreadable(ctx: StoreContext, id: string): Promise<void> {
  await marked(ctx, id, async () => {
    const doing = `deleting unreadable session "${id}"`;
    const keys = await ctx.io.list(`s/${id}/`, doing);
    await ctx.io.deleteMany(
      keys.map((k) => k.key).filter((k) => k !== headKey(id)),
      doing,
    );
    await ctx.io.delete(headKey(id), doing);
    await ctx.index.updateShard(shardOf(id, ctx.index.shards), (entries) => entries.delete(id));
    await dropRoutesTo(ctx, id);
  });
}
