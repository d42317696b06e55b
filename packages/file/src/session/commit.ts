// A commit: one record appended to the commit log (or, for `replace`, a new snapshot),
// then the search text and the index entry.

import type { CommitInput, CommitResult } from '@sessionkit/core';
import {
  applyCommitToSummary,
  checkCommitExpectations,
  committedLineage,
  nextUpdatedAt,
} from '@sessionkit/core/adapter';
import { encodeFrame } from '../format/frame.js';
import { entryOf, headerFromJson, headerToJson } from '../format/records.js';
import { appendIndexRecords, putRecord } from '../index-log/append.js';
import {
  appendSearchFile,
  rewriteStaleSearchFile,
  writeSearchFile,
} from '../search/search-file.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';
import { appendLogRecord, type StateAfter } from './commit-log.js';
import { writeSnapshot } from './snapshot.js';
import { readSessionTip } from './tip.js';

/**
 * Applies a validated commit (`append` and `replace` already copied from the input). The
 * caller holds the session lock. Expectations that do not hold → `conflict`, nothing
 * written.
 */
export async function commitLocked(
  ctx: StoreContext,
  id: string,
  input: CommitInput<unknown>,
  append: unknown[] | undefined,
  replace: unknown[] | undefined,
): Promise<CommitResult> {
  const tip = await readSessionTip(ctx, id, 'writer');
  checkCommitExpectations(
    errors,
    id,
    { revision: tip.header.revision, messageCount: tip.messageCount },
    input,
  );
  const now = nextUpdatedAt(new Date(tip.header.updatedAt));
  const { messageCount, ...summary } = applyCommitToSummary(
    { ...headerFromJson(tip.header), messageCount: tip.messageCount },
    input,
    now,
    errors,
  );
  const after: StateAfter = {
    header: headerToJson(summary),
    lineage: committedLineage(tip.lineage, input),
    messageCount,
  };
  let indexed: Buffer | undefined;
  if (replace) {
    await writeSnapshot(ctx, id, after.header, after.lineage, replace);
    await writeSearchFile(ctx, id, replace);
  } else {
    // The search text and the index record are prepared while a thread-pool fdatasync of
    // the log runs; the index record is still appended only once the commit is durable.
    await appendLogRecord(ctx, id, tip, after, append ?? [], 'commit', () => {
      appendSearchQuietly(ctx, id, append);
      indexed = encodeFrame(putRecord(entryOf(after.header, messageCount)));
    });
  }
  await appendIndexRecords(ctx, indexed ?? [putRecord(entryOf(after.header, messageCount))], id);
  if (ctx.searchStale.has(id)) await rewriteStaleSearchFile(ctx, id);
  return { revision: after.header.revision, messageCount, updatedAt: new Date(now.getTime()) };
}

/**
 * Appends the turn's text to the search file; on failure marks it stale instead of
 * failing: it is derived data, and the commit itself goes on and is durable. The search
 * text is then rewritten whole after the commit (or by the next one, or `repair()`).
 */
function appendSearchQuietly(ctx: StoreContext, id: string, append: unknown[] | undefined) {
  if (!append || append.length === 0 || ctx.searchStale.has(id)) return;
  try {
    appendSearchFile(ctx, id, append);
  } catch {
    ctx.searchStale.add(id);
  }
}
