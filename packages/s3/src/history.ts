// Reading a state's messages and search text from its chain, and folding a long chain
// into a snapshot so that a load reads a bounded number of objects.
import { searchTextOf } from '@sessionkit/core/adapter';
import { errors } from './errors.js';
import { foldKey, foldTextKey, headKey, textKey, versionKey } from './keys.js';
import type { ObjectIO } from './objects.js';
import {
  type Chain,
  type HeadRecord,
  headFromText,
  headToText,
  parseJson,
  type State,
  versionFromText,
} from './records.js';
import { type Current, probePast, readHead } from './session-log.js';

/** A chain longer than this many appending versions is folded into a snapshot. */
export const FOLD_AFTER = 32;

/** The messages of the chain's base (every message before `base.count`). */
async function baseMessages(
  io: ObjectIO,
  id: string,
  gen: string,
  chain: Chain,
): Promise<unknown[]> {
  const { n, folded } = chain.base;
  const doing = `reading session "${id}"`;
  const got = await io.getBody(folded ? foldKey(id, gen, n) : versionKey(id, gen, n), doing);
  if (got === undefined)
    throw errors.corrupt(id, `${folded ? 'snapshot' : 'version'} ${n} is missing`);
  let messages: unknown;
  if (folded) {
    try {
      messages = parseJson(got.text, `snapshot ${n}`).messages;
    } catch (e) {
      throw errors.corrupt(id, (e as Error).message);
    }
  } else {
    messages = versionFromText(got.text, id, n).messages;
  }
  if (!Array.isArray(messages) || messages.length !== chain.base.count) {
    throw errors.corrupt(
      id,
      `the messages of ${folded ? 'snapshot' : 'version'} ${n} do not match its count`,
    );
  }
  return messages;
}

/** The messages version `part.n` appended, checked against the chain. */
async function partMessages(
  io: ObjectIO,
  id: string,
  gen: string,
  n: number,
  count: number,
): Promise<unknown[]> {
  const got = await io.getBody(versionKey(id, gen, n), `reading session "${id}"`);
  if (got === undefined) throw errors.corrupt(id, `version ${n} is missing`);
  const append = versionFromText(got.text, id, n).append;
  if (!Array.isArray(append) || append.length !== count) {
    throw errors.corrupt(
      id,
      `version ${n} does not hold the ${count} messages its successors count`,
    );
  }
  return append;
}

/**
 * Messages `start … end - 1` of a state, reading only the objects that hold them (the
 * base only when the range reaches into it), in parallel. Throws `corrupt`, `unavailable`.
 */
export async function readMessages(
  io: ObjectIO,
  id: string,
  gen: string,
  chain: Chain,
  start: number,
  end: number,
): Promise<unknown[]> {
  if (end <= start) return [];
  const pieces: Array<Promise<{ from: number; messages: unknown[] }>> = [];
  if (start < chain.base.count) {
    pieces.push(baseMessages(io, id, gen, chain).then((messages) => ({ from: 0, messages })));
  }
  let from = chain.base.count;
  for (const part of chain.parts) {
    const partFrom = from;
    if (part.end > start && partFrom < end && part.end > partFrom) {
      pieces.push(
        partMessages(io, id, gen, part.n, part.end - partFrom).then((messages) => ({
          from: partFrom,
          messages,
        })),
      );
    }
    from = part.end;
  }
  const out: unknown[] = [];
  for (const piece of await Promise.all(pieces)) {
    const lo = Math.max(start, piece.from);
    const hi = Math.min(end, piece.from + piece.messages.length);
    for (let i = lo; i < hi; i++) out.push(piece.messages[i - piece.from]);
  }
  return out;
}

/** Every message of a state. */
export function readAllMessages(
  io: ObjectIO,
  current: Pick<Current, 'id' | 'gen' | 'state'>,
): Promise<unknown[]> {
  const { id, gen, state } = current;
  return readMessages(io, id, gen, state.chain, 0, state.messageCount);
}

/**
 * The text object of version `n` (or of the fold of `n`). A missing one (its writer died
 * after the version was written) is rebuilt from the version and stored again.
 */
