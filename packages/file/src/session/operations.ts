// The operation ids a session remembers. Each commit that names one stores it in its own
// log record (`op`: the same frame as the write, so the same atomic step, and the commit
// journal's copy of the record holds it too); a snapshot carries the session's last
// MAX_REMEMBERED_OPERATIONS in its meta (`ops`). A store keeps, per session, core's
// `OperationLog` as of a known end of the log, and brings it up to date by reading only the
// metas of the records written since (by this or another store): a lookup is O(1), and no
// commit reads more than the records it has not seen.

import type { CommitResult } from '@sessionkit/core';
import { OperationLog } from '@sessionkit/core/adapter';
import { decodePrefix, PREFIX_BYTES } from '../format/frame.js';
import type { LogMeta, StoredOperation } from '../format/records.js';
import { readFrameMeta } from '../io/frame-meta.js';
import { openFd } from '../io/sync-fd.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';
import type { SessionTip } from './session-tip.js';
import { readSnapshotMeta } from './snapshot.js';

/**
 * The operation log of the session whose tip a writer (holding its lock) just read: the
 * cached one when it was built from the same snapshot (same revision, inode and creation
 * time: a session deleted and re-created is another one), brought forward over the
 * records appended since; else rebuilt from the snapshot's `ops` and every record of its
 * log. Throws `corrupt` for a damaged record.
 */
export async function operationsOf(
  ctx: StoreContext,
  id: string,
  tip: SessionTip,
): Promise<OperationLog> {
  const known = ctx.operations.get(id);
  if (
    known &&
    known.snapRev === tip.snapRev &&
    known.snapIno === tip.snapIno &&
    known.createdAt === tip.header.createdAt &&
    known.logSize <= tip.logSize &&
    (known.logSize === 0 || known.logIno === tip.logIno)
  ) {
    if (known.logSize < tip.logSize) await readRecordOps(ctx, id, tip, known.logSize, known.log);
    known.logIno = tip.logIno;
    known.logSize = tip.logSize;
    return known.log;
  }
  const log = new OperationLog();
  const snap = await readSnapshotMeta(id, ctx.sessionPaths(id).snapshot(tip.snapRev));
  for (const op of snap.meta.ops ?? []) log.record(op[0], resultOf(op));
  if (tip.logSize > 0) await readRecordOps(ctx, id, tip, 0, log);
  ctx.operations.set(id, {
    snapRev: tip.snapRev,
    snapIno: tip.snapIno,
    createdAt: tip.header.createdAt,
    logIno: tip.logIno,
    logSize: tip.logSize,
    log,
  });
  return log;
}

/**
 * After this store appended a record that moved the session from `before` to `after`:
 * the cached log, when it was current at `before`, records `operationId` (when given) and
 * moves to `after`'s end; otherwise it is left to be brought forward by the next lookup.
 */
export function noteAppended(
  ctx: StoreContext,
  id: string,
  before: SessionTip,
  after: SessionTip,
  operationId: string | undefined,
  result: CommitResult,
): void {
  const known = ctx.operations.get(id);
  if (!known || known.snapRev !== before.snapRev || known.logSize !== before.logSize) return;
  known.log.record(operationId, result);
  known.logIno = after.logIno;
  known.logSize = after.logSize;
}

/** A copy of `log` (a write records into the copy; the cache moves only once it landed). */
export function copyOperations(log: OperationLog): OperationLog {
  const copy = new OperationLog();
  for (const [opId, result] of log.entries()) copy.record(opId, result);
  return copy;
}

/** The result a stored operation resolves with. */
function resultOf(op: StoredOperation): CommitResult {
  return { revision: op[1], messageCount: op[2], updatedAt: new Date(op[3]) };
}

/**
 * Records in `log` the operation ids of the log records in `[from, tip.logSize)` (the
 * tip's log), reading their prefixes and metas only.
 */
async function readRecordOps(
  ctx: StoreContext,
  id: string,
  tip: SessionTip,
  from: number,
  log: OperationLog,
): Promise<void> {
  const handle = openFd(ctx.sessionPaths(id).log(tip.snapRev), 'r');
  try {
    const prefixBuf = Buffer.alloc(PREFIX_BYTES);
    for (let at = from; at < tip.logSize; ) {
      await handle.read(prefixBuf, 0, PREFIX_BYTES, at);
      const prefix = decodePrefix(prefixBuf);
      const meta = prefix && (await readFrameMeta<LogMeta>(handle, prefix, at));
      if (!prefix || !meta || at + prefix.total > tip.logSize) {
        throw errors.corrupt(id, `log-${tip.snapRev}.skr: a damaged record at byte ${at}`);
      }
      if (meta.op !== undefined) {
        log.record(meta.op, {
          revision: meta.header.revision,
          messageCount: meta.messageCount,
          updatedAt: new Date(meta.header.updatedAt),
        });
      }
      at += prefix.total;
    }
  } finally {
    await handle.close();
  }
}
