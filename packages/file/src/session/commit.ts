// A commit, by the kit's `planCommit`: one record appended to the commit log (its
// truncation and operation id in the record itself), or for `replace` a new snapshot;
// then the search text (a truncation appends a cut of the dropped messages' text) and the
// index entry.

import type { CommitInput, CommitResult } from '@sessionkit/core';
import { planCommit, throwIfAborted } from '@sessionkit/core/adapter';
import { encodeFrame } from '../format/frame.js';
import { entryOf, headerFromJson, headerToJson } from '../format/records.js';
import { appendIndexRecords, putRecord } from '../index-log/append.js';
import {
  appendSearchFile,
  rewriteStaleSearchFile,
  writeSearchFile,
} from '../search/search-file.js';
import { searchMergeRunning } from '../search/search-merge.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';
import { appendLogRecord, type StateAfter } from './commit-log.js';
import { readMessageWindow } from './history-read.js';
import { copyOperations, operationsOf } from './operations.js';
import { writeSnapshot } from './snapshot.js';
import { readSessionTip } from './tip.js';

/**
 * Applies a validated commit (`normalizeCommitInput`'s copy). The caller holds the session
 * lock. A recorded `operationId` resolves with its first result and writes nothing;
 * expectations that do not hold → `conflict`, a `truncate` past the history →
 * `invalid_argument`, nothing written. The signal is checked once more before the first
 * write, never after it (a commit lands whole or not at all).
 */
export async function commitLocked(
  ctx: StoreContext,
  id: string,
  input: CommitInput<unknown>,
  signal?: AbortSignal,
): Promise<CommitResult> {
  const tip = await readSessionTip(ctx, id, 'writer');
  // Only a commit that names an operation looks the log up (O(1) once it is current).
  const operations = input.operationId === undefined ? undefined : await operationsOf(ctx, id, tip);
  const plan = planCommit(
    errors,
    { header: headerFromJson(tip.header), lineage: tip.lineage, messageCount: tip.messageCount },
    input,
    operations?.find(input.operationId),
  );
  if (plan.replayed) return plan.result;
  throwIfAborted(errors, signal, 'commit', id);
  const { state, messages: change, result, operationId } = plan;
  const after: StateAfter = {
    header: headerToJson(state.header),
    lineage: state.lineage,
    messageCount: state.messageCount,
  };
  const index = () => encodeFrame(putRecord(entryOf(after.header, after.messageCount)));
  let indexed: Buffer | undefined;
  if (change.replace !== undefined) {
    // The new snapshot carries the operation log, this commit's id included.
    const ops = copyOperations(operations ?? (await operationsOf(ctx, id, tip)));
    ops.record(operationId, result);
    await writeSnapshot(ctx, id, after.header, after.lineage, change.replace, ops);
    await writeSearchFile(ctx, id, change.replace);
  } else {
    // A truncation's dropped messages, read before the write (a window of the log's tail
    // while it holds them): their text is cut from the search text.
    const dropped =
      change.keep < tip.messageCount
        ? (
            await readMessageWindow(ctx, id, {
              kind: 'range',
              offset: change.keep,
              limit: undefined,
            })
          ).messages
        : [];
    const truncated = change.keep < tip.messageCount;
    // A search merge this store planned for the session is put in place by this append:
    // its compression (in the thread pool) must have ended.
    const merging = searchMergeRunning(ctx, id);
    if (merging !== undefined) await merging;
    // The search text and the index record are prepared while a thread-pool fdatasync of
    // the log runs; the index record is still appended only once the commit is durable.
    await appendLogRecord(
      ctx,
      id,
      tip,
      after,
      change.append,
      'commit',
      () => {
        appendSearchQuietly(ctx, id, change.append, dropped);
        indexed = index();
      },
      { truncate: truncated ? change.keep : undefined, operationId, result },
    );
  }
  await appendIndexRecords(
    ctx,
    indexed ?? [putRecord(entryOf(after.header, after.messageCount))],
    id,
  );
  if (ctx.searchStale.has(id)) await rewriteStaleSearchFile(ctx, id);
  return result;
}

/**
 * Appends the turn's text to the search file; on failure marks it stale instead of
 * failing: it is derived data, and the commit itself goes on and is durable. The search
 * text is then rewritten whole after the commit (or by the next one, or `repair()`).
 */
function appendSearchQuietly(ctx: StoreContext, id: string, append: unknown[], dropped: unknown[]) {
  if ((append.length === 0 && dropped.length === 0) || ctx.searchStale.has(id)) return;
  try {
    appendSearchFile(ctx, id, append, dropped);
  } catch {
    ctx.searchStale.add(id);
  }
}
