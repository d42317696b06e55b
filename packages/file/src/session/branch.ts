// `branch` and `clone`: a new session from (part of) another's history.

import {
  assertBranchPoint,
  branchedLineage,
  branchHeader,
  cloneHeader,
  rootLineage,
} from '@sessionkit/core/adapter';
import { type HeaderJson, headerFromJson, headerToJson } from '../format/records.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';
import { createSessionLocked, freshSessionId } from './create.js';
import { readFullSession } from './full-read.js';
import { lockForWrite, withSessionLock } from './lock.js';

/** A created session as the store returns it. */
export interface CreatedSession {
  header: HeaderJson;
  messages: unknown[];
}

/**
 * A child of `parentId` with the parent's first `atTurn` messages (core's `branchHeader`
 * and `branchedLineage`), the parent read under its lock so no concurrent change is lost.
 */
export async function branchSession(
  ctx: StoreContext,
  parentId: string,
  atTurn: number,
): Promise<CreatedSession> {
  return lockForWrite(ctx, parentId, async () => {
    const parent = await readFullSession(ctx, parentId);
    assertBranchPoint(errors, parentId, atTurn, parent.messages.length);
    const parentHeader = headerFromJson(parent.header);
    const child = headerToJson(branchHeader(parentHeader, await freshSessionId(ctx), atTurn));
    const lineage = branchedLineage(parentHeader, parent.lineage);
    const copied = parent.messages.slice(0, atTurn);
    await withSessionLock(ctx, child.id, () => createSessionLocked(ctx, child, lineage, copied));
    return { header: child, messages: copied };
  });
}

/** An independent copy of `id` (core's `cloneHeader`, a root lineage), read lockless. */
export async function cloneSession(ctx: StoreContext, id: string): Promise<CreatedSession> {
  const source = await readFullSession(ctx, id);
  const header = headerToJson(
    cloneHeader(headerFromJson(source.header), await freshSessionId(ctx)),
  );
  await lockForWrite(ctx, header.id, () =>
    createSessionLocked(ctx, header, rootLineage(), source.messages),
  );
  return { header, messages: source.messages };
}
