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
import { writeToken } from './write-ledger.js';

/**
 * How long a commit that keeps losing races to other writers of its session goes on
 * before `unavailable`. Every round has a winner, so a loser waits at most for the other
 * writers' queued commits (their stores run their own writes of a session one at a time,
 * see `serialWrite`): the limit is for a session written without pause by other processes.
 */
const CONTENDED_BUDGET_MS = 20_000;
/** Losses in a row before a commit waits a little (0 to 8 ms, random) between attempts. */
const LOSSES_BEFORE_BACKOFF = 4;

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
  // A monotonic clock: a wall-clock step must not stretch or cut the budget.
  const giveUpAt = performance.now() + CONTENDED_BUDGET_MS;
  // One token for every attempt: an attempt whose reply was lost and that landed is found
  // by the next one (or by the settle), never applied a second time.
  const token = writeToken();
  for (let losses = 0; losses === 0 || performance.now() < giveUpAt; ) {
    let computed: ReturnType<typeof computeCommit>;
    try {
      computed = computeCommit(id, state, input);
    } catch (e) {
      if (fresh) throw e;
      // A remembered state may be old: judge expectations and counters on the stored one only.
      state = await readOrThrow(ctx, cache, id);
      fresh = true;
      continue;
    }
    const { now, header, messageCount } = computed;
    const lineage = committedLineage(state.lineage, input);
    const outcome = await writeRecord(ctx, {
      id,
      token,
      expected: state,
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
      // Writers retrying in lockstep can keep the same order round after round; a random
      // pause breaks it (and spares Redis a round trip that would lose again).
      if (++losses >= LOSSES_BEFORE_BACKOFF) await pause(Math.random() * 8);
      continue;
    }
    cache.set(id, { header, messageCount, lineage, life: state.life, version: outcome.version });
    return { revision: header.revision, messageCount, updatedAt: new Date(now.getTime()) };
  }
  throw errors.unavailable(`commit to session "${id}" kept losing races with other writers`);
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
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
