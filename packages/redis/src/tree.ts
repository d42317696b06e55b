// branch(), clone() and delete(): writes that create a session from another one, or remove
// one and promote its children with core's rule.
import { newSessionId } from '@sessionkit/core';
import {
  assertBranchPoint,
  branchedLineage,
  branchHeader,
  cloneHeader,
  type HistoryLineage,
  promotedChild,
  rootLineage,
  type SessionHeader,
  searchTextOf,
} from '@sessionkit/core/adapter';
import { call } from './calls.js';
import { childrenOfOne } from './children.js';
import { decodeLineage, decodeMessages } from './codec.js';
import { type StoreContext, serialWrite } from './context.js';
import { errors } from './errors.js';
import { SCRIPTS } from './lua/index.js';
import { readSnapshot } from './reads.js';
import { insertRecord, readState, sessionExists, writeRecord } from './session-io.js';
import type { StateCache } from './state-cache.js';
import { writeOnce, writeToken } from './write-ledger.js';

/** A fresh id no stored session has. */
async function freshId(ctx: StoreContext): Promise<string> {
  let id = newSessionId();
  while (await sessionExists(ctx, id)) id = newSessionId();
  return id;
}

/**
 * branch(parentId, atTurn): the parent's header and first `atTurn` messages read in one
 * script; the new session written with core's `branchHeader`. Returns its id.
 */
export async function branchSession(
  ctx: StoreContext,
  parentId: string,
  atTurn: number,
): Promise<string> {
  const parent = await readSnapshot(ctx, parentId, 0, atTurn === 0 ? 'none' : atTurn - 1);
  assertBranchPoint(errors, parentId, atTurn, parent.messageCount);
  const messages = decodeMessages(parentId, parent.messageTexts);
  const header = branchHeader(parent.header, await freshId(ctx), atTurn);
  await insertRecord(ctx, {
    header,
    lineage: branchedLineage(parent.header, parent.lineage),
    messages: parent.messageTexts,
    searchText: searchTextOf(messages),
    token: writeToken(),
  });
  return header.id;
}

/** clone(id): an independent copy with the full history (one snapshot). Returns its id. */
export async function cloneSession(ctx: StoreContext, id: string): Promise<string> {
  const source = await readSnapshot(ctx, id, 0, -1, true);
  const header = cloneHeader(source.header, await freshId(ctx));
  await insertRecord(ctx, {
    header,
    lineage: rootLineage(),
    messages: source.messageTexts,
    searchText: source.searchText ?? '',
    token: writeToken(),
  });
  return header.id;
}

/**
 * delete(id): the session's keys go in one script (also when its header is unreadable),
 * then its children are promoted (each a conditional write of the child), then its index
 * entry, children set, parent link and router rows go. Returns false when it did not exist.
 */
export async function removeSession(
  ctx: StoreContext,
  cache: StateCache,
  id: string,
): Promise<boolean> {
  const children = await childrenOfOne(ctx, id);
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
  cache.delete(id);
  if (typeof reply !== 'string') return false;
  const deleted = deletedSide(id, reply);
  for (const childId of children) await promote(ctx, cache, childId, deleted);
  const k = ctx.keys;
  const indexKeys = [k.order, k.pending, k.children(id)];
  if (deleted.header.parentId !== undefined) indexKeys.push(k.children(deleted.header.parentId));
  await call(ctx, SCRIPTS.indexForget, indexKeys, [id], `deleting session "${id}"`);
  await call(
    ctx,
    SCRIPTS.forgetSession,
    [k.bindings, k.recent, k.follows, k.boundTo(id), k.pinnedTo(id)],
    [id],
    `deleting session "${id}"`,
  );
  return true;
}

type PromotionSide = { header: SessionHeader; lineage: HistoryLineage };

/**
 * What promotion needs of a deleted session, from the delete's outcome
 * `d<branchedAtTurn>\n<parent>\n<lineage>`. The script read the header defensively: an
 * unreadable one gives no branch point, and its children are promoted as from a root's.
 */
function deletedSide(id: string, outcome: string): PromotionSide {
  const [at = '', parent = '', lineage = ''] = outcome.slice(1).split('\n');
  const header = { id, parentId: parent === '' ? undefined : parent } as SessionHeader;
  const branchedAtTurn = Number(at);
  if (at !== '' && Number.isSafeInteger(branchedAtTurn)) header.branchedAtTurn = branchedAtTurn;
  return { header, lineage: decodeLineage(lineage === '' ? undefined : lineage) };
}

/**
 * Re-parents one child with core's `promotedChild`. The grandparent's children set gains
 * the child before the child's own record changes, so the set never lacks a real child.
 * An unreadable child is left as it is.
 */
function promote(
  ctx: StoreContext,
  cache: StateCache,
  childId: string,
  deleted: PromotionSide,
): Promise<void> {
  return serialWrite(ctx, childId, () => promoteNow(ctx, cache, childId, deleted));
}

async function promoteNow(
  ctx: StoreContext,
  cache: StateCache,
  childId: string,
  deleted: PromotionSide,
): Promise<void> {
  const token = writeToken();
  for (let attempt = 0; attempt < 20; attempt++) {
    let state: Awaited<ReturnType<typeof readState>>;
    try {
      state = await readState(ctx, childId);
    } catch (e) {
      if ((e as { code?: unknown }).code === 'corrupt') return;
      throw e;
    }
    if (state === undefined || state.header.parentId !== deleted.header.id) return;
    const promoted = promotedChild({ header: state.header, lineage: state.lineage }, deleted);
    const newParent = promoted.header.parentId;
    if (newParent !== undefined) {
      await call(
        ctx,
        SCRIPTS.linkChild,
        [ctx.keys.children(newParent)],
        [childId],
        'promoting a child',
      );
    }
    const outcome = await writeRecord(ctx, {
      id: childId,
      token,
      expected: state,
      header: promoted.header,
      lineage: promoted.lineage,
      mode: 'none',
      messages: [],
      searchText: '',
      messageCount: state.messageCount,
    });
    if (outcome.kind !== 'moved') {
      cache.delete(childId);
      return;
    }
  }
  throw errors.unavailable(`promoting session "${childId}" kept losing races with other writers`);
}