async function textOf(
  io: ObjectIO,
  id: string,
  gen: string,
  n: number,
  folded: boolean,
  count: number,
): Promise<string> {
  const key = folded ? foldTextKey(id, gen, n) : textKey(id, gen, n);
  const doing = `reading the search text of "${id}"`;
  const got = await io.get(key, doing);
  if (got !== undefined) {
    try {
      const text = parseJson(got.text, 'search text').text;
      if (typeof text === 'string') return text;
    } catch {
      // rebuilt below
    }
  }
  const chain: Chain = { base: { n, folded, count }, parts: [] };
  const messages = folded
    ? await baseMessages(io, id, gen, chain)
    : await (async () => {
        const v = versionFromText(
          (await io.getBody(versionKey(id, gen, n), doing))?.text ?? '',
          id,
          n,
        );
        return v.messages ?? v.append ?? [];
      })();
  const text = searchTextOf(messages);
  await io.putPlain(key, JSON.stringify({ format: 1, text }), doing);
  return text;
}

/**
 * The lower-cased message text of a state (core's `searchTextOf` of its messages), read
 * from the text objects alone: message bodies are read only to rebuild a missing one.
 */
export async function readSearchText(
  io: ObjectIO,
  id: string,
  gen: string,
  chain: Chain,
): Promise<string> {
  const pieces = [textOf(io, id, gen, chain.base.n, chain.base.folded, chain.base.count)];
  let from = chain.base.count;
  for (const part of chain.parts) {
    if (part.end > from) pieces.push(textOf(io, id, gen, part.n, false, part.end - from));
    from = part.end;
  }
  return (await Promise.all(pieces)).join('');
}

/**
 * Folds the chain of `current` (when it is long) into a snapshot of every message and its
 * search text, then points the head at it: later writers and readers start from there.
 * The versions stay as they are, so readers of older heads are unaffected.
 */
export async function foldIfLong(io: ObjectIO, current: Current): Promise<void> {
  const { id, gen, n, state } = current;
  if (state.chain.parts.length < FOLD_AFTER) return;
  const messages = await readAllMessages(io, current);
  // Recomputed from the messages just read: no GET of 33 text objects.
  const text = searchTextOf(messages);
  const doing = `folding session "${id}"`;
  await io.putPlain(foldKey(id, gen, n), JSON.stringify({ format: 1, messages }), doing);
  await io.putPlain(foldTextKey(id, gen, n), JSON.stringify({ format: 1, text }), doing);
  const folded: State = {
    ...state,
    chain: { base: { n, folded: true, count: state.messageCount }, parts: [] },
  };
  // Point the head at the snapshot only while it still names version n of this generation.
  for (let attempt = 0; attempt < 5; attempt++) {
    const got = await io.get(headKey(id), doing);
    if (got === undefined) return;
    let head: HeadRecord;
    try {
      head = headFromText(got.text, id);
    } catch {
      return;
    }
    if (head.gen !== gen || head.n !== n || head.tombstone) return;
    const text = headToText({ ...head, state: folded });
    if ((await io.put(headKey(id), text, { ifMatch: got.etag }, doing)).written) return;
  }
}

/** The state after appending `count` messages at version `n`. */
export function chainAfterAppend(chain: Chain, n: number, end: number): Chain {
  return { base: chain.base, parts: [...chain.parts, { n, end }] };
}

/** The chain of a version that holds every message itself. */
export function baseChain(n: number, count: number): Chain {
  return { base: { n, folded: false, count }, parts: [] };
}

/**
 * The live session `id` and messages `bounds(state)` of its newest version. The messages
 * the head names are read while the versions past it are looked for; only when the head
 * lagged are they read again. Throws `not_found`, `corrupt`, `unavailable`.
 */
export async function readLiveMessages(
  io: ObjectIO,
  id: string,
  bounds: (state: State) => { start: number; end: number },
): Promise<{ current: Current; messages: unknown[] }> {
  const head = await readHead(io, id);
  if (head === undefined || head.tombstone) throw errors.notFound(id);
  const range = (c: Current) => {
    const { start, end } = bounds(c.state);
    return readMessages(io, id, c.gen, c.state.chain, start, end);
  };
  const early = range(head);
  early.catch(() => {}); // judged below, only if the head was current
  const current = await probePast(io, head);
  if (current === head) return { current, messages: await early };
  if (current.tombstone) throw errors.notFound(id);
  return { current, messages: await range(current) };
}
