// The two ways a session is written: a new generation (create, branch, clone) and the
// next version of a live one (every other write). Both announce themselves with a write
// marker, retry lost races, and update the index before they resolve. When that update
// fails after the write landed, the write still resolves and its marker stays: readers
// heal the entry from the session while a marker is up, so the listing stays truthful.
import {
  LOST_RACE,
  OperationLog,
  retryLostRaces,
  type SessionState,
  throwIfAborted,
} from '@sessionkit/core/adapter';
import { entryOf, headToText, type State, versionToText, withOperation } from './codec.js';
import type { StoreContext } from './context.js';
import { errors, isMissing } from './errors.js';
import { baseChain, foldIfLong } from './history.js';
import { generationPrefix, headKey, textKey, versionKey } from './keys.js';
import { writeSearchTextObject } from './search-text.js';
import {
  type Current,
  type NextVersion,
  newGeneration,
  probePast,
  readCurrent,
  readHead,
  writeNext,
} from './session-log.js';
import { prunesAt, removeSuperseded } from './superseded.js';

/** Runs `work` between a write marker and its removal (left behind only if the server fails). */
export async function marked<T>(ctx: StoreContext, id: string, work: () => Promise<T>): Promise<T> {
  const token = await ctx.index.mark(id);
  try {
    return await work();
  } finally {
    await ctx.index.unmark(id, token).catch(() => {});
  }
}

/** What a change decided: the next version to write (none: nothing to write) and the result. */
export interface Decision<T> {
  next?: NextVersion | undefined;
  result: (written: Current) => T;
}

/**
 * Runs the index update of a write that landed. Resolves whether the entry was written:
 * a failure is not the write's (its data is stored; failing it would invite a retry that
 * writes it twice), so it is swallowed and the caller keeps the marker up instead.
 */
