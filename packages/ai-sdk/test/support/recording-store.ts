// A store that records the commits made through it, to check what a write asked for
// (a truncate and one appended message, never a replaced history).
import type { CommitInput, FullStore } from '@sessionkit/core';
import { withCommit } from '@sessionkit/test-backends';

export interface RecordingStore {
  store: FullStore<unknown>;
  /** Every commit's input, in order. */
  readonly commits: CommitInput<unknown>[];
}

export function recordingCommits(inner: FullStore<unknown>): RecordingStore {
  const commits: CommitInput<unknown>[] = [];
  const store = withCommit(inner, (id, input, call) => {
    commits.push(structuredClone(input));
    return inner.commit(id, input, call);
  });
  return { store, commits };
}
