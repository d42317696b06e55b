// Deleting a session: children promoted to its parent, the folder moved to `trash/` and
// removed, the index entry and router bindings dropped.

import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { isSessionKitError } from '@sessionkit/core';
import type { MergeSide } from '@sessionkit/core/adapter';
import { fsyncDir, planPromotions, readLineage } from '@sessionkit/core/adapter';
import { scanSessionDir } from '../format/paths.js';
import {
  entryOf,
  type HeaderJson,
  headerFromJson,
  headerToJson,
  type IndexEntryJson,
} from '../format/records.js';
import { appendIndexRecords, delRecord, putRecord } from '../index-log/append.js';
import { refreshIndex } from '../index-log/refresh.js';
import { dropSessionRoutes } from '../router/router-file.js';
import type { StoreContext } from '../store/context.js';
import { appendLogRecord } from './commit-log.js';
import { listSessionFolder } from './folder.js';
import { lockForWrite, withSessionLock } from './lock.js';
import { readSessionTip, type SessionTip } from './tip.js';

/** The header fields of a deleted session that neither the session nor the index had. */
const DELETED_UNKNOWN: Omit<HeaderJson, 'id'> = {
  title: '',
  folder: '',
  createdAt: 0,
  updatedAt: 0,
  model: '',
  provider: '',
  tokenCount: 0,
  costUsd: 0,
  turnCount: 0,
  metadata: {},
  status: 'active',
  revision: 1,
};

/**
 * Deletes a session with the full delete semantics; false when it does not exist. With
 * `expected` (a pruning candidate taken from the index), false too when the session, read
 * under its lock, is no longer that candidate: another revision or `updatedAt`, a parent
 * now, or unreadable.
 */
export async function removeSession(
  ctx: StoreContext,
  id: string,
  expected?: IndexEntryJson,
): Promise<boolean> {
  const removed = await lockForWrite(ctx, id, async () => {
    const names = listSessionFolder(ctx.sessionPaths(id).dir);
    if (!names) return false;
    const scan = scanSessionDir(names);
    if (scan.snapshots.length === 0 && !scan.legacy) return false;
    const deleted = await deletedSide(ctx, id, expected);
    if (!deleted) return false;
    await removeLocked(ctx, id, deleted);
    return true;
  });
  if (removed) await dropSessionRoutes(ctx, id);
  return removed;
}

/**
 * The session about to be deleted as its children's promotion needs it (core's
 * `MergeSide`), or false when it is not `expected` any more. An unreadable session is
 * described by its index entry (no lineage: children lose their base).
 */
async function deletedSide(
  ctx: StoreContext,
  id: string,
  expected: IndexEntryJson | undefined,
): Promise<MergeSide | false> {
  try {
    const { header, lineage } = await readSessionTip(ctx, id, 'reader');
    if (
      expected &&
      (header.revision !== expected.revision ||
        header.updatedAt !== expected.updatedAt ||
        header.parentId !== undefined)
    )
      return false;
    return { header: headerFromJson(header), lineage };
  } catch (e) {
    if (!isSessionKitError(e, 'corrupt') || expected) {
      if (expected && (isSessionKitError(e, 'corrupt') || isSessionKitError(e, 'not_found')))
        return false;
      throw e;
    }
    const entry = (await refreshIndex(ctx)).entries.get(id);
    const { messageCount: _n, ...header } = entry ?? { ...DELETED_UNKNOWN, id, messageCount: 0 };
    return { header: headerFromJson(header), lineage: readLineage(undefined) };
  }
}

/** Promotes the children, then removes the folder and the session's caches and entry. */
async function removeLocked(ctx: StoreContext, id: string, deleted: MergeSide): Promise<void> {
  const sp = ctx.sessionPaths(id);
  // Promote the children first: a crash half-way leaves every session readable.
  const index = await refreshIndex(ctx);
  const kids = index.listable.children(id);
  for (const childId of kids) await promoteChild(ctx, childId, deleted);
  const grave = join(ctx.paths.trash, `${id}.${randomBytes(6).toString('hex')}`);
  await fsp.rename(sp.dir, grave);
  if (ctx.options.sync) await fsyncDir(ctx.paths.sessions);
  const cachedTip = ctx.tips.get(id);
  if (cachedTip) ctx.keptFiles.drop(sp.log(cachedTip.snapRev));
  ctx.keptFiles.drop(sp.search);
  ctx.forgetTip(id);
  ctx.operations.delete(id);
  ctx.eventTails.delete(id);
  ctx.searchStale.delete(id);
  await appendIndexRecords(ctx, [delRecord(id)], id);
  await fsp.rm(grave, { recursive: true, force: true });
}

/**
 * Promotes `childId` from the session `deleted` to that session's parent (the kit's
 * `planPromotions`: new `parentId`, re-based `branchedAtTurn` and lineage; revision and
 * `updatedAt` kept) with a header-only log record. Runs inside the deleted session's lock.
 */
async function promoteChild(ctx: StoreContext, childId: string, deleted: MergeSide): Promise<void> {
  const outer = [deleted.header.id];
  await withSessionLock(
    ctx,
    childId,
    async () => {
      let tip: SessionTip;
      try {
        tip = await readSessionTip(ctx, childId, 'writer');
      } catch (e) {
        // Gone or unreadable: repair() reports it; the delete goes on.
        if (isSessionKitError(e, 'not_found') || isSessionKitError(e, 'corrupt')) return;
        throw e;
      }
      if (tip.header.parentId !== deleted.header.id) return;
      const [promoted] = planPromotions(deleted, [
        {
          header: headerFromJson(tip.header),
          lineage: tip.lineage,
          messageCount: tip.messageCount,
        },
      ]);
      const header = headerToJson(promoted!.header);
      const after = { header, lineage: promoted!.lineage, messageCount: tip.messageCount };
      await appendLogRecord(ctx, childId, tip, after, [], 'reparent');
      await appendIndexRecords(ctx, [putRecord(entryOf(header, tip.messageCount))], childId);
    },
    false,
    outer,
  );
}
