// The tree writes: branch and clone (a new session copied from a source inside one
// transaction, with core's header and lineage), delete (with core's promotion), merge
// (core's planMerge), and the parent read create needs. The delete and merge bodies run on
// the caller's client inside the caller's transaction; the SQL is statements/lineage.ts.
import type { Session, SessionSummary } from '@sessionkit/core';
import { newSessionId } from '@sessionkit/core';
import {
  assertBranchPoint,
  branchedLineage,
  branchHeader,
  cloneHeader,
  type HistoryLineage,
  LOST_RACE,
  parentToMergeInto,
  planMerge,
  retryLostRaces,
  rootLineage,
  type SessionHeader,
} from '@sessionkit/core/adapter';
import type { PoolClient } from 'pg';
import { parseBodies, parseMessageRows, summaryOf } from './codec.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { lineageOf, lineageParams, promotionsOf } from './lineage.js';
import { searchChunksIn, titleSearchText } from './search-rows.js';
import type { Statements } from './statements/index.js';
import type { MergeSideRow } from './statements/lineage.js';
import { queryOn } from './transaction.js';

/** How often merge re-reads a child whose parent changed while it waited for the locks. */
const MAX_REPARENT_RETRIES = 5;

/** The header of a summary (what core's lineage rules take). */
export function headerOf(summary: SessionSummary): SessionHeader {
  const { messageCount: _n, children: _c, ...header } = summary;
  return header;
}

/**
 * The lineage of `parentId` when that session exists (share-locked against deletion until
 * the transaction ends), else `undefined`: what core's `createdLineage` takes.
 */
export async function parentLineage(
  c: PoolClient,
  statements: Statements,
  parentId: string,
): Promise<HistoryLineage | undefined> {
  const row = (await queryOn(c, statements.lineage.lockParentLineage, [parentId])).rows[0];
  return row ? lineageOf(row) : undefined;
}

/**
 * Deletes `id` with its messages, search rows and follow pins (status, events and
 * bindings cascade) after promoting its children by core's `promotedChild`: the session
 * and its parent are locked by `sk_delete_lock`, the children FOR UPDATE, then one
 * statement writes the promotions and deletes. A session whose parent does not exist is
 * deleted like any other. Returns false when `id` does not exist.
 */
export async function removeSession(
  c: PoolClient,
  statements: Statements,
  id: string,
): Promise<boolean> {
  const q = statements.lineage;
  const d = (await queryOn(c, q.deleteLock, [id])).rows[0];
  if (!d?.is_found) return false;
  const kids = await queryOn(c, q.lockChildren, [id]);
  const promotions = promotionsOf({ ...d, id }, kids.rows);
  await queryOn(c, q.deleteWithPromotions, [
    id,
    promotions.map((p) => p.id),
    promotions.map((p) => p.parentId),
    promotions.map((p) => p.branchedAtTurn),
    promotions.map((p) => p.rewrites),
    promotions.map((p) => p.base),
  ]);
  return true;
}

/**
 * Locks the parent of `childId` (FOR UPDATE, so merges into one parent run one after the
 * other) and then the child (FOR SHARE) — the parent → child order delete takes —
 * re-reading the child's parent under the locks. Throws `not_found`, `invalid_argument`
 * (no parent), `unavailable` (the parent keeps changing).
 */
async function lockMergeSides(
  c: PoolClient,
  statements: Statements,
  childId: string,
): Promise<{ parent: MergeSideRow; child: MergeSideRow }> {
  const q = statements.lineage;
  const lost = {
    errors,
    operation: 'merge',
    sessionId: childId,
    maxRetries: MAX_REPARENT_RETRIES,
    exhausted: () => errors.unavailable(`merge: the parent of "${childId}" keeps changing`),
  };
  return retryLostRaces(lost, async () => {
    const peek = (await queryOn(c, q.parentOf, [childId])).rows[0];
    if (!peek) throw errors.notFound(childId);
    const parentId = parentToMergeInto(errors, {
      id: childId,
      parentId: peek.parent_id ?? undefined,
    });
    const parent = (await queryOn(c, q.lockMergeParent, [parentId])).rows[0];
    const child = (await queryOn(c, q.lockMergeChild, [childId])).rows[0];
    if (!child) throw errors.notFound(childId);
    if (child.parent_id === parentId && parent) return { parent, child };
    if (child.parent_id === parentId) throw errors.notFound(parentId);
    // Re-parented while this waited for the locks: read the new parent and lock it.
    return LOST_RACE;
  });
}

