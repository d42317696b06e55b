// The tree: branch, clone and merge by the kit's plans, and delete — a tombstone version
// (so a racing writer loses, as against any other write), then the children promoted by
// the kit's rule, the router rows dropped and the generation's objects removed. A session
// whose head cannot be read is wiped outright.
import { isSessionKitError, newSessionId, type Session } from '@sessionkit/core';
import {
  mergeTarget,
  planBranch,
  planClone,
  planCreate,
  planMergeInto,
  planPromotions,
  type readLineage,
  searchTextsOf,
  throwIfAborted,
} from '@sessionkit/core/adapter';
import type { State } from './codec.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { baseChain, readAllMessages, readMessages, retryMissing } from './history.js';
import { headKey, shardOf } from './keys.js';
import { childrenOf } from './list.js';
import { dropRoutesTo } from './router.js';
import { readCurrent, readLive } from './session-log.js';
import { changeSession, createSession, marked, removeGeneration } from './writes.js';

/** create(): `planCreate` (the lineage from the parent when it is stored and readable). */
export async function insertSession(
  ctx: StoreContext,
  session: Session<unknown>,
  signal?: AbortSignal,
): Promise<State> {
  let parentLineage: ReturnType<typeof readLineage> | undefined;
  if (session.parentId !== undefined) {
    // An unreadable parent gives no lineage to inherit, as a missing one does.
    const parent = await readCurrent(ctx.io, session.parentId).catch((e: unknown) => {
      if (isSessionKitError(e, 'corrupt')) return undefined;
      throw e;
    });
    if (parent !== undefined && !parent.tombstone) parentLineage = parent.state.lineage;
  }
  const { state, messages } = planCreate(session, parentLineage);
  return createSession(ctx, state, messages, searchTextsOf(messages), signal);
}

/** branch(): `planBranch` over one version of the parent; its first `atTurn` messages. */
export async function branchSession(
  ctx: StoreContext,
  parentId: string,
  atTurn: number,
  signal?: AbortSignal,
): Promise<{ state: State; messages: unknown[] }> {
  // One state's messages: read again from the head if a fold removed one of its objects.
  const { parent, messages } = await retryMissing(async () => {
    const parent = await readLive(ctx.io, parentId);
    planBranch(errors, parent.state, newSessionId(), atTurn); // refused before any read
    const { gen, state } = parent;
    return { parent, messages: await readMessages(ctx.io, parentId, gen, state.chain, 0, atTurn) };
  });
  const planned = planBranch(errors, parent.state, newSessionId(), atTurn);
  const texts = searchTextsOf(messages);
  return { state: await createSession(ctx, planned, messages, texts, signal, 'branch'), messages };
}

/** clone(): `planClone` over one version of the source, with its whole history. */
export async function cloneSession(
  ctx: StoreContext,
  id: string,
  signal?: AbortSignal,
): Promise<{ state: State; messages: unknown[] }> {
  const { source, messages } = await retryMissing(async () => {
    const source = await readLive(ctx.io, id);
    return { source, messages: await readAllMessages(ctx.io, source) };
  });
  const planned = planClone(source.state, newSessionId());
  const texts = searchTextsOf(messages);
  return { state: await createSession(ctx, planned, messages, texts, signal, 'clone'), messages };
}

/** merge(): `planMergeInto` against the parent's version replaced; the child's messages. */
export async function mergeSession(
  ctx: StoreContext,
  childId: string,
  signal?: AbortSignal,
): Promise<{ state: State; messages: unknown[] }> {
  const { child, messages } = await retryMissing(async () => {
    const child = await readLive(ctx.io, childId);
    mergeTarget(errors, child.state); // refused before any read
    return { child, messages: await readAllMessages(ctx.io, child) };
  });
  const parentId = mergeTarget(errors, child.state);
  const texts = searchTextsOf(messages);
  return changeSession(
    ctx,
    parentId,
    (parent) => {
      const planned = planMergeInto(errors, parent.state, child.state);
      const state: State = { ...planned, chain: baseChain(parent.n + 1, messages.length) };
      return { next: { state, messages, texts }, result: () => ({ state, messages }) };
    },
    signal,
    'merge',
  );
}

/**
 * Deletes `id` with DESIGN's semantics; false when it is missing or already deleted.
 * Throws `unavailable`. A session whose data is unreadable is still deleted.
 */
export async function removeSession(
  ctx: StoreContext,
  id: string,
  signal?: AbortSignal,
): Promise<boolean> {
  let current: Awaited<ReturnType<typeof readCurrent>>;
  try {
    current = await readCurrent(ctx.io, id);
  } catch (e) {
    if (!isSessionKitError(e, 'corrupt')) throw e;
    throwIfAborted(errors, signal, 'delete', id);
    await wipeUnreadable(ctx, id);
    return true;
  }
  if (current === undefined || current.tombstone) return false;
  let deleted: { gen: string; state: State };
  try {
    deleted = await changeSession(
      ctx,
      id,
      (cur) => ({
        next: { state: cur.state, tombstone: true },
        result: (written) => ({ gen: written.gen, state: written.state }),
      }),
      signal,
      'delete',
    );
  } catch (e) {
    if (isSessionKitError(e, 'not_found')) return false;
    throw e;
  }
  // The tombstone landed: the rest of the delete runs whatever the signal says.
  await promoteChildren(ctx, id, deleted.state);
  await dropRoutesTo(ctx, id);
  await removeGeneration(ctx, id, deleted.gen);
  return true;
}

/** Re-parents the children of a deleted session (the kit's `planPromotions`). */
async function promoteChildren(ctx: StoreContext, id: string, gone: State): Promise<void> {
  // With the marked sessions: a child whose entry was never written is promoted too.
  for (const childId of await childrenOf(ctx, id)) {
    try {
      await changeSession(ctx, childId, (cur) => {
        if (cur.state.header.parentId !== id) return { result: () => undefined };
        const [promoted] = planPromotions(gone, [cur.state]);
        const state: State = { ...cur.state, ...promoted };
        return { next: { state }, result: () => undefined };
      });
    } catch (e) {
      // A child deleted meanwhile, or unreadable, is left as it is (repair reports it).
      if (!isSessionKitError(e, 'not_found') && !isSessionKitError(e, 'corrupt')) throw e;
    }
  }
}

/** Removes every object of a session whose head is unreadable, and its index entry. */
async function wipeUnreadable(ctx: StoreContext, id: string): Promise<void> {
  ctx.knownHeads.delete(id);
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
