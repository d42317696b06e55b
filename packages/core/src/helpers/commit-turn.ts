import type { Store } from '../contracts.js';
import { isCommitter } from '../contracts.js';
import { errorsFor, isSessionKitError } from '../errors.js';
import { applyCommitToSummary, checkCommitExpectations } from '../session.js';
import type { CommitInput, CommitResult, Message, Session } from '../types.js';
import { assertCommitInput, assertCount, assertId, assertKnownKeys } from '../validate.js';

const errors = errorsFor('core');
const DEFAULT_MAX_RETRIES = 100;
const MAX_BACKOFF_MS = 50;

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
 * Applies a commit to a session's full state (messages included). Pure: returns a new
 * session; used by the load/modify/save fallback and by simple adapters.
 */
export function applyCommit<M>(session: Session<M>, input: CommitInput<M>, now: Date): Session<M> {
  const { messages, children, ...header } = session;
  const next = applyCommitToSummary(
    { ...header, messageCount: messages.length },
    input as CommitInput<unknown>,
    now,
  );
  const { messageCount: _count, ...rest } = next;
  let nextMessages = messages;
  if (input.replace) nextMessages = structuredClone(input.replace);
  else if (input.append) nextMessages = messages.concat(structuredClone(input.append));
  return { ...rest, children, messages: nextMessages } as Session<M>;
}

/**
 * Commits a turn on any store: a native `Committer` when the store has one (its `commit`
 * is returned as is; `options` are still validated but only the fallback uses them), otherwise load → check expectations →
 * apply → `save` with the revision check.
 *
 * Fallback and expectations: `expectedRevision` and `expectedMessageCount` are checked
 * against each fresh load. When `save` reports a `conflict` (another writer got in
 * between), the fallback always reloads and retries, whatever the caller expects; the
 * expectations checked on the fresh load decide whether the conflict is real. So a
 * stale `expectedRevision` fails with `conflict` on that reload, with no second save,
 * while `expectedMessageCount` alone still commits when the other writer only changed
 * fields (a rename, a status) and left the history as long as expected — as a native
 * commit would. Unconditional appends are never lost.
 *
 * Retries back off before each reload with a random (jittered) delay whose ceiling grows
 * with the attempt (5 ms per attempt, capped at 50 ms), so competing writers spread out
 * and a writer that lost often is not left far behind new ones. After `maxRetries`
 * retries (default 100) that all lost the race, the last `conflict` is thrown.
 *
 * Throws `invalid_argument` for a bad id, input or option (before any I/O); `not_found`;
 * `conflict` when an expectation does not hold or after `maxRetries`; and whatever the
 * store throws.
 */
export async function commitTurn<M = Message>(
  store: Store<M>,
  id: string,
  input: CommitInput<M>,
  options: CommitTurnOptions = {},
): Promise<CommitResult> {
  // Options are checked whichever path runs: a typo must not pass silently.
  assertKnownKeys(errors, options, ['maxRetries'], 'commitTurn');
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  assertCount(errors, maxRetries, 'commitTurn: maxRetries');
  if (isCommitter<M>(store)) return store.commit(id, input);
  assertId(errors, id);
  assertCommitInput(errors, id, input);
  for (let attempt = 0; ; attempt++) {
    const current = await store.load(id);
    // On a retry this decides whether the conflict from `save` was real.
    checkCommitExpectations(
      errors,
      id,
      { revision: current.revision, messageCount: current.messages.length },
      input,
    );
    const next = applyCommit(current, input, new Date());
    try {
      const saved = await store.save({ ...next, revision: current.revision });
      return {
        revision: saved.revision,
        messageCount: saved.messages.length,
        updatedAt: saved.updatedAt,
      };
    } catch (e) {
      if (!isSessionKitError(e, 'conflict') || attempt >= maxRetries) throw e;
      // Another writer got in between: back off a little (jittered, growing, capped so a
      // writer that lost often is not left far behind new ones), reload and re-check.
      const ceiling = Math.min(5 * (attempt + 1), MAX_BACKOFF_MS);
      await new Promise((r) => setTimeout(r, Math.random() * ceiling));
    }
  }
}
