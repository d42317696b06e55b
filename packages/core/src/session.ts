import { incrementedCost, incrementedCount } from './counters.js';
import { type ErrorFactory, errorsFor } from './errors.js';
import { newSessionId } from './ids.js';
import type {
  CommitInput,
  JsonValue,
  Message,
  Session,
  SessionInput,
  SessionSummary,
} from './types.js';
import type { NormalizedListOptions } from './validate.js';

const coreErrors = errorsFor('core');

/**
 * A new session object (not yet stored): a fresh time-sortable id, `status "active"`,
 * empty history. Pass it to `store.create`.
 */
export function newSession<M = Message>(
  init: Partial<Omit<SessionInput<M>, 'id'>> & { id?: string } = {},
): SessionInput<M> {
  return { ...init, id: init.id ?? newSessionId() };
}

/** True when the session was branched or forked from another (it has a `parentId`). */
export function isSubSession(session: { parentId?: string | undefined }): boolean {
  return typeof session.parentId === 'string' && session.parentId !== '';
}

/** Longest title `autoTitle` produces. */
export const AUTO_TITLE_LENGTH = 72;

/**
 * The searchable text of one message: a string message itself, a string `content` or
 * `text`, or the `text` of each content part. Other fields (tool arguments, images) are
 * not searched. Stores index this at write time so search never reads transcripts.
 */
export function messageText(message: unknown): string {
  if (typeof message === 'string') return message;
  if (typeof message !== 'object' || message === null) return '';
  const m = message as { content?: unknown; text?: unknown };
  const parts: string[] = [];
  if (typeof m.text === 'string') parts.push(m.text);
  if (typeof m.content === 'string') parts.push(m.content);
  else if (Array.isArray(m.content)) {
    for (const part of m.content) {
      if (typeof part === 'string') parts.push(part);
      else if (
        part &&
        typeof part === 'object' &&
        typeof (part as { text?: unknown }).text === 'string'
      ) {
        parts.push((part as { text: string }).text);
      }
    }
  }
  return parts.join('\n');
}

/**
 * What separates two messages' texts in a search text: `"A"`. Search texts and queries
 * are lower-cased, and no lower-cased string contains an upper-case `A`, so a query can
 * match inside one message's text but never across two.
 */
export const SEARCH_TEXT_SEPARATOR = 'A';

/**
 * Lower-cased search text of many messages, each message's text after a
 * `SEARCH_TEXT_SEPARATOR` (messages without text are skipped). Texts of later messages
 * can be appended to it (`a + b` of two histories equals the text of both), and
 * `searchTextMatches` finds a query only within one message.
 */
export function searchTextOf(messages: readonly unknown[]): string {
  let out = '';
  for (const m of messages) {
    const t = messageText(m);
    if (t) out += `${SEARCH_TEXT_SEPARATOR}${t.toLowerCase()}`;
  }
  return out;
}

/**
 * True when the lower-cased `query` occurs in `searchText` (a `searchTextOf` result)
 * within one message's text. `query` must already be lower-cased (as
 * `normalizeListOptions` gives it) and not empty.
 */
export function searchTextMatches(searchText: string, query: string): boolean {
  return searchText.includes(query);
}

/**
 * A title from the first user message (a message with `role: "user"`, or a bare string
 * message): whitespace collapsed, at most 72 characters.
 * Returns the session unchanged when it already has a title (titles are never
 * overwritten) or has no user text; otherwise a copy with the new title.
 */
export function autoTitle<S extends { title: string; messages: readonly unknown[] }>(
  session: S,
): S {
  if (session.title.trim() !== '') return session;
  for (const m of session.messages) {
    if (typeof m === 'object' && m !== null && (m as { role?: unknown }).role !== 'user') continue;
    const title = titleFromText(messageText(m));
    if (title) return { ...session, title };
  }
  return session;
}

/** `text` with whitespace collapsed, cut to 72 characters (whole code points). */
export function titleFromText(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat);
  return chars.length <= AUTO_TITLE_LENGTH
    ? flat
    : chars.slice(0, AUTO_TITLE_LENGTH).join('').trimEnd();
}

