import type { Store } from '../contracts.js';
import { isCommitter } from '../contracts.js';
import { errorsFor, isSessionKitError } from '../errors.js';
import { normalizeCallOptions, throwIfAborted } from '../input/call-options.js';
import { normalizeCommitInput } from '../input/commit-input.js';
import { LOST_RACE, retryLostRaces } from '../kit/lost-race.js';
import { applyCommitToSummary, checkCommitExpectations } from '../session.js';
import type { CallOptions, CommitInput, CommitResult, Message, Session } from '../types.js';
import { assertCount, assertId, assertKnownKeys } from '../validate.js';

const errors = errorsFor('core');
const DEFAULT_MAX_RETRIES = 100;

/** Options of `commitTurn`. */
export interface CommitTurnOptions {
  /**
   * How many times the load/modify/save fallback reloads and retries after `save`
   * reports a `conflict`. Default 100: with several writers on one session a writer can
   * lose many rounds in a row, and an unconditional append must not be lost. A
   * non-negative integer; 0 never retries. Never used with a native `Committer`.
   */
  maxRetries?: number;
}

/**
 * Applies a commit to a session's full state (messages included): `truncate`, then
 * `append` (or `replace`), patch, increments, `revision + 1`, `updatedAt = now`. Pure:
 * returns a new session; used by the load/modify/save fallback and by simple adapters.
 * Throws `invalid_argument` for a `truncate` past the history or a counter leaving its
 * range.
 */
export function applyCommit<M>(session: Session<M>, input: CommitInput<M>, now: Date): Session<M> {
  const { messages, children, ...header } = session;
  if (input.truncate !== undefined && input.truncate > messages.length) {
    throw errors.invalid(
      `commit: truncate must be from 0 to ${messages.length} (the messages of "${session.id}"), got ${input.truncate}`,
      session.id,
    );
  }
  const next = applyCommitToSummary(
    { ...header, messageCount: messages.length },
    input as CommitInput<unknown>,
    now,
  );
  const { messageCount: _count, ...rest } = next;
  let nextMessages = messages;
  if (input.replace) nextMessages = structuredClone(input.replace);
  else {
    const kept = input.truncate === undefined ? messages : messages.slice(0, input.truncate);
    nextMessages = input.append ? kept.concat(structuredClone(input.append)) : kept;
  }
  return { ...rest, children, messages: nextMessages } as Session<M>;
}

/**
 * Commits a turn on any store: a native `Committer` when the store has one (its `commit`
 * gets `input` and `call` as they are — `operationId` and `truncate` included; `options`
 * are still validated but only the fallback uses them), otherwise load → check
 * expectations → apply → `save` with the revision check.
 *
 * Fallback and expectations: `expectedRevision` and `expectedMessageCount` are checked
 * against each fresh load. When `save` reports a `conflict` (another writer got in
 * between), the fallback reloads and retries (core's lost-race loop: jittered, growing
 * pauses), whatever the caller expects; the expectations checked on the fresh load decide
 * whether the conflict is real. So a stale `expectedRevision` fails with `conflict` on that
 * reload, with no second save, while `expectedMessageCount` alone still commits when the
 * other writer only changed fields and left the history as long as expected — as a native
 * commit would. Unconditional appends are never lost. After `maxRetries` retries (default
 * 100) that all lost, the last `conflict` is thrown. `truncate` works on the fallback too.
 * `operationId` does not: a store without `commit` cannot record it in the same atomic
 * step as the write, so the fallback rejects it (`invalid_argument`) rather than promise
 * an idempotency it cannot keep.
 *
 * Throws `invalid_argument` for a bad id, input or option (before any I/O); `not_found`;
 * `conflict` when an expectation does not hold or after `maxRetries`; `aborted` when
 * `call.signal` fires before the save; and whatever the store throws.
 */
export async function commitTurn<M = Message>(
  store: Store<M>,
  id: string,
  input: CommitInput<M>,
  options: CommitTurnOptions = {},
  call?: CallOptions,
): Promise<CommitResult> {
  // Options are checked whichever path runs: a typo must not pass silently.
  assertKnownKeys(errors, options, ['maxRetries'], 'commitTurn');
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  assertCount(errors, maxRetries, 'commitTurn: maxRetries');
  if (isCommitter<M>(store)) return store.commit(id, input, call);
  assertId(errors, id);
  const commit = normalizeCommitInput(errors, id, input);
  const signal = normalizeCallOptions(errors, call, 'commitTurn');
  if (commit.operationId !== undefined) {
    throw errors.invalid(
      'commitTurn: operationId needs a store with commit (Committer): without it the id cannot be recorded in the same atomic step as the write',
      id,
    );
  }
  let lastConflict: unknown;
  return retryLostRaces(
    {
      errors,
      operation: 'commitTurn',
      sessionId: id,
      maxRetries,
      budgetMs: Number.POSITIVE_INFINITY,
      exhausted: () => lastConflict as Error,
      signal,
    },
    async () => {
      // The store may not honour signals itself: the fallback checks before each step.
      throwIfAborted(errors, signal, 'commitTurn', id);
      const current = await store.load(id, call);
      // On a retry this decides whether the conflict from `save` was real.
      checkCommitExpectations(
        errors,
        id,
        { revision: current.revision, messageCount: current.messages.length },
        commit,
      );
      const next = applyCommit(current, commit, new Date());
      throwIfAborted(errors, signal, 'commitTurn', id);
      try {
        const saved = await store.save({ ...next, revision: current.revision }, call);
        return {
          revision: saved.revision,
          messageCount: saved.messages.length,
          updatedAt: saved.updatedAt,
        };
      } catch (e) {
        if (!isSessionKitError(e, 'conflict')) throw e;
        lastConflict = e;
        return LOST_RACE;
      }
    },
  );
}
