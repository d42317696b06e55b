// A session's versions: finding the newest one (the head is a hint, probed past), and
// writing the next one with `If-None-Match: *` so that exactly one writer gets each
// version number. Every change to a session goes through `writeNext`.
import { randomBytes } from 'node:crypto';
import { LOST_RACE, type OperationLog, retryLostRaces } from '@sessionkit/core/adapter';
import {
  type HeadRecord,
  headFromText,
  headToText,
  type State,
  type VersionRecord,
  versionFromText,
  versionToText,
  withOperation,
} from './codec.js';
import { errors } from './errors.js';
import { headKey, textKey, versionKey } from './keys.js';
import type { ObjectIO } from './objects.js';
import { encodeSearchTexts, writeSearchTextObject } from './search-text.js';

/** A session's newest version as read now. */
export interface Current {
  id: string;
  gen: string;
  n: number;
  state: State;
  tombstone: boolean;
  /** The head object's ETag as read (what a generation switch compares against). */
  headEtag: string;
  /** The version the head named (lower than `n` when the head lagged). */
  headN: number;
  /** The operation ids recorded up to version `n`, with their commits' results. */
  operations: OperationLog;
  /**
   * When the head this was read from was read (`performance.now()`): a writer lands its
   * version within half the prune grace after it, or reads the head again.
   */
  readAt: number;
}

/** A new generation name: time-ordered and random. */
export function newGeneration(): string {
  return `${Date.now().toString(36)}${randomBytes(6).toString('hex')}`;
}

/**
 * The session as its head names it, without looking past it: what a writer starts from
 * (its `If-None-Match: *` on the next version fails if the head lagged, and it then reads
 * forward). `undefined` when the session never existed; throws `corrupt`, `unavailable`.
 */
export async function readHead(io: ObjectIO, id: string): Promise<Current | undefined> {
  // Taken before the GET: the head named its version at some moment after this.
  const readAt = performance.now();
  const got = await io.get(headKey(id), `reading session "${id}"`);
  if (got === undefined) return undefined;
  let head: HeadRecord;
  try {
    head = headFromText(got.text, id);
  } catch (e) {
    throw errors.corrupt(id, (e as Error).message);
  }
  const { gen, n, state, tombstone, operations } = head;
  return { id, gen, n, state, tombstone, headEtag: got.etag, headN: n, operations, readAt };
}

/**
 * Reads past `from` (a head as read): a GET of each following version until one is
 * missing (a writer may have died before moving the head), moving a lagging head forward
 * unless `heal` is false (a writer that lost a race: the winner moves the head).
 * Throws `corrupt` when a version cannot be read, `unavailable`.
 */
export async function probePast(io: ObjectIO, from: Current, heal = true): Promise<Current> {
  let { n, state, tombstone, operations } = from;
  const { id, gen } = from;
  for (;;) {
    const next = await io.getBody(versionKey(id, gen, n + 1), `reading session "${id}"`);
    if (next === undefined) break;
    const v = versionFromText(next.text, id, n + 1);
    n = v.n;
    state = v.state;
    tombstone = v.tombstone;
    // The id a version records is part of that version: known to whoever reads it.
    operations = withOperation(operations, v.operationId, v.state);
  }
  if (n === from.n) return from;
  const current = { ...from, n, state, tombstone, operations };
  if (heal) await advanceHead(io, current);
  return current;
}

/**
 * The session's newest version: the head, then past it (`probePast`). `undefined` when the
 * session never existed; throws `corrupt`, `unavailable`.
 */
export async function readCurrent(io: ObjectIO, id: string): Promise<Current | undefined> {
  const head = await readHead(io, id);
  return head === undefined ? undefined : probePast(io, head);
}

/** `readCurrent` of a live session: `not_found` when it is missing or deleted. */
export async function readLive(io: ObjectIO, id: string): Promise<Current> {
  const current = await readCurrent(io, id);
  if (current === undefined || current.tombstone) throw errors.notFound(id);
  return current;
}

/**
 * Moves the head to `to` (a version of its generation) by compare-and-swap, unless it is
 * already there or further, or the session moved to another generation. A write resolves
 * only once the head names it, so the head is never behind an acknowledged write (only
 * behind the version of a writer that died, which readers probe past).
 */