/**
 * A deep copy of a validated JSON value as a serialising backend would return it:
 * `undefined` object properties are dropped (JSON has no `undefined`), `-0` becomes `0`,
 * and keys such as `__proto__` stay ordinary own keys (as `JSON.parse` makes them), so
 * in-memory adapters hand back exactly what a database or file round trip would.
 * Recursive: call it on values `assertJsonValue` accepted (at most 512 levels deep).
 */
export function cloneJson<T>(value: T): T {
  if (typeof value === 'number') return (value === 0 ? 0 : value) as T;
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => cloneJson(item)) as T;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item !== undefined) setOwn(out, key, cloneJson(item));
  }
  return out as T;
}

/**
 * Sets `obj[key] = value` as an own, enumerable data property, also for `__proto__`
 * (a plain assignment would change the prototype instead of storing the key).
 */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A deep, caller-owned copy of a session. */
export function copySession<M>(session: Session<M>): Session<M> {
  return structuredClone(session);
}

/** The summary of a session (everything but the messages, plus `messageCount`). */
export function toSummary<M>(session: Session<M>): SessionSummary {
  const { messages, ...rest } = session;
  return { ...structuredClone(rest), messageCount: messages.length };
}

/**
 * Throws `conflict` unless the commit's expectations hold for the stored state. Adapters
 * call this after reading the stored revision and message count under their lock.
 */
export function checkCommitExpectations(
  errors: ErrorFactory,
  id: string,
  stored: { revision: number; messageCount: number },
  input: Pick<CommitInput<unknown>, 'expectedRevision' | 'expectedMessageCount'>,
): void {
  if (input.expectedRevision !== undefined && input.expectedRevision !== stored.revision) {
    throw errors.conflict(id, input.expectedRevision, stored.revision);
  }
  if (
    input.expectedMessageCount !== undefined &&
    input.expectedMessageCount !== stored.messageCount
  ) {
    throw errors.messageCountConflict(id, input.expectedMessageCount, stored.messageCount);
  }
}

/**
 * The header fields (everything but messages and children) after a commit: patch and
 * increments applied, `revision + 1`, `updatedAt = now`, `messageCount` updated.
 * Throws `invalid_argument` (from `errors`) when an increment's result would leave the
 * counter's range (`incrementedCount`, `incrementedCost`): check it before writing.
 * Pure; message storage is the adapter's business.
 */
export function applyCommitToSummary<T extends Omit<SessionSummary, 'children'>>(
  header: T,
  input: CommitInput<unknown>,
  now: Date,
  errors: ErrorFactory = coreErrors,
): T {
  const next: T = { ...header, metadata: { ...header.metadata } };
  const p = input.patch;
  if (p) {
    if (p.title !== undefined) next.title = p.title;
    if (p.folder !== undefined) next.folder = p.folder;
    if (p.status !== undefined) next.status = p.status;
    if (p.model !== undefined) next.model = p.model;
    if (p.provider !== undefined) next.provider = p.provider;
    if (p.tokenCount !== undefined) next.tokenCount = p.tokenCount;
    if (p.costUsd !== undefined) next.costUsd = p.costUsd;
    if (p.turnCount !== undefined) next.turnCount = p.turnCount;
    if (p.metadata) {
      const parts = metadataPatchParts(p.metadata);
      for (const k of parts.remove) delete next.metadata[k];
      for (const [k, v] of Object.entries(parts.set)) setOwn(next.metadata, k, v);
    }
    if (p.state !== undefined) {
      if (p.state === null) delete next.state;
      else next.state = cloneJson(p.state) as JsonValue;
    }
    if (p.archivedAt !== undefined) {
      if (p.archivedAt === null) delete next.archivedAt;
      else next.archivedAt = new Date(p.archivedAt.getTime());
    }
    if (p.mode !== undefined) {
      if (p.mode === null) delete next.mode;
      else next.mode = p.mode;
    }
  }
  // `+ 0` turns a patched `-0` into `0`, as every serialising backend stores it.
  next.tokenCount += 0;
  next.turnCount += 0;
  next.costUsd += 0;
  const inc = input.increment;
  if (inc) {
    if (inc.tokenCount)
      next.tokenCount = incrementedCount(
        errors,
        header.id,
        'tokenCount',
        next.tokenCount,
        inc.tokenCount,
      );
    if (inc.turnCount)
      next.turnCount = incrementedCount(
        errors,
        header.id,
        'turnCount',
        next.turnCount,
        inc.turnCount,
      );
    if (inc.costUsd) next.costUsd = incrementedCost(errors, header.id, next.costUsd, inc.costUsd);
  }
  if (input.replace) next.messageCount = input.replace.length;
  else if (input.append) next.messageCount = header.messageCount + input.append.length;
  next.revision = header.revision + 1;
  next.updatedAt = now;
  return next;
}

