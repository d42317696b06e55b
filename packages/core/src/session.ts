import { incrementedCost, incrementedCount } from './counters.js';
import { type ErrorFactory, errorsFor } from './errors.js';
import { newSessionId } from './ids.js';
import type { NormalizedListOptions } from './input/list-input.js';
import type {
  CommitInput,
  JsonValue,
  Message,
  Session,
  SessionInput,
  SessionSummary,
} from './types.js';
import { MAX_DATE_MS } from './validate.js';

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
 * The searchable text of one message (what `list({ query })` and `autoTitle` read): a
 * string message itself; a string `text` or `content`; and the `text` of each part in
 * `content[]`, `parts[]` or `content.parts[]` whose `type` is `"text"`, `"input_text"`,
 * `"output_text"` or absent (a string item of such an array counts as text) — the shapes
 * of provider messages and OpenAI Responses items, the AI SDK's `UIMessage` and Mastra's
 * stored messages. Tool calls, tool arguments, reasoning, images,
 * roles and JSON keys are never read. The texts of one message are joined with `"\n"`.
 * The result is well-formed Unicode: a lone surrogate reads as U+FFFD, as it would after
 * any UTF-8 round trip, so every backend searches the same text. Pure.
 */
export function messageText(message: unknown): string {
  if (typeof message === 'string') return wellFormed(message);
  if (typeof message !== 'object' || message === null) return '';
  const m = message as { content?: unknown; text?: unknown; parts?: unknown };
  const texts: string[] = [];
  if (typeof m.text === 'string') texts.push(m.text);
  if (typeof m.content === 'string') texts.push(m.content);
  else if (Array.isArray(m.content)) partTexts(m.content, texts);
  else if (typeof m.content === 'object' && m.content !== null) {
    const nested = (m.content as { parts?: unknown }).parts;
    if (Array.isArray(nested)) partTexts(nested, texts);
  }
  if (Array.isArray(m.parts)) partTexts(m.parts, texts);
  return wellFormed(texts.join('\n'));
}

/** Pushes the text of each text part (`type` "text" or absent, or a bare string). */
function partTexts(parts: readonly unknown[], into: string[]): void {
  for (const part of parts) {
    if (typeof part === 'string') into.push(part);
    else if (typeof part === 'object' && part !== null) {
      const p = part as { type?: unknown; text?: unknown };
      if (isTextPart(p.type) && typeof p.text === 'string') {
        into.push(p.text);
      }
    }
  }
}

/**
 * Whether a part of this `type` holds text to search: no type, `"text"`, or the OpenAI
 * Responses API's `"input_text"` and `"output_text"` (every answer of an Agents SDK run).
 */
function isTextPart(type: unknown): boolean {
  return type === undefined || type === 'text' || type === 'input_text' || type === 'output_text';
}

// String.prototype.toWellFormed (ES2024; in every supported Node) replaces lone surrogates.
const toWellFormed = (String.prototype as { toWellFormed?: (this: string) => string }).toWellFormed;

function wellFormed(text: string): string {
  return toWellFormed ? toWellFormed.call(text) : text;
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
 * True when the lower-cased `query` occurs within one message's text: `searchText` is a
 * `searchTextOf` result, or the lower-cased texts of the messages one by one
 * (`searchTextsOf`). `query` must already be lower-cased (as `normalizeListOptions` gives
 * it) and not empty.
 */
export function searchTextMatches(searchText: string | readonly string[], query: string): boolean {
  if (typeof searchText === 'string') return searchText.includes(query);
  for (const text of searchText) if (text.includes(query)) return true;
  return false;
}

/**
 * The lower-cased text of each message (`""` for a message without text), one entry per
 * message: a history kept this way is truncated by dropping entries, without reading the
 * kept ones again. Pure.
 */
export function searchTextsOf(messages: readonly unknown[]): string[] {
  return messages.map((m) => messageText(m).toLowerCase());
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
  // Only `__proto__` has a setter on a plain object: every other key is assigned, which
  // keeps the object in V8's fast mode (a copied message is stringified on every commit).
  if (key === '__proto__')
    Object.defineProperty(obj, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  else obj[key] = value;
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
 * increments applied, `revision + 1`, `updatedAt = now`, `messageCount` updated (`replace`,
 * or the kept `truncate` prefix plus `append`).
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
  const next = applyCommitToHeader(header, input, now, errors);
  next.messageCount = committedMessageCount(header.messageCount, input);
  return next;
}

/**
 * `applyCommitToSummary` of a header without a message count (a copy with patch,
 * increments, `revision + 1` and `updatedAt = now`; every other field kept): what a
 * commit's plan stores. Kept apart so a plan never adds and strips a `messageCount` field
 * (in V8 both cost more than the rest of the header's copy). Throws as
 * `applyCommitToSummary`. Pure.
 */
export function applyCommitToHeader<T extends Omit<SessionSummary, 'children' | 'messageCount'>>(
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
  next.revision = header.revision + 1;
  next.updatedAt = now;
  return next;
}

/**
 * The message count after a commit of `input` to a session of `stored` messages: the
 * replacement's length, or the kept `truncate` prefix plus `append`.
 */
export function committedMessageCount(stored: number, input: CommitInput<unknown>): number {
  if (input.replace) return input.replace.length;
  // `truncate` keeps a prefix (checked against the stored count by `planCommit`).
  const kept = input.truncate === undefined ? stored : input.truncate;
  return kept + (input.append?.length ?? 0);
}

/**
 * A timestamp for a write that is strictly after `previous`, so `updatedAt` always moves
 * forward even when the clock did not (two writes in one millisecond, a clock step back).
 */
export function nextUpdatedAt(previous: Date | undefined, now: Date = new Date()): Date {
  if (previous && now.getTime() <= previous.getTime()) return new Date(previous.getTime() + 1);
  return now;
}

/**
 * The `updatedAt` of a write to session `id`, stored with `previous`: `nextUpdatedAt`,
 * kept within the dates a store keeps. Throws `invalid_argument` (the write is refused and
 * nothing is written) when that is past 9999-12-31T23:59:59.999Z: a session created at
 * the latest date has no later moment to move to, and storing one past it would leave a
 * session that no read accepts.
 */
export function nextWriteTime(
  errors: ErrorFactory,
  id: string,
  previous: Date,
  now: Date = new Date(),
): Date {
  const next = nextUpdatedAt(previous, now);
  if (next.getTime() > MAX_DATE_MS) {
    throw errors.invalid(
      `session "${id}" was last written at ${previous.toISOString()}, the latest date a store keeps: a write must move updatedAt past it, so none can — nothing was written`,
      id,
    );
  }
  return next;
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
  /** Lower-cased message text: a `searchTextOf` result, or the texts one by one (`searchTextsOf`). */
  searchText: string | readonly string[];
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
