// The two ways a session is written: a new generation (create, branch, clone) and the
// next version of a live one (every other write). Both run under a write marker and retry
// lost races. A create updates the index before it resolves; the next version of a live
// session leaves its index entry to be written off its path. A marker stays up until the
// entry is written (and when that fails): readers heal the entry from the session while a
// marker is up, so the listing stays truthful.
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
import { FOLD_AFTER, foldChain } from './fold.js';
import { baseChain } from './history.js';
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
import type { WriteEnd } from './write-markers.js';

/** Runs `work` between a write marker and its removal (left behind only if the server fails). */
export async function marked<T>(ctx: StoreContext, id: string, work: () => Promise<T>): Promise<T> {
  const token = await ctx.index.mark(id);
  try {
    return await work();
  } finally {
    await ctx.index.unmark(id, token).catch(() => {});
  }
}

/**
 * Remembers the newest version a read found as where this store's next write of the
 * session starts (unless a write of it is under way, which will leave its own).
 */
export function rememberRead(ctx: StoreContext, current: Current): void {
  if (current.tombstone || ctx.sessionWrites.isBusy(current.id)) return;
  ctx.knownHeads.set(current.id, current);
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
 * Writes the next version of the live session `id`: starts from its newest version (as
 * this store's last write of it landed it, else as the head names it), lets `decide` check
 * preconditions and compute the version (throwing `conflict`, … to write nothing), and
 * writes it with `If-None-Match: *`, then moves the head. A lost race reads past what it
 * started from and decides again, so unconditional changes are never lost and conditional
 * ones are judged against the version they replace. The index entry and the search text
 * are written off the call's path (the store's write marker keeps listing truthful until
 * the entry is written), a fold when the chain is long. This store's changes of one
 * session run one at a time, in call order (the context's `SessionWriteQueue`). `signal`
 * is checked before each version write, never after one landed. Throws `not_found`,
 * whatever `decide` throws, `aborted`, `unavailable`.
 */
export async function changeSession<T>(
  ctx: StoreContext,
  id: string,
  decide: (current: Current) => Promise<Decision<T>> | Decision<T>,
  signal?: AbortSignal,
  operation = 'write',
): Promise<T> {
  return ctx.sessionWrites.run(id, async () => {
    // The marker (when one must be written) goes up while the head is read.
    ctx.markers.begin(id).ready.catch(() => {}); // awaited before the version PUT
    let end: WriteEnd = 'none';
    try {
      const { result, ended } = await attemptChange(ctx, id, decide, signal, operation);
      end = ended;
      return result;
    } catch (e) {
      end = e instanceof VersionSent ? 'unsure' : 'none';
      throw e instanceof VersionSent ? e.cause : e;
    } finally {
      ctx.markers.end(id, end);
    }
  });
}

/** A failure after a version PUT was sent: the version may have landed. */
class VersionSent extends Error {
  constructor(override readonly cause: unknown) {
    super('a version write failed');
  }
}

/** `changeSession`'s attempts until one writes (or decides to write nothing). */
async function attemptChange<T>(
  ctx: StoreContext,
  id: string,
  decide: (current: Current) => Promise<Decision<T>> | Decision<T>,
  signal: AbortSignal | undefined,
  operation: string,
): Promise<{ result: T; ended: WriteEnd }> {
  // Taken out: put back only by a write that lands. Without it the first attempt starts
  // from the head alone: if it lagged, the version write fails and later attempts read
  // past it (not from the head, which the winner may not have moved yet).
  const known = ctx.knownHeads.get(id);
  ctx.knownHeads.delete(id);
  // Only while nearly all its time to land is left (a fold after it may have taken some):
  // a version PUT that starts from it gets at least 3/8 of the grace, as after a head read.
  const fresh = known !== undefined && performance.now() - known.readAt < ctx.pruneGraceMs / 8;
  let read: Promise<Current | undefined> = fresh ? Promise.resolve(known) : readHead(ctx.io, id);
  return retryLostRaces({ errors, operation, sessionId: id, signal }, async () => {
    const found = await read;
    if (found === undefined || found.tombstone) throw errors.notFound(id);
    // On this store's newest snapshot of the chain, when the head does not name it yet.
    const current = ctx.folds.rebase(found);
    let decision: Decision<T>;
    try {
      decision = await decide(current);
    } catch (e) {
      // The state read named an object a fold removed since: it is not the newest.
      if (!isMissing(e)) throw e;
      read = readHead(ctx.io, id);
      return LOST_RACE;
    }
    if (decision.next === undefined) return { result: decision.result(current), ended: 'none' };
    // Asked again each attempt: one that retried for long runs under a younger marker.
    const cover = ctx.markers.cover(id);
    await cover.ready;
    throwIfAborted(errors, signal, operation, id);
    // A version lands within half the prune grace after its head was read, or the head
    // is read again: a removed version's slot is never taken by a writer that still
    // thought the version before it the newest (README "Storage").
    const left = ctx.pruneGraceMs / 2 - (performance.now() - current.readAt);
    if (left < ctx.pruneGraceMs / 8) {
      read = readHead(ctx.io, id);
      return LOST_RACE;
    }
    const abortAfterMs = Math.min(left, cover.landBy - performance.now());
    const written = await writeVersion(ctx, current, decision.next, abortAfterMs);
    if (written === 'lost') {
      read = probePast(ctx.io, current, false);
      return LOST_RACE;
    }
    if (written === 'dead') {
      // The generation it started from died (its version was taken back): the head tells
      // whether the session is gone (`not_found`) or was created again, to write on.
      read = readHead(ctx.io, id);
      return LOST_RACE;
    }
    return { result: decision.result(written.current), ended: written.ended };
  });
}

/**
 * One version PUT and what follows it: `lost` when another writer took the version first,
 * `dead` when the generation it wrote in died meanwhile (the version is taken back).
 * Throws `VersionSent` when the PUT or a step after it failed.
 */
async function writeVersion(
  ctx: StoreContext,
  current: Current,
  next: NextVersion,
  abortAfterMs: number,
): Promise<{ current: Current; ended: WriteEnd } | 'lost' | 'dead'> {
  const { id, gen } = current;
  const n = current.n + 1;
  const tombstone = next.tombstone === true;
  const startedAt = performance.now();
  let landed: Awaited<ReturnType<typeof writeNext>>;
  try {
    landed = await writeNext(ctx.io, current, next, abortAfterMs);
  } catch (e) {
    throw new VersionSent(e);
  }
  if (landed === 'lost') return 'lost';
  if (landed === 'dead') {
    await ctx.index.remove(id, gen);
    return 'dead';
  }
  ctx.offPath.start(landed.text);
  const indexing = tombstone
    ? indexLanded(() => ctx.index.remove(id, gen))
    : ctx.index.putLater(id, entryOf(gen, n, next.state));
  // A tombstone's entry goes before the delete resolves: the rest of the delete reads it.
  if (tombstone) await indexing;
  const written: Current = {
    ...current,
    n,
    state: next.state,
    tombstone,
    headEtag: landed.headEtag ?? '',
    headN: n,
    operations: withOperation(current.operations, next.operationId, next.state),
    // Version n had no successor before its own PUT was sent.
    readAt: startedAt,
  };
  if (!tombstone) {
    if (landed.headEtag !== undefined) ctx.knownHeads.set(id, written);
    startUpkeep(ctx, written, landed.headEtag !== undefined);
  }
  return { current: written, ended: { landed: { gen, n }, indexing } };
}

/**
 * Starts what a landed version's writer does for the session's storage, off the write's
 * path (the write resolves after its version PUT and head move): folds a long chain
 * (`headNamed`: the head move left the head naming the version), and on some commits
 * after a fold removes what it superseded. Each is coalesced per session (the newest
 * asked for runs after the one running) and bounded in concurrency (`OffPathWork`); a
 * failure is swallowed: the next fold or removal does it.
 */
function startUpkeep(ctx: StoreContext, written: Current, headNamed: boolean): void {
  const { id, gen, n, state } = written;
  if (state.chain.parts.length >= FOLD_AFTER) {
    ctx.offPath.startUpkeep(`fold ${id}`, async () => {
      const moved = await foldChain(ctx.io, ctx.folds, written, headNamed);
      // The head this store remembers is the one the fold replaced: remember the fold's.
      const known = ctx.knownHeads.get(id);
      if (moved === undefined || known?.gen !== gen || known.n !== moved.n) return;
      const chain = moved.chain;
      ctx.knownHeads.set(id, { ...known, state: { ...known.state, chain }, headEtag: moved.etag });
    });
  }
  const base = state.chain.base;
  // (`firstOnBase` is asked first: it records the base whatever `prunesAt` says.)
  if (base.folded && (ctx.folds.firstOnBase(id, gen, base.n) || prunesAt(n, base.n))) {
    const grace = ctx.pruneGraceMs;
    ctx.offPath.startUpkeep(`removal ${id}`, () =>
      removeSuperseded(ctx.io, id, gen, n, base.n, grace),
    );
  }
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
  ctx.knownHeads.delete(id);
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
      // Version 1 has no successor before the head that makes it live is written.
      const readAt = performance.now();
      const out = await ctx.io.put(
        headKey(id),
        head,
        current === undefined ? { ifAbsent: true } : { ifMatch: current.headEtag },
        doing,
      );
      if (out.written) {
        indexLags = !(await indexLanded(() => ctx.index.put(id, entryOf(gen, 1, state))));
        const operations = new OperationLog();
        const created = { id, gen, n: 1, state, tombstone: false, headN: 1, operations, readAt };
        ctx.knownHeads.set(id, { ...created, headEtag: out.etag });
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
