// Reading a state's messages and search text from its chain (folding a long chain into a
// snapshot, so that a load reads a bounded number of objects, is `fold.ts`).
import { searchTextsOf } from '@sessionkit/core/adapter';
import { type Chain, parseJson, type State, versionFromText } from './codec.js';
import { errors, isMissing, missing } from './errors.js';
import { foldKey, foldTextKey, textKey, versionKey } from './keys.js';
import type { ObjectIO } from './objects.js';
import { readSearchTextObject, writeSearchTextObject } from './search-text.js';
import { type Current, probePast, readCurrent, readHead } from './session-log.js';

/** The messages of the chain's base (its object's first `base.count`). */
async function baseMessages(
  io: ObjectIO,
  id: string,
  gen: string,
  chain: Chain,
): Promise<unknown[]> {
  const { n, folded } = chain.base;
  const doing = `reading session "${id}"`;
  const got = await io.getBody(folded ? foldKey(id, gen, n) : versionKey(id, gen, n), doing);
  if (got === undefined) throw missing(id, `${folded ? 'snapshot' : 'version'} ${n}`);
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
  // More than the count only after a truncation dropped the rest (objects are immutable).
  if (!Array.isArray(messages) || messages.length < chain.base.count) {
    throw errors.corrupt(
      id,
      `the messages of ${folded ? 'snapshot' : 'version'} ${n} do not match its count`,
    );
  }
  return messages.length === chain.base.count ? messages : messages.slice(0, chain.base.count);
}

/** The first `count` messages version `n` appended, checked against the chain. */
async function partMessages(
  io: ObjectIO,
  id: string,
  gen: string,
  n: number,
  count: number,
): Promise<unknown[]> {
  const got = await io.getBody(versionKey(id, gen, n), `reading session "${id}"`);
  if (got === undefined) throw missing(id, `version ${n}`);
  const append = versionFromText(got.text, id, n).append;
  if (!Array.isArray(append) || append.length < count) {
    throw errors.corrupt(
      id,
      `version ${n} does not hold the ${count} messages its successors count`,
    );
  }
  return append.length === count ? append : append.slice(0, count);
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
 * The first `count` per-message search texts of version `n`'s text object (or of the fold
 * of `n`). One that is missing (its writer died after the version was written), unreadable
 * or of the previous release's format is rebuilt from the version's messages and stored
 * again: the upgrade of search data happens on first use (and in `repair()`).
 */
async function textsOf(
  io: ObjectIO,
  id: string,
  gen: string,
  n: number,
  folded: boolean,
  count: number,
): Promise<string[]> {
  const key = folded ? foldTextKey(id, gen, n) : textKey(id, gen, n);
  const doing = `reading the search text of "${id}"`;
  const stored = await readSearchTextObject(io, key, doing);
  if (stored !== undefined && stored.length >= count) return stored.slice(0, count);
  const messages = folded
    ? await baseMessages(io, id, gen, { base: { n, folded, count }, parts: [] })
    : await (async () => {
        const body = await io.getBody(versionKey(id, gen, n), doing);
        if (body === undefined) throw missing(id, `version ${n}`);
        const v = versionFromText(body.text, id, n);
        return v.messages ?? v.append ?? [];
      })();
  const texts = searchTextsOf(messages);
  await writeSearchTextObject(io, key, texts, doing);
  return texts.slice(0, count);
}

/**
 * The lower-cased text of each message of a state (core's `searchTextsOf` of its
 * messages), read from the text objects alone: message bodies are read only to rebuild
 * one (see `textsOf`).
 */
export async function readSearchTexts(
  io: ObjectIO,
  id: string,
  gen: string,
  chain: Chain,
): Promise<string[]> {
  const pieces = [textsOf(io, id, gen, chain.base.n, chain.base.folded, chain.base.count)];
  let from = chain.base.count;
  for (const part of chain.parts) {
    if (part.end > from) pieces.push(textsOf(io, id, gen, part.n, false, part.end - from));
    from = part.end;
  }
  return (await Promise.all(pieces)).flat();
}

/** The chain after version `n` appended messages up to `end`. */
export function chainAfterAppend(chain: Chain, n: number, end: number): Chain {
  return { base: chain.base, parts: [...chain.parts, { n, end }] };
}

/**
 * The chain of the first `keep` messages of `chain`: the objects that hold them, the last
 * one cut at `keep`. No message is read or written: a truncation costs what it drops from
 * the chain's list, not what it keeps.
 */
export function chainTruncated(chain: Chain, keep: number): Chain {
  if (keep <= chain.base.count) return { base: { ...chain.base, count: keep }, parts: [] };
  const parts: Chain['parts'] = [];
  for (const part of chain.parts) {
    parts.push({ n: part.n, end: Math.min(part.end, keep) });
    if (part.end >= keep) break;
  }
  return { base: chain.base, parts };
}

/** The chain of a version that holds every message itself. */
export function baseChain(n: number, count: number): Chain {
  return { base: { n, folded: false, count }, parts: [] };
}

/** Attempts of a read whose state met a removed object before it gives up (`corrupt`). */
const READ_ATTEMPTS = 8;

/**
 * Runs `read` again (up to `READ_ATTEMPTS` times) while it fails because the state it read
 * named an object that a fold has removed since: each attempt starts from the head, so the
 * result is always one state's, read whole.
 */
export async function retryMissing<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (e) {
      if (!isMissing(e) || attempt >= READ_ATTEMPTS) throw e;
    }
  }
}

/**
 * The live session `id` and messages `bounds(state)` of its newest version. The messages
 * the head names are read while the versions past it are looked for; only when the head
 * lagged are they read again. A state whose objects were removed meanwhile is read again
 * from the head (`retryMissing`). Throws `not_found`, `corrupt`, `unavailable`.
 */
export function readLiveMessages(
  io: ObjectIO,
  id: string,
  bounds: (state: State) => { start: number; end: number },
): Promise<{ current: Current; messages: unknown[] }> {
  return retryMissing(() => readLiveMessagesOnce(io, id, bounds));
}

async function readLiveMessagesOnce(
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

/**
 * The search texts of a listed session: from the chain its index entry names, or (when a
 * fold removed an object of that chain) from its newest version's; `undefined` when the
 * session is gone meanwhile. Throws `corrupt`, `unavailable`.
 */
export async function readListedSearchTexts(
  io: ObjectIO,
  id: string,
  gen: string,
  chain: Chain,
): Promise<string[] | undefined> {
  try {
    return await readSearchTexts(io, id, gen, chain);
  } catch (e) {
    if (!isMissing(e)) throw e;
  }
  return retryMissing(async () => {
    const current = await readCurrent(io, id);
    if (current === undefined || current.tombstone) return undefined;
    return readSearchTexts(io, id, current.gen, current.state.chain);
  });
}
