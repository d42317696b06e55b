// The tree of sessions: `branch` and `clone` (a new session from (part of) another's
// history) and `merge` (a child's history fast-forwarded into its parent), by the kit's
// plans. `delete` and its promotions are in `delete.ts`.

import {
  LOST_RACE,
  mergeTarget,
  planBranch,
  planClone,
  planMergeInto,
  retryLostRaces,
} from '@sessionkit/core/adapter';
import { entryOf, type HeaderJson, headerFromJson, headerToJson } from '../format/records.js';
import { appendIndexRecords, putRecord } from '../index-log/append.js';
import { writeSearchFile } from '../search/search-file.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';
import { createSessionLocked, freshSessionId } from './create.js';
import { readFullSession } from './full-read.js';
import { lockForWrite, withSessionLock } from './lock.js';
import { operationsOf } from './operations.js';
import { writeSnapshot } from './snapshot.js';
import { readSessionTip } from './tip.js';

/** A created session as the store returns it. */
export interface CreatedSession {
  header: HeaderJson;
  messages: unknown[];
}

/**
 * A child of `parentId` with the parent's first `atTurn` messages (the kit's `planBranch`), the parent read under its lock so no concurrent change is lost.
 */
export async function branchSession(
  ctx: StoreContext,
  parentId: string,
  atTurn: number,
): Promise<CreatedSession> {
  return lockForWrite(ctx, parentId, async () => {
    const parent = await readFullSession(ctx, parentId);
    const state = planBranch(
      errors,
      {
        header: headerFromJson(parent.header),
        lineage: parent.lineage,
        messageCount: parent.messages.length,
      },
      await freshSessionId(ctx),
      atTurn,
    );
    const child = headerToJson(state.header);
    const copied = parent.messages.slice(0, atTurn);
    await withSessionLock(
      ctx,
      child.id,
      () => createSessionLocked(ctx, child, state.lineage, copied),
      false,
      [parentId],
    );
    return { header: child, messages: copied };
  });
}

/** An independent copy of `id` (the kit's `planClone`), read lockless. */
export async function cloneSession(ctx: StoreContext, id: string): Promise<CreatedSession> {
  const source = await readFullSession(ctx, id);
  const state = planClone(
    {
      header: headerFromJson(source.header),
      lineage: source.lineage,
      messageCount: source.messages.length,
    },
    await freshSessionId(ctx),
  );
  const header = headerToJson(state.header);
  await lockForWrite(ctx, header.id, () =>
    createSessionLocked(ctx, header, state.lineage, source.messages),
  );
  return { header, messages: source.messages };
}

/**
 * How often a merge starts over because the child was promoted to another parent (its
 * parent deleted) between reading its parent and taking that parent's lock.
 */
const MERGE_ATTEMPTS = 50;

/**
 * Merges `childId` into its parent under the parent's lock (concurrent merges into one
 * parent are serialised); returns the parent's new state. Throws `merge_diverged`,
 * `invalid_argument` for a root, `not_found`.
 */
export async function mergeSession(ctx: StoreContext, childId: string): Promise<CreatedSession> {
  const race = {
    errors,
    operation: 'merge',
    sessionId: childId,
    maxRetries: MERGE_ATTEMPTS - 1,
    exhausted: () => errors.unavailable(`merge: session "${childId}" kept being re-parented`),
  };
  return retryLostRaces(race, async () => {
    const child = await readSessionTip(ctx, childId, 'reader');
    const parentId = mergeTarget(errors, { ...child, header: headerFromJson(child.header) });
    const done = await lockForWrite(ctx, parentId, () => mergeLocked(ctx, childId, parentId));
    // The child was promoted to another parent meanwhile: merge into that one.
    return done ?? LOST_RACE;
  });
}

/** The merge itself, under the parent's lock; `undefined` when the child moved. */
async function mergeLocked(
  ctx: StoreContext,
  childId: string,
  parentId: string,
): Promise<CreatedSession | undefined> {
  // The child is read under the parent's lock (a lockless, consistent read).
  const child = await readFullSession(ctx, childId);
  if (child.header.parentId !== parentId) return undefined;
  const tip = await readSessionTip(ctx, parentId, 'writer');
  const plan = planMergeInto(
    errors,
    { header: headerFromJson(tip.header), lineage: tip.lineage, messageCount: tip.messageCount },
    {
      header: headerFromJson(child.header),
      lineage: child.lineage,
      messageCount: child.messages.length,
    },
  );
  const next = headerToJson(plan.header);
  // The parent keeps its operation ids: a retried commit of it still finds its first result.
  const ops = await operationsOf(ctx, parentId, tip);
  await writeSnapshot(ctx, parentId, next, plan.lineage, child.messages, ops);
  await writeSearchFile(ctx, parentId, child.messages);
  await appendIndexRecords(ctx, [putRecord(entryOf(next, child.messages.length))], parentId);
  return { header: next, messages: child.messages };
}
