// The plan of `commit`: operation-id replay, expectations, truncation, the header, the
// lineage and the result, in the order the contract gives them.
import type { ErrorFactory } from '../../errors.js';
import { committedLineage } from '../../history-lineage.js';
import {
  applyCommitToHeader,
  checkCommitExpectations,
  committedMessageCount,
  nextWriteTime,
} from '../../session.js';
import type { CommitInput, CommitResult } from '../../types.js';
import type { SessionState } from '../session-state.js';

/**
 * How a commit changes the stored messages: keep the first `keep` (all of them when
 * nothing is truncated; `stored − keep` are dropped) and append `append` — or, with
 * `replace`, replace the whole history.
 */
export type MessageChange =
  | { keep: number; append: unknown[]; replace?: undefined }
  | { replace: unknown[]; keep?: undefined; append?: undefined };

/** What a commit does: nothing (a repeated operation id) or one write. */
export type CommitPlan =
  | {
      /** A repeat: write nothing and resolve with the first commit's result. */
      replayed: true;
      result: CommitResult;
    }
  | {
      replayed: false;
      state: SessionState;
      messages: MessageChange;
      result: CommitResult;
      /** Record this id with `result` in the same atomic step, when given. */
      operationId: string | undefined;
    };

/**
 * The plan of `commit(id, input)` over the stored state, with `input` validated
 * (`normalizeCommitInput`). `recorded` is the result stored for `input.operationId`, which
 * the adapter looks up in the same atomic step: when there is one, the plan is a replay
 * (write nothing, resolve with it) whatever the expectations say. Otherwise: expectations
 * (`conflict`), `truncate` within `0..messageCount` (`invalid_argument`), patch and
 * increments (`invalid_argument` for a counter leaving its range), `revision + 1`,
 * `updatedAt` strictly after the stored one (`invalid_argument` when none is left within
 * the dates a store keeps: `nextWriteTime`), and one more history rewrite when the commit
 * replaces the history or drops a message. Throws before anything is written. Pure.
 */
export function planCommit(
  errors: ErrorFactory,
  stored: SessionState,
  input: CommitInput<unknown>,
  recorded?: CommitResult,
  now: Date = new Date(),
): CommitPlan {
  const id = stored.header.id;
  if (recorded !== undefined) return { replayed: true, result: recorded };
  const count = stored.messageCount;
  checkCommitExpectations(
    errors,
    id,
    { revision: stored.header.revision, messageCount: count },
    input,
  );
  if ((input.truncate ?? count) > count) {
    throw errors.invalid(
      `commit: truncate must be from 0 to ${count} (the messages of "${id}"), got ${input.truncate}`,
      id,
    );
  }
  const updatedAt = nextWriteTime(errors, id, stored.header.updatedAt, now);
  const header = applyCommitToHeader(stored.header, input, updatedAt, errors);
  const messageCount = committedMessageCount(count, input);
  const messages: MessageChange =
    input.replace !== undefined
      ? { replace: input.replace }
      : { keep: input.truncate ?? count, append: input.append ?? [] };
  return {
    replayed: false,
    state: { header, lineage: committedLineage(stored.lineage, input, count), messageCount },
    messages,
    result: { revision: header.revision, messageCount, updatedAt: new Date(updatedAt.getTime()) },
    operationId: input.operationId,
  };
}
