// The tree: branch, clone and merge by the kit's plans, and delete's semantics (the
// session's keys, its index entries and router rows go; its children are promoted by the
// kit's rule, each a conditional write of the child).
import { newSessionId } from '@sessionkit/core';
import {
  LOST_RACE,
  mergeTarget,
  planBranch,
  planClone,
  planMergeInto,
  planPromotions,
  retryLostRaces,
  type SessionHeader,
  type SessionState,
  searchTextsOf,
  throwIfAborted,
} from '@sessionkit/core/adapter';
import { call } from './calls.js';
import { childrenOfOne } from './children.js';
import { decodeLineage, decodeMessages } from './codec.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { SCRIPTS } from './lua/index.js';
import { readSnapshot, type Snapshot } from './reads.js';
import { confirmedCall } from './replicas.js';
import {
  insertRecord,
  NO_MESSAGES,
  readState,
  sessionExists,
  writeRecord,
  written,
} from './session-io.js';
import { writeOnce, writeToken } from './write-ledger.js';

/** A fresh id no stored session has. */
async function freshId(ctx: StoreContext): Promise<string> {
  let id = newSessionId();
  while (await sessionExists(ctx, id)) id = newSessionId();
  return id;
}

/** The snapshot's messages are exactly the `count` it claims to hold; else `corrupt`. */
function assertWhole(id: string, snapshot: Snapshot, count: number): void {
  if (snapshot.messageTexts.length !== count) {
    throw errors.corrupt(id, 'the message list does not match the stored count');
  }
}

/** The snapshot's search texts, rebuilt from its messages when they are not usable. */
function textsOf(id: string, snapshot: Snapshot): string[] {
  return snapshot.searchTexts ?? searchTextsOf(decodeMessages(id, snapshot.messageTexts));
}

/**
 * branch(parentId, atTurn): the parent's state and first `atTurn` messages read in one
 * script, the new session planned by `planBranch`. A parent deleted (or deleted and
 * created again) before the branch was written is `not_found`, and the branch is taken
 * back. Either the delete sees the branch or the branch sees the delete: the branch is
 * linked to its parent before it is written and checks the parent after, and a delete
 * reads the links only after removing the parent. Returns the branch's id.
 */
export async function branchSession(
  ctx: StoreContext,
  parentId: string,
  atTurn: number,
  signal?: AbortSignal,
): Promise<string> {
  const parent = await readSnapshot(ctx, parentId, 0, atTurn === 0 ? 'none' : atTurn - 1, true);
  const state = planBranch(errors, parent, await freshId(ctx), atTurn);
  assertWhole(parentId, parent, atTurn);
  const id = await insertCopy(ctx, parentId, parent, state, 'branch', signal);
  if ((await lifeOf(ctx, parentId, parent.life)) !== parent.life) {
    await removeSession(ctx, id);
    throw errors.notFound(parentId);
  }
  return id;
}

/** The life token of `id` now (`undefined` when missing; `assumed` when unreadable). */
async function lifeOf(ctx: StoreContext, id: string, assumed: string): Promise<string | undefined> {
  try {
    return (await readState(ctx, id))?.life;
  } catch (e) {
    if ((e as { code?: unknown }).code === 'corrupt') return assumed;
    throw e;
  }
}

/** clone(id): an independent copy with the full history (one snapshot, `planClone`). */
export async function cloneSession(
  ctx: StoreContext,
  id: string,
  signal?: AbortSignal,
): Promise<string> {
  const source = await readSnapshot(ctx, id, 0, -1, true);
  assertWhole(id, source, source.messageCount);
  return insertCopy(ctx, id, source, planClone(source, await freshId(ctx)), 'clone', signal);
}

/** Stores `state` with the snapshot's messages and search texts; returns its id. */
async function insertCopy(
  ctx: StoreContext,
  sourceId: string,
  source: Snapshot,
  state: SessionState,
  operation: 'branch' | 'clone',
  signal: AbortSignal | undefined,
): Promise<string> {
  const record = {
    state,
    messages: source.messageTexts,
    texts: textsOf(sourceId, source),
    token: writeToken(),
    parentLife: state.header.parentId === undefined ? '' : source.life,
  };
  await insertRecord(ctx, record, operation, signal);
  return state.header.id;
}

/**
 * merge(childId): the parent fast-forwarded to the child's messages (`planMergeInto`).
 * The child is read in one snapshot; the parent's write is conditional on the write
 * version the plan was made from, so concurrent merges into one parent are serialised (the
 * later one plans again and sees the first). Returns the parent's id.
 */
export async function mergeSession(
  ctx: StoreContext,
  childId: string,
  signal?: AbortSignal,
): Promise<string> {
  const child = await readSnapshot(ctx, childId, 0, -1, true);
  assertWhole(childId, child, child.messageCount);
  const parentId = mergeTarget(errors, child);
  const texts = textsOf(childId, child);
  const change = { mode: 'replace', keep: 0, messages: child.messageTexts, texts } as const;
  const token = writeToken();
  const options = { errors, operation: 'merge', sessionId: parentId, signal };
  await ctx.sessionWrites.run(parentId, () =>
    retryLostRaces(options, async () => {
      const parent = await readSnapshot(ctx, parentId, 0, 'none');
      // A parent deleted and created again is another session: never merge into it.
      if (child.parentLife !== '' && parent.life !== child.parentLife) {
        throw errors.notFound(parentId);
      }
      const state = planMergeInto(errors, parent, child);
      throwIfAborted(errors, signal, 'merge', childId);
      const outcome = await writeRecord(ctx, {
        id: parentId,
        token,
        expected: parent,
        state,
        change,
      });
      if (outcome.kind === 'missing') throw errors.notFound(parentId);
      if (outcome.kind !== 'written') return LOST_RACE;
      ctx.cache.set(parentId, written(parent, state, outcome.version));
      return true;
    }),
  );
  return parentId;
}