async function indexLanded(update: () => Promise<void>): Promise<boolean> {
  try {
    await update();
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes the next version of the live session `id`: reads its newest version, lets
 * `decide` check preconditions and compute the version (throwing `conflict`, … to write
 * nothing), and writes it with `If-None-Match: *`. A lost race re-reads and decides
 * again, so unconditional changes are never lost and conditional ones are judged against
 * the version they replace. Then the index entry, and a fold when the chain is long.
 * This store's changes of one session run one at a time, in call order (the context's
 * `SessionWriteQueue`). `signal` is checked before each version write, never after one
 * landed. Throws `not_found`, whatever `decide` throws, `aborted`, `unavailable`.
 */
export async function changeSession<T>(
  ctx: StoreContext,
  id: string,
  decide: (current: Current) => Promise<Decision<T>> | Decision<T>,
  signal?: AbortSignal,
  operation = 'write',
): Promise<T> {
  return ctx.sessionWrites.run(id, () => changeSessionNow(ctx, id, decide, signal, operation));
}

async function changeSessionNow<T>(
  ctx: StoreContext,
  id: string,
  decide: (current: Current) => Promise<Decision<T>> | Decision<T>,
  signal: AbortSignal | undefined,
  operation: string,
): Promise<T> {
  // The marker goes up while the head is read; it must exist before the version does.
  const marking = ctx.index.mark(id);
  marking.catch(() => {});
  // True from the moment a version landed until its index entry is written; the marker
  // stays up if the call ends meanwhile (the update failed, or the head move threw first).
  let indexLags = false;
  try {
    // The first attempt starts from the head alone: if it lagged, the version write
    // fails and later attempts read past it (not from the head, which the winner may not
    // have moved yet).
    let read: Promise<Current | undefined> = readHead(ctx.io, id);
    return await retryLostRaces({ errors, operation, sessionId: id, signal }, async () => {
      const current = await read;
      if (current === undefined || current.tombstone) throw errors.notFound(id);
      let decision: Decision<T>;
      try {
        decision = await decide(current);
      } catch (e) {
        // The state read named an object a fold removed since: it is not the newest.
        if (!isMissing(e)) throw e;
        read = readHead(ctx.io, id);
        return LOST_RACE;
      }
      if (decision.next === undefined) return decision.result(current);
      await marking;
      throwIfAborted(errors, signal, operation, id);
      // A version lands within half the prune grace after its head was read, or the head
      // is read again: a removed version's slot is never taken by a writer that still
      // thought the version before it the newest (README "Storage").
      const left = ctx.pruneGraceMs / 2 - (performance.now() - current.readAt);
      if (left < ctx.pruneGraceMs / 8) {
        read = readHead(ctx.io, id);
        return LOST_RACE;
      }
      const next = decision.next;
      const tombstone = next.tombstone === true;
      const index = async () => {
        indexLags = true;
        indexLags = !(await indexLanded(() =>
          tombstone
            ? ctx.index.remove(id, current.gen)
            : ctx.index.put(id, entryOf(current.gen, current.n + 1, next.state)),
        ));
      };
      const outcome = await writeNext(ctx.io, current, next, index, left);
      if (outcome === 'dead') {
        await ctx.index.remove(id, current.gen);
        throw errors.notFound(id);
      }
      if (outcome === 'written') {
        const written: Current = {
          ...current,
          n: current.n + 1,
          state: next.state,
          tombstone,
          operations: withOperation(current.operations, next.operationId, next.state),
        };
        if (!tombstone) await afterWrite(ctx, written);
        return decision.result(written);
      }
      read = probePast(ctx.io, current, false);
      return LOST_RACE;
    });
  } finally {
    if (!indexLags) ctx.index.unmarkLater(id, marking);
  }
}

/**
 * What a landed version's writer does for the session's storage: folds a long chain, and
 * on some commits after a fold removes what it superseded. Neither is the write's: a
 * failure is swallowed (the next fold or removal does it), the write resolves.
 */
async function afterWrite(ctx: StoreContext, written: Current): Promise<void> {
  const { id, gen, n, state } = written;
  await foldIfLong(ctx.io, written).catch(() => {});
  const base = state.chain.base;
  if (!base.folded || !prunesAt(n, base.n)) return;
  await removeSuperseded(ctx.io, id, gen, n, base.n, ctx.pruneGraceMs).catch(() => {});
}

/**
 * Stores a new session (a new generation at version 1 holding every message), unless a
 * live session has the id (`exists`). Of two creators exactly one wins: the head is
 * created with `If-None-Match: *`, or replaced with `If-Match` over a deleted session.
 * The head's write is the atomic step (`signal` is checked before the generation's
 * objects are written). Returns the state stored.
 */
export async function createSession(
  ctx: StoreContext,
  planned: SessionState,
  messages: unknown[],
  texts: string[],
  signal?: AbortSignal,
  operation = 'create',
): Promise<State> {
  const id = planned.header.id;
  const state: State = { ...planned, chain: baseChain(1, messages.length) };
  const doing = `creating session "${id}"`;
  const marking = ctx.index.mark(id);
  marking.catch(() => {});
  // Set when the head landed and the index entry could not be written (see changeSession).
  let indexLags = false;
  try {
    return await retryLostRaces({ errors, operation, sessionId: id, signal }, async () => {
      const current = await readCurrent(ctx.io, id);
      if (current !== undefined && !current.tombstone) throw errors.exists(id);
      await marking;
      throwIfAborted(errors, signal, operation, id);
      const gen = newGeneration();
      const version = versionToText({ n: 1, state, tombstone: false, messages });
      await Promise.all([
        ctx.io.putPlain(versionKey(id, gen, 1), version, doing),
        writeSearchTextObject(ctx.io, textKey(id, gen, 1), texts, doing),
      ]);
      const head = headToText({
        gen,
        n: 1,
        state,
        tombstone: false,
        operations: new OperationLog(),
      });
      const out = await ctx.io.put(
        headKey(id),
        head,
        current === undefined ? { ifAbsent: true } : { ifMatch: current.headEtag },
        doing,
      );
      if (out.written) {
        indexLags = !(await indexLanded(() => ctx.index.put(id, entryOf(gen, 1, state))));
        return state;
      }
      // Another writer changed the head first: drop this generation and look again.
      await removeGeneration(ctx, id, gen);
      return LOST_RACE;
    });
  } finally {
    if (!indexLags) ctx.index.unmarkLater(id, marking);
  }
}

/** Deletes every object of one generation of a session. */
export async function removeGeneration(ctx: StoreContext, id: string, gen: string): Promise<void> {
  const doing = `removing the data of "${id}"`;
  const keys = await ctx.io.list(generationPrefix(id, gen), doing);
  await ctx.io.deleteMany(
    keys.map((k) => k.key),
    doing,
  );
}
