// `merge`: a child's history fast-forwarded into its parent, decided by core's `planMerge`
// from the stored lineage.

import { parentToMergeInto, planMerge } from '@sessionkit/core/adapter';
import { entryOf, headerFromJson, headerToJson } from '../format/records.js';
import { appendIndexRecords, putRecord } from '../index-log/append.js';
import { writeSearchFile } from '../search/search-file.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';
import type { CreatedSession } from './branch.js';
import { readFullSession } from './full-read.js';
import { lockForWrite } from './lock.js';
import { writeSnapshot } from './snapshot.js';
import { readSessionTip } from './tip.js';

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
  for (let attempt = 0; attempt < MERGE_ATTEMPTS; attempt++) {
    const child = (await readSessionTip(ctx, childId, 'reader')).header;
    const parentId = parentToMergeInto(errors, child);
    const done = await lockForWrite(ctx, parentId, () => mergeLocked(ctx, childId, parentId));
    // The child was promoted to another parent meanwhile: merge into that one.
    if (done !== undefined) return done;
  }
  throw errors.unavailable(`merge: session "${childId}" kept being re-parented`);
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
  const plan = planMerge(
    errors,
    { header: headerFromJson(tip.header), lineage: tip.lineage, messageCount: tip.messageCount },
    { header: headerFromJson(child.header), lineage: child.lineage },
  );
  const next = headerToJson(plan.header);
  await writeSnapshot(ctx, parentId, next, plan.lineage, child.messages);
  await writeSearchFile(ctx, parentId, child.messages);
  await appendIndexRecords(ctx, [putRecord(entryOf(next, child.messages.length))], parentId);
  return { header: next, messages: child.messages };
}