/**
 * delete(id): the session's keys go in one script (also when its header is unreadable),
 * then its children are promoted, then its index entry, children set, parent link and
 * router rows go. Returns false when it did not exist; `aborted` before the first step.
 */
export async function removeSession(
  ctx: StoreContext,
  id: string,
  signal?: AbortSignal,
): Promise<boolean> {
  throwIfAborted(errors, signal, 'delete', id);
  const token = writeToken();
  const reply = await writeOnce<null>(
    ctx,
    SCRIPTS.delete,
    id,
    ctx.keys.sessionKeyList(id),
    [token],
    token,
    `deleting session "${id}"`,
  );
  ctx.cache.delete(id);
  if (typeof reply !== 'string') return false;
  const deleted = deletedSide(id, reply);
  // Read after the session is gone: a child linked before that is found, and one linked
  // later finds its parent gone (branch takes itself back).
  const children = await childrenOfOne(ctx, id);
  for (const childId of children) {
    await ctx.sessionWrites.run(childId, () => promote(ctx, childId, deleted));
  }
  const k = ctx.keys;
  const indexKeys = [k.order, k.pending, k.children(id)];
  const parentId = deleted.header.parentId;
  if (parentId !== undefined) indexKeys.push(k.children(parentId));
  // An unreadable header named no folder or status: listing drops those entries (their
  // session is gone) and so does repair().
  if (deleted.filters !== undefined) {
    indexKeys.push(...k.filterIndexesOf({ ...deleted.filters, parentId }));
  } else if (parentId !== undefined) {
    indexKeys.push(k.parentIndex(parentId));
  }
  await call(
    ctx,
    SCRIPTS.indexForget,
    indexKeys,
    [id, parentId === undefined ? '0' : '1'],
    `deleting session "${id}"`,
  );
  await call(
    ctx,
    SCRIPTS.forgetSession,
    [k.bindings, k.recent, k.follows, k.boundTo(id), k.pinnedTo(id)],
    [id],
    `deleting session "${id}"`,
  );
  return true;
}

type DeletedSide = Pick<SessionState, 'header' | 'lineage'> & {
  /** Its life token and its own parent's (what a promoted child is now under). */
  life: string;
  parentLife: string;
  /** The folder and status whose indexes held it (`undefined`: unknown). */
  filters: { folder: string; status: string } | undefined;
};

/**
 * What promotion needs of a deleted session, from the delete's outcome
 * `d<branchedAtTurn>\n<parent>\n<lineage>\n<life>\n<parentLife>` (the last two absent in
 * an outcome recorded by the previous release). The script read the header defensively: an
 * unreadable one gives no branch point, and its children are promoted as from a root's.
 */
function deletedSide(id: string, outcome: string): DeletedSide {
  const [at = '', parent = '', lineage = '', life = '', parentLife = '', ...rest] = outcome
    .slice(1)
    .split('\n');
  const header = { id, parentId: parent === '' ? undefined : parent } as SessionHeader;
  const branchedAtTurn = Number(at);
  if (at !== '' && Number.isSafeInteger(branchedAtTurn)) header.branchedAtTurn = branchedAtTurn;
  const decoded = decodeLineage(lineage === '' ? undefined : lineage);
  return { header, lineage: decoded, life, parentLife, filters: filtersOf(rest.join('\n')) };
}

/** `[folder, status]` from a delete's outcome (absent in one recorded by the previous release). */
function filtersOf(text: string): DeletedSide['filters'] {
  if (text === '') return undefined;
  try {
    const [folder, status] = JSON.parse(text) as unknown[];
    if (typeof folder === 'string' && typeof status === 'string') return { folder, status };
  } catch {
    // Unreadable: as if unknown.
  }
  return undefined;
}

/**
 * Re-parents one child by `planPromotions`. The grandparent's children set gains the
 * child before the child's own record changes, so the set never lacks a real child. An
 * unreadable child is left as it is.
 */
function promote(ctx: StoreContext, childId: string, deleted: DeletedSide): Promise<void> {
  const token = writeToken();
  const options = { errors, operation: 'delete', sessionId: childId };
  return retryLostRaces(options, async () => {
    let state: Awaited<ReturnType<typeof readState>>;
    try {
      state = await readState(ctx, childId);
    } catch (e) {
      if ((e as { code?: unknown }).code === 'corrupt') return;
      throw e;
    }
    if (state === undefined || state.header.parentId !== deleted.header.id) return;
    // A child of a later life of the same id is not this delete's to promote.
    if (state.parentLife !== '' && deleted.life !== '' && state.parentLife !== deleted.life) return;
    const [promoted] = planPromotions(deleted, [state]) as [SessionState];
    const newParent = promoted.header.parentId;
    if (newParent !== undefined) {
      const link = [ctx.keys.children(newParent)];
      await confirmedCall(ctx, SCRIPTS.linkChild, link, [childId], 'promoting a child');
    }
    const outcome = await writeRecord(ctx, {
      id: childId,
      token,
      expected: state,
      state: promoted,
      change: NO_MESSAGES,
      parentLife: newParent === undefined ? '' : deleted.parentLife,
    });
    if (outcome.kind === 'moved') return LOST_RACE;
    ctx.cache.delete(childId);
  });
}
