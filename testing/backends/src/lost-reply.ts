// A store whose next matching commit lands and then fails `unavailable`, as when the reply
// of a write that the backend applied is lost on the way back: what a binding's retry with
// an operation id must survive.
import type { CommitInput, FullStore } from '@sessionkit/core';
import { errorsFor } from '@sessionkit/core/adapter';
import { withCommit } from './commit-wrapper.js';

type AnyStore = FullStore<unknown>;

const errors = errorsFor('lost-reply');

/** Which commits `loseNextReply` arms for. */
export type CommitMatch = (input: CommitInput<unknown>) => boolean;

/** Commits that change the history (not the binding's probes or empty claims). */
const changesHistory: CommitMatch = (input) =>
  input.append !== undefined || input.replace !== undefined || input.truncate !== undefined;

/** A store wrapped by `withLostReplies`, with the switch that loses the next reply. */
export interface LostReplyStore {
  store: AnyStore;
  /** The next commit matching `match` (default: one that changes the history) lands, then throws. */
  loseNextReply(match?: CommitMatch): void;
  /** How many replies were lost so far. */
  readonly lost: number;
}

/**
 * `inner` with a `commit` that, once armed by `loseNextReply`, lets the next matching commit
 * land and then throws `unavailable`; every other call goes to `inner` as it is.
 */
export function withLostReplies(inner: AnyStore): LostReplyStore {
  let armed: CommitMatch | undefined;
  let lost = 0;
  const commit: AnyStore['commit'] = async (id, input, call) => {
    const result = await inner.commit(id, input, call);
    if (armed?.(input)) {
      armed = undefined;
      lost++;
      throw errors.unavailable(`the reply of a commit to "${id}" was lost`);
    }
    return result;
  };
  return {
    store: withCommit(inner, commit),
    loseNextReply(match = changesHistory) {
      armed = match;
    },
    get lost() {
      return lost;
    },
  };
}
