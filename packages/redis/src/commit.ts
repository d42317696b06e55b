// The writes of a session's own history: commit and save, by the kit's plans. A commit is
// planned from the last state this store saw of the session (usually one round trip) and
// written by one script only if the session's write version is still the one the plan
// was made from; the script answers a recorded operation id before anything else. When
// another writer came first the script returns the current state and the commit is
// planned again (`retryLostRaces`).
import type { CommitInput, CommitResult, Session } from '@sessionkit/core';
import {
  type CommitPlan,
  extendsHistory,
  LOST_RACE,
  planCommit,
  planSave,
  retryLostRaces,
  type SessionHeader,
  searchTextsOf,
  throwIfAborted,
} from '@sessionkit/core/adapter';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { readSnapshot } from './reads.js';
import { rebuildSearchTexts } from './repair.js';
import { confirmSession } from './replicas.js';
import {
  readStateDetail,
  type StoredChange,
  type VersionedState,
  writeRecord,
  written,
} from './session-io.js';
import { writeToken } from './write-ledger.js';

/**
 * A state a commit plans from: remembered (maybe old), or `fresh` — returned by a write
 * that lost, which looked the operation id up first and found none.
 */
type KnownState = VersionedState & { fresh?: boolean };

/** The stored form of a planned message change: JSON texts and search texts. */
function storedChange(
  plan: Extract<CommitPlan, { replayed: false }>,
  storedCount: number,
): StoredChange {
  const m = plan.messages;
  const added = m.replace ?? m.append;
  const change = {
    messages: added.map((message) => JSON.stringify(message)),
    texts: searchTextsOf(added),
  };
  if (m.replace !== undefined) return { mode: 'replace', keep: 0, ...change };
  return { mode: m.keep < storedCount ? 'truncate' : 'append', keep: m.keep, ...change };
}

/**
 * `commit` of validated input, after this store's earlier writes of the session. Throws
 * `not_found`, `conflict` and `invalid_argument` (nothing written), `aborted` before the
 * write when `signal` fired, `unavailable` after losing races for the kit's budget.
 */
export function commitSession(
  ctx: StoreContext,
  id: string,
  input: CommitInput<unknown>,
  signal?: AbortSignal,
): Promise<CommitResult> {
  // One token for every attempt: an attempt whose reply was lost and that landed is found
  // by the next one (or by the settle), never applied a second time.
  const token = writeToken();
  let known: KnownState | undefined = ctx.cache.get(id);
  const options = { errors, operation: 'commit', sessionId: id, signal };
  return retryLostRaces(options, async () => {
    const { state, plan } = await planned(ctx, id, input, known);
    if (plan.replayed) {
      // Answered from a read, not a write: the recorded turn is confirmed by replicas
      // (waitReplicas) before it is reported, as the first run's would have been.
      await confirmSession(ctx, id, `commit of session "${id}"`);
      return plan.result;
    }
    throwIfAborted(errors, signal, 'commit', id);
    const outcome = await writeRecord(ctx, {
      id,
      token,
      expected: state,
      state: plan.state,
      change: storedChange(plan, state.messageCount),
      operationId: plan.operationId,
    });
    switch (outcome.kind) {
      case 'missing':
        ctx.cache.delete(id);
        throw errors.notFound(id);
      case 'replayed':
        return outcome.result;
      case 'moved':
        // The script looked the operation id up first: the current state is fresh, and
        // the id is not recorded.
        known = { ...outcome.current, fresh: true };
        ctx.cache.set(id, outcome.current);
        return LOST_RACE;
      case 'written':
        ctx.cache.set(id, written(state, plan.state, outcome.version));
        if (outcome.rebuild) await rebuildAfterWrite(ctx, id, state.life, outcome.version);
        return plan.result;
    }
  });
}

/**
 * A commit to a session whose search texts were not one per message of this release's
 * format (one of the previous release the upgrade has not rebuilt, or texts lost) wrote
 * its messages without texts: they are rebuilt from the messages now, at the version the
 * commit wrote, so `list({ query })` sees the history as committed. The commit has landed,
 * so a failure here is not the commit's: the session is left as it is (each later write
 * asks again and `repair()` rebuilds it), and one that moved meanwhile is left to the
 * write that moved it.
 */
async function rebuildAfterWrite(
  ctx: StoreContext,
  id: string,
  life: string,
  version: number,
): Promise<void> {
  try {
    await rebuildSearchTexts(ctx, id, { life, version });
  } catch {
    // Left for the next write or repair(), see above.
  }
}

/**
 * The plan over the state known (remembered, or returned by a write that lost), or over
 * a fresh read with the operation id looked up in the same script. A plan that fails on a
 * remembered state is made again over the stored one: expectations and counters are judged
 * on what is stored only, and a recorded id answers before them.
 */
async function planned(
  ctx: StoreContext,
  id: string,
  input: CommitInput<unknown>,
  known: KnownState | undefined,
): Promise<{ state: VersionedState; plan: CommitPlan }> {
  if (known !== undefined) {
    try {
      return { state: known, plan: planCommit(errors, known, input) };
    } catch (e) {
      if (known.fresh === true) throw e;
    }
  }
  const read = await readStateDetail(ctx, id, input.operationId);
  if (read === undefined) {
    ctx.cache.delete(id);
    throw errors.notFound(id);
  }
  ctx.cache.set(id, read.state);
  return { state: read.state, plan: planCommit(errors, read.state, input, read.recorded) };
}

/**
 * `save` of a validated session (`planSave` over a snapshot), written only if the session
 * has not moved since the snapshot. Throws `not_found`, `conflict`, `aborted` (before the
 * write).
 */
export async function saveSession(
  ctx: StoreContext,
  session: Session<unknown>,
  signal?: AbortSignal,
): Promise<SessionHeader> {
  const id = session.id;
  const stored = await readSnapshot(ctx, id, 0, -1);
  const extended = extendsHistory(stored.messageTexts, session.messages, true);
  const state = planSave(errors, stored, session, extended);
  throwIfAborted(errors, signal, 'save', id);
  const messages = session.messages.map((m) => JSON.stringify(m));
  const outcome = await writeRecord(ctx, {
    id,
    token: writeToken(),
    expected: stored,
    state,
    change: { mode: 'replace', keep: 0, messages, texts: searchTextsOf(session.messages) },
  });
  if (outcome.kind === 'missing') throw errors.notFound(id);
  if (outcome.kind !== 'written') {
    const current = outcome.kind === 'moved' ? outcome.current : undefined;
    if (current) ctx.cache.set(id, current);
    throw errors.conflict(id, session.revision, current?.header.revision ?? session.revision + 1);
  }
  ctx.cache.set(id, written(stored, state, outcome.version));
  return state.header;
}