/**
 * Merges `childId` into its parent under the locks of `lockMergeSides`: core's
 * `planMerge` decides (throws `invalid_argument` / `merge_diverged`, nothing written);
 * then the parent gets the plan's header and lineage and the child's message and search
 * rows. Returns the parent as the plan's header with its children and new messages.
 * Throws `not_found`, `invalid_argument`, `merge_diverged`, `unavailable`.
 */
export async function mergeRecord(
  c: PoolClient,
  statements: Statements,
  childId: string,
  onBodyRead: () => void,
): Promise<Session<unknown>> {
  const { parent, child } = await lockMergeSides(c, statements, childId);
  const plan = planMerge(
    errors,
    {
      header: headerOf(summaryOf(parent)),
      lineage: lineageOf(parent),
      messageCount: parent.message_count,
    },
    { header: headerOf(summaryOf(child)), lineage: lineageOf(child) },
  );
  const parentId = parent.id;
  await queryOn(c, statements.lineage.clearMergeParent, [parentId]);
  onBodyRead();
  const [rewrites, base] = lineageParams(plan.lineage);
  const h = plan.header;
  const row = (
    await queryOn(c, statements.lineage.mergeIntoParent, [
      parentId,
      childId,
      h.tokenCount,
      h.costUsd,
      h.turnCount,
      child.message_count,
      h.revision,
      h.updatedAt,
      rewrites,
      base,
    ])
  ).rows[0];
  if (!row) throw errors.notFound(parentId);
  return { ...h, messages: parseBodies(parentId, row.bodies), children: row.children };
}

/**
 * Branch (`atTurn` given: the first `atTurn` messages) or clone (`atTurn` undefined: all
 * of them) of `sourceId`, in one transaction: the source is read under a share lock, the
 * message rows are copied inside PostgreSQL, the pending search rows computed from the
 * copied messages (a chunk of the source may straddle the branch point). Throws `not_found`,
 * `invalid_argument` (atTurn past the source's messages), `unavailable`.
 */
function copyRecord(
  ctx: StoreContext,
  kind: 'branch' | 'clone',
  sourceId: string,
  atTurn: number | undefined,
): Promise<Session<unknown>> {
  const q = ctx.statements.sessions;
  return ctx.db.tx(kind, async (c) => {
    const row = (await queryOn(c, q.lockCopySource, [sourceId])).rows[0];
    if (!row) throw errors.notFound(sourceId);
    const source = summaryOf(row);
    // Core's lineage rules: a branch is based on the parent as it is now; a clone is a root.
    const lineage =
      kind === 'branch' ? branchedLineage(headerOf(source), lineageOf(row)) : rootLineage();
    if (atTurn !== undefined) assertBranchPoint(errors, sourceId, atTurn, source.messageCount);
    const upTo = atTurn ?? source.messageCount;
    // Core's rules for the new header (fields, counters, state, mode, metadata).
    const now = new Date();
    const header =
      atTurn !== undefined
        ? branchHeader(headerOf(source), newSessionId(), atTurn, now)
        : cloneHeader(headerOf(source), newSessionId(), now);
    const id = header.id;
    const title = titleSearchText(ctx.search.scope, header.title);
    ctx.stats.messageBodyReads++;
    const r = await queryOn(c, q.insertCopy, [
      id,
      header.title,
      header.folder,
      header.parentId ?? null,
      now,
      header.model,
      header.provider,
      header.tokenCount,
      header.costUsd,
      header.turnCount,
      JSON.stringify(header.metadata),
      header.status,
      header.branchedAtTurn ?? null,
      header.mode ?? null,
      header.state === undefined ? null : JSON.stringify(header.state),
      upTo,
      sourceId,
      ...lineageParams(lineage),
      title,
    ]);
    const messages = parseMessageRows(sourceId, r.rows);
    const rows = searchChunksIn(ctx.search.scope, messages);
    if (title !== '') {
      rows.seqs.push(-1);
      rows.nexts.push(-1);
      rows.texts.push(title);
    }
    if (rows.seqs.length > 0) {
      await queryOn(c, q.insertPending, [id, rows.seqs, rows.nexts, rows.texts]);
      ctx.search.noteWrite();
    }
    ctx.upkeep.noteSessions(1);
    return { ...header, messages, children: [] };
  });
}

/** A branch of `parentId` holding its first `atTurn` messages (see `copyRecord`). */
export function branchRecord(
  ctx: StoreContext,
  parentId: string,
  atTurn: number,
): Promise<Session<unknown>> {
  return copyRecord(ctx, 'branch', parentId, atTurn);
}

/** An independent copy of `id` with its whole history (see `copyRecord`). */
export function cloneRecord(ctx: StoreContext, id: string): Promise<Session<unknown>> {
  return copyRecord(ctx, 'clone', id, undefined);
}
