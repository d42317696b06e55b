// commit(): the turn write. Core's kit computes the new header from the stored one; one
// script writes it only if the session's write version is still the one it was computed
// from. The store remembers the last state it saw of each session, so a turn is usually
// one round trip (plus the order entry's on a Cluster); when another writer came first the
// script returns the current state and the turn is computed again (or fails with
// `conflict` when the caller set an expectation).
import type { CommitInput, CommitResult } from '@sessionkit/core';
import {
  applyCommitToSummary,
  checkCommitExpectations,
  committedLineage,
  nextUpdatedAt,
  searchTextOf,
} from '@sessionkit/core/adapter';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { readState, type StoredState, writeRecord } from './session-io.js';
import type { StateCache } from './state-cache.js';

/** Attempts before an unconditional commit under constant contention gives up (`unavailable`). */
const MAX_ATTEMPTS = 100;

/** Commits `input` to session `id` (both validated by the caller). */
export async function commitTurn(
  ctx: StoreContext,
  cache: StateCache,
  id: string,
  input: CommitInput<unknown>,
): Promise<CommitResult> {
  let state = cache.get(id);
  let fresh = state === undefined;
  state ??= await readOrThrow(ctx, cache, id);
  const added = input.replace ?? input.append;
  const texts = added === undefined ? [] : added.map((m) => JSON.stringify(m));
  const searchText = added === undefined ? '' : searchTextOf(added);
  const mode =
    input.replace !== undefined ? 'replace' : input.append !== undefined ? 'append' : 'none';
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    let computed: ReturnType<typeof computeCommit>;
    try {
      computed = computeCommit(id, state, input);
    } catch (e) {
      if (fresh) throw e;
      // A remembered state may be old: judge expectations and counters on the stored one only.
      state = await readOrThrow(ctx, cache, id);
      fresh = true;
      attempt--;
      continue;
    }
    const { now, header, messageCount } = computed;
    const lineage = committedLineage(state.lineage, input);
    const outcome = await writeRecord(ctx, {
      id,
      expectedVersion: state.version,
      header,
      lineage,
      mode,
      messages: texts,
      searchText,
      messageCount,
    });
    if (outcome.kind === 'missing') {
      cache.delete(id);
      throw errors.notFound(id);
    }
    if (outcome.kind === 'moved') {
      state = outcome.current;
      fresh = true;
      cache.set(id, state);
      continue;
    }
    cache.set(id, { header, messageCount, lineage, version: outcome.version });
    return { revision: header.revision, messageCount, updatedAt: new Date(now.getTime()) };
  }
  throw errors.unavailable(`commit to session "${id}" kept losing races with other writers`);
}

/** Core's rules: the expectations, then the header after the commit. Throws their errors. */
function computeCommit(id: string, state: StoredState, input: CommitInput<unknown>) {
  checkCommitExpectations(
    errors,
    id,
    { revision: state.header.revision, messageCount: state.messageCount },
    input,
  );
  const now = nextUpdatedAt(state.header.updatedAt);
  const { messageCount, ...header } = applyCommitToSummary(
    { ...state.header, messageCount: state.messageCount },
    input,
    now,
    errors,
  );
  return { now, header, messageCount };
}

async function readOrThrow(ctx: StoreContext, cache: StateCache, id: string): Promise<StoredState> {
  const state = await readState(ctx, id);
  if (state === undefined) {
    cache.delete(id);
    throw errors.notFound(id);
  }
  cache.set(id, state);
  return state;
}