/**
 * A timestamp for a write that is strictly after `previous`, so `updatedAt` always moves
 * forward even when the clock did not (two writes in one millisecond, a clock step back).
 */
export function nextUpdatedAt(previous: Date | undefined, now: Date = new Date()): Date {
  if (previous && now.getTime() <= previous.getTime()) return new Date(previous.getTime() + 1);
  return now;
}

/** The fields an in-memory index needs to filter and order a session. */
export interface ListableEntry {
  id: string;
  updatedAt: Date;
  folder: string;
  status: string;
  parentId?: string | undefined;
  archivedAt?: Date | undefined;
  title: string;
  /** Lower-cased message text, see `searchTextOf`. */
  searchText: string;
}

/** True when `entry` passes the filters of `opts` (not the cursor, limit or offset). */
/**
 * How a commit's `patch.metadata` reads: the keys to set (own keys of a fresh object, so
 * `__proto__` is data) and the keys to delete (`null` values). Pure.
 */
export function metadataPatchParts(patch: Record<string, string | null>): {
  set: Record<string, string>;
  remove: string[];
} {
  const set: Record<string, string> = {};
  const remove: string[] = [];
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) remove.push(k);
    else setOwn(set, k, v);
  }
  return { set, remove };
}

/**
 * The title half of `list`'s query rule: the lower-cased `query` occurs in the title,
 * compared lower-cased. (The other half is `searchTextMatches` on one message's text.)
 */
export function titleMatchesQuery(title: string, query: string): boolean {
  return title.toLowerCase().includes(query);
}

export function matchesListFilters(entry: ListableEntry, opts: NormalizedListOptions): boolean {
  if (opts.folder !== undefined && entry.folder !== opts.folder) return false;
  if (opts.status !== undefined && entry.status !== opts.status) return false;
  if (opts.parentId !== undefined && entry.parentId !== opts.parentId) return false;
  if (!opts.includeArchived && entry.archivedAt) return false;
  if (opts.after !== undefined && entry.updatedAt.getTime() <= opts.after) return false;
  if (opts.query !== undefined) {
    if (
      !titleMatchesQuery(entry.title, opts.query) &&
      !searchTextMatches(entry.searchText, opts.query)
    )
      return false;
  }
  return true;
}

/** Byte-order comparison of two ids (ids are ASCII, so UTF-16 order equals byte order). */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Listing order: `updatedAt` desc then `id` desc, or both asc with `oldestFirst`. */
export function compareListOrder(
  a: { updatedAt: Date | number; id: string },
  b: { updatedAt: Date | number; id: string },
  oldestFirst: boolean,
): number {
  const ta = typeof a.updatedAt === 'number' ? a.updatedAt : a.updatedAt.getTime();
  const tb = typeof b.updatedAt === 'number' ? b.updatedAt : b.updatedAt.getTime();
  const c = ta !== tb ? (ta < tb ? -1 : 1) : compareIds(a.id, b.id);
  return oldestFirst ? c : -c;
}

/** True when `entry` comes strictly after the keyset cursor in the chosen order. */
export function isAfterCursor(
  entry: { updatedAt: Date; id: string },
  cursor: { updatedAt: number; id: string },
  oldestFirst: boolean,
): boolean {
  return compareListOrder(entry, cursor, oldestFirst) > 0;
}

/**
 * Filters, orders and pages in-memory index entries the way `Store.list` must. Used by
 * adapters whose listing reads an index held in memory (memory, file).
 */
export function selectPage<E extends ListableEntry>(
  entries: Iterable<E>,
  opts: NormalizedListOptions,
): E[] {
  const hits: E[] = [];
  for (const e of entries) {
    if (!matchesListFilters(e, opts)) continue;
    if (opts.startAfter && !isAfterCursor(e, opts.startAfter, opts.oldestFirst)) continue;
    hits.push(e);
  }
  hits.sort((a, b) => compareListOrder(a, b, opts.oldestFirst));
  return hits.slice(opts.offset, opts.offset + opts.limit);
}