export async function advanceHead(
  io: ObjectIO,
  to: Pick<Current, 'id' | 'gen' | 'n' | 'state' | 'tombstone' | 'headEtag' | 'operations'>,
): Promise<HeadMove> {
  const doing = `moving the head of "${to.id}"`;
  let etag = to.headEtag;
  const text = headToText(to);
  return retryLostRaces({ errors, operation: 'write', sessionId: to.id }, async () => {
    const out = await io.put(headKey(to.id), text, { ifMatch: etag }, doing);
    if (out.written) return { etag: out.etag };
    const now = await io.get(headKey(to.id), doing);
    if (now === undefined) return 'dead';
    let head: HeadRecord;
    try {
      head = headFromText(now.text, to.id);
    } catch {
      return { etag: undefined }; // a damaged head is repair()'s to rebuild
    }
    // Deleted (or re-created) meanwhile: a version written now landed in a dead
    // generation (its slot was freed when the deleted session's objects were removed).
    if (head.gen !== to.gen || (head.tombstone && !to.tombstone)) return 'dead';
    if (head.n >= to.n) return { etag: head.n === to.n ? now.etag : undefined };
    etag = now.etag;
    return LOST_RACE;
  });
}

/**
 * How a head move ended: the head names the version or a later one (`etag`: the head's
 * ETag when it names exactly that version, as this writer wrote or read it), or the
 * session's generation died meanwhile.
 */
export type HeadMove = { etag: string | undefined } | 'dead';

/** What the next version writes. */
export interface NextVersion {
  state: State;
  tombstone?: boolean | undefined;
  messages?: unknown[] | undefined;
  append?: unknown[] | undefined;
  /** The per-message search texts of `messages` or `append`. */
  texts?: string[] | undefined;
  /** The commit's operation id, recorded in the version itself. */
  operationId?: string | undefined;
}

/** A version that landed: the head's ETag after its move, and its search text's write. */
export interface Landed {
  headEtag: string | undefined;
  /** The search-text object's PUT, not waited for (a reader rebuilds a missing text). */
  text: Promise<void>;
}

/**
 * Writes version `current.n + 1` with `If-None-Match: *`, then moves the head to it; the
 * search text's PUT is started beside the head move and not waited for. `lost` when
 * another writer took that version first (re-read and decide again); `dead` when the
 * session was deleted meanwhile (the version and its text are removed again). The
 * version's PUT is abandoned (`unavailable`) after `abortAfterMs`: a version must land
 * within the prune grace of its head read, or a removed version's slot could be taken
 * again (see README "Storage"), and while its writer's marker is kept.
 */
export async function writeNext(
  io: ObjectIO,
  current: Current,
  next: NextVersion,
  abortAfterMs?: number,
): Promise<Landed | 'lost' | 'dead'> {
  const n = current.n + 1;
  const record: VersionRecord = {
    n,
    state: next.state,
    tombstone: next.tombstone === true,
    messages: next.messages,
    append: next.append,
    operationId: next.operationId,
  };
  const doing = `writing session "${current.id}"`;
  const version = versionKey(current.id, current.gen, n);
  const text = versionToText(record);
  // Compressed (off the event loop) while the version is on its way: not on the path.
  const texts = next.texts === undefined ? undefined : encodeSearchTexts(next.texts);
  texts?.catch(() => {}); // awaited below, only if the version landed
  const out = await io.put(version, text, { ifAbsent: true }, doing, abortAfterMs);
  if (!out.written) return 'lost';
  const textKeyOfN = textKey(current.id, current.gen, n);
  const operations = withOperation(current.operations, next.operationId, next.state);
  const textWrite =
    texts === undefined
      ? Promise.resolve()
      : texts.then((bytes) => writeSearchTextObject(io, textKeyOfN, bytes, doing));
  textWrite.catch(() => {}); // derived data: the caller tracks it, a reader rebuilds it
  const head = await advanceHead(io, {
    ...current,
    n,
    state: next.state,
    tombstone: record.tombstone,
    operations,
  });
  if (head !== 'dead') return { headEtag: head.etag, text: textWrite };
  // The session was deleted while this version was on its way: take it back (after its
  // text, so that no object of the dead generation is left behind).
  await textWrite.catch(() => {});
  await io.deleteMany([version, textKeyOfN], doing);
  return 'dead';
}
