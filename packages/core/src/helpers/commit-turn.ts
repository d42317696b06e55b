import type { Store } from '../contracts.js';
import { isCommitter } from '../contracts.js';
import { errorsFor, isSessionKitError } from '../errors.js';
import { applyCommitToSummary, checkCommitExpectations } from '../session.js';
import type { CommitInput, CommitResult, Message, Session } from '../types.js';
import { assertCommitInput, assertId } from '../validate.js';

const errors = errorsFor('core');
const DEFAULT_MAX_RETRIES = 100;
const MAX_BACKOFF_MS = 50;

/** Options of `commitTurn`. */
export interface CommitTurnOptions {
  /**
   * How many times the load/modify/save fallback retries after a `conflict` when the
   * caller gave no expectation. Default 100: with several writers on one session a
   * writer can lose many rounds in a row, and an unconditional append must not be lost.
   * Never used with a native `Committer`.
   */
  maxRetries?: number;
}

/**
 * Applies a commit to a session's full state (messages included). Pure: returns a new
 * session; used by the load/modify/save fallback and by simple adapters.
 */
export function applyCommit<M>(session: Session<M>, input: CommitInput<M>, now: Date): Session<M> {
  const { messages, children, ...header } = session;
  const next = applyCommitToSummary({ ...header, messageCount: messages.length }, input, now);
  const { messageCount: _count, ...rest } = next;
  let nextMessages = messages;
  if (input.replace) nextMessages = structuredClone(input.replace);
  else if (input.append) nextMessages = messages.concat(structuredClone(input.append));
  return { ...rest, children, messages: nextMessages } as Session<M>;
}

/**
 * Commits a turn on any store: a native `Committer` when the store has one, otherwise
 * load → apply → `save` with the revision check, retrying on `conflict` when the caller
 * set no expectation (so unconditional appends are never lost). With an expectation
 * that does not hold it throws `conflict` without retrying.
 *
 * Throws `not_found`, `conflict`, `invalid_argument`, and whatever the store throws.
 */
export async function commitTurn<M = Message>(
  store: Store<M>,
  id: string,
  input: CommitInput<M>,
  options: CommitTurnOptions = {},
): Promise<CommitResult> {
  if (isCommitter<M>(store)) return store.commit(id, input);
  assertId(errors, id);
  assertCommitInput(errors, id, input);
  const conditional =
    input.expectedRevision !== undefined || input.expectedMessageCount !== undefined;
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  for (let attempt = 0; ; attempt++) {
    const current = await store.load(id);
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
      if (!conditional && isSessionKitError(e, 'conflict') && attempt < maxRetries) {
        // Another writer got in between: back off a little (jittered, growing, capped so a
        // writer that lost often is not left far behind new ones) and re-apply.
        const ceiling = Math.min(5 * (attempt + 1), MAX_BACKOFF_MS);
        await new Promise((r) => setTimeout(r, Math.random() * ceiling));
        continue;
      }
      throw e;
    }
  }
}
