// Folding a long chain into a snapshot, off the commit path: the commit that makes a chain
// long resolves after its version PUT and head move; the fold reads the chain, writes the
// snapshot and its search text, and then (a) leaves a note from which this store's next
// write of the session starts on the snapshot, and (b) points the head at it, for readers
// and other stores. A fold never holds an acknowledged version's only copy: it writes new
// objects and replaces, in a head, a chain by one holding the same messages.
import { LOST_RACE, retryLostRaces, searchTextsOf } from '@sessionkit/core/adapter';
import { type Chain, type HeadRecord, headFromText, headToText } from './codec.js';
import { errors, isMissing } from './errors.js';
import { readAllMessages } from './history.js';
import { foldKey, foldTextKey, headKey } from './keys.js';
import type { ObjectIO } from './objects.js';
import { encodeSearchTexts, writeSearchTextObject } from './search-text.js';
import type { Current } from './session-log.js';
import { writeWitness } from './superseded.js';

/** A chain longer than this many appending versions is folded into a snapshot. */
export const FOLD_AFTER = 32;

/** How many sessions' fold notes a store keeps at most (the oldest go first). */
export const FOLD_NOTES_LIMIT = 1024;

/** A written snapshot: of version `n` of generation `gen`, whose chain was `chain`. */
export interface FoldNote {
  gen: string;
  n: number;
  chain: Chain;
  count: number;
}

/**
 * The chain of a later state `later` with the prefix it shares with `folded` (the chain of
 * version n, whose fold holds exactly those messages) replaced by that fold; `undefined`
 * when `later` does not start with all of `folded` (a truncation or replace came between,
 * or it was folded itself).
 */
export function rebasedOnFold(later: Chain, folded: Chain, n: number, count: number) {
  const same = (a: Chain['base'], b: Chain['base']) =>
    a.n === b.n && a.folded === b.folded && a.count === b.count;
  if (!same(later.base, folded.base) || later.parts.length < folded.parts.length) return;
  for (const [i, part] of folded.parts.entries()) {
    const other = later.parts[i];
    if (other?.n !== part.n || other.end !== part.end) return;
  }
  return { base: { n, folded: true, count }, parts: later.parts.slice(folded.parts.length) };
}

/**
 * The snapshots this store wrote, by session: a write starts from its version's chain
 * rebased on the newest one (`rebase`), so the fold takes with the next write whether or
 * not the fold's own head move won. Bounded: the least recently noted are forgotten (a
 * forgotten note only leaves that session's next fold to its next long chain).
 */
export class FoldNotes {
  readonly #notes = new Map<string, FoldNote>();

  /** Notes the snapshot of `note.n` of session `id`. */
  set(id: string, note: FoldNote): void {
    this.#notes.delete(id);
    this.#notes.set(id, note);
    if (this.#notes.size > FOLD_NOTES_LIMIT) {
      this.#notes.delete(this.#notes.keys().next().value as string);
    }
  }

  /** Whether a snapshot covering the start of `current`'s chain is noted. */
  covers(current: Pick<Current, 'id' | 'gen' | 'n' | 'state'>): boolean {
    return this.rebase(current) !== current;
  }

  /**
   * `current` with its chain rebased on the noted snapshot of its session (the same
   * messages, read from fewer objects), or `current` itself when none applies.
   */
  rebase<T extends Pick<Current, 'id' | 'gen' | 'n' | 'state'>>(current: T): T {
    const note = this.#notes.get(current.id);
    if (note === undefined || note.gen !== current.gen || current.n < note.n) return current;
    const chain = rebasedOnFold(current.state.chain, note.chain, note.n, note.count);
    if (chain === undefined) {
      // Folded since (here or elsewhere), truncated or replaced: the note is of no more use.
      this.#notes.delete(current.id);
      return current;
    }
    return { ...current, state: { ...current.state, chain } };
  }

  delete(id: string): void {
    this.#notes.delete(id);
  }

  /** The fold each session's newest version this store landed was based on. */
  readonly #bases = new Map<string, string>();

  /**
   * Whether `base` (a fold of generation `gen`) is new as the base of this store's
   * versions of `id`: the first version it lands on a fold checks for superseded objects,
   * however many commits after the fold that is (the fold runs off the commit path, so its
   * snapshot may be taken up a few commits late).
   */
  firstOnBase(id: string, gen: string, base: number): boolean {
    const key = `${gen}/${base}`;
    if (this.#bases.get(id) === key) return false;
    this.#bases.delete(id);
    this.#bases.set(id, key);
    if (this.#bases.size > FOLD_NOTES_LIMIT) {
      this.#bases.delete(this.#bases.keys().next().value as string);
    }
    return true;
  }
}

/**
 * Folds the chain of `current` (a version just landed; `headNamed`: its writer's head move
 * left the head naming it) into a snapshot of every message and its search text, notes
 * it in `notes`, then points the head at it. The fold's witness (what lets the versions it
 * supersedes be removed later, see `removeSuperseded`) is written once the head named the
 * version. A fold that finds an object of its chain removed (another writer folded and
 * removed meanwhile), or a snapshot already noted, is skipped. Resolves with the head it
 * wrote, if it did.
 */
export async function foldChain(
  io: ObjectIO,
  notes: FoldNotes,
  current: Current,
  headNamed: boolean,
): Promise<{ n: number; chain: Chain; etag: string } | undefined> {
  const { id, gen, n, state } = current;
  if (state.chain.parts.length < FOLD_AFTER || notes.covers(current)) return undefined;
  let messages: unknown[];
  try {
    messages = await readAllMessages(io, current);
  } catch (e) {
    if (isMissing(e)) return undefined;
    throw e;
  }
  // Recomputed from the messages just read: no GET of 33 text objects.
  const doing = `folding session "${id}"`;
  // The text is compressed (off the event loop) while the snapshot is on its way.
  const texts = encodeSearchTexts(searchTextsOf(messages));
  texts.catch(() => {}); // awaited below, unless the snapshot's PUT failed
  await io.putPlain(foldKey(id, gen, n), JSON.stringify({ format: 1, messages }), doing);
  await writeSearchTextObject(io, foldTextKey(id, gen, n), await texts, doing);
  notes.set(id, { gen, n, chain: state.chain, count: state.messageCount });
  const moved = await pointHeadAtFold(io, current);
  if (moved !== undefined || headNamed) await writeWitness(io, id, gen, n);
  return moved;
}

/**
 * Points the head at the fold of version n while it names version n of this generation,
 * or a later version whose chain starts with all of n's (then only that prefix is replaced
 * by the fold: with writers committing back to back the head has always moved on by the
 * time a fold is written, and the fold would never take). Resolves with the head it wrote
 * (the version it names, its chain and ETag), or `undefined` when it did not.
 */
async function pointHeadAtFold(
  io: ObjectIO,
  current: Current,
): Promise<{ n: number; chain: Chain; etag: string } | undefined> {
  const { id, gen, n, state } = current;
  const doing = `folding session "${id}"`;
  return retryLostRaces(
    { errors, operation: 'commit', sessionId: id, maxRetries: 4, exhausted: () => FOLD_SKIPPED },
    async () => {
      const got = await io.get(headKey(id), doing);
      if (got === undefined) return undefined;
      let head: HeadRecord;
      try {
        head = headFromText(got.text, id);
      } catch {
        return undefined;
      }
      if (head.gen !== gen || head.n < n || head.tombstone) return undefined;
      const chain = rebasedOnFold(head.state.chain, state.chain, n, state.messageCount);
      if (chain === undefined) return undefined;
      const text = headToText({ ...head, state: { ...head.state, chain } });
      const out = await io.put(headKey(id), text, { ifMatch: got.etag }, doing);
      return out.written ? { n: head.n, chain, etag: out.etag } : LOST_RACE;
    },
  ).catch((e: unknown) => {
    if (e !== FOLD_SKIPPED) throw e;
    return undefined;
  });
}

/** What a fold that kept losing the head to other writers gives up with (not an error). */
const FOLD_SKIPPED = new Error('fold skipped');
