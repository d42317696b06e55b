import type { RouterRow, Session, SessionEvent, SessionSummary } from '@sessionkit/core';
import type { HistoryLineage } from '@sessionkit/core/adapter';
import { compareIds, ListIndex, OperationLog, searchTextsOf } from '@sessionkit/core/adapter';

/** A stored session's header: every field except its messages and its derived children. */
export type MemoryHeader = Omit<Session<unknown>, 'messages' | 'children'>;

/** One stored session, as a `MemoryBackend` holds it. */
export interface MemoryRecord {
  header: MemoryHeader;
  /** The committed history. Appends push onto this array; truncation shortens it; replaces swap it. */
  messages: unknown[];
  /**
   * The lower-cased text of each message (`searchTextsOf` of `messages`), one entry per
   * message, kept in step on every write (a truncation drops entries).
   */
  searchTexts: string[];
  /** The operation ids of the session's recent commits with their results. */
  operations: OperationLog;
  /** The runtime status as JSON text, or `null` when none was saved. */
  runtimeStatus: string | null;
  /** The event log, sequences 1, 2, 3 … in order. */
  events: SessionEvent[];
  /**
   * What merges need beyond the header (core's `HistoryLineage`): how often the history
   * was rewritten and, for a session with a parent, what it was based on. A record
   * without one (edited by hand) reads as core's `readLineage(undefined)`.
   */
  lineage?: HistoryLineage | undefined;
}

/**
 * One entry of the listing index: what a summary needs (everything but `children`, which
 * are derived) plus the search text. `list` reads only these, never a record's messages.
 */
export type IndexEntry = Omit<SessionSummary, 'children'> & { searchText: readonly string[] };

/** A follow target of a `(channel, chatKey)` pair: `"tui"` or a session id. */
export interface FollowEntry {
  channel: string;
  chatKey: string;
  target: string;
}

const named = new Map<string, MemoryBackend>();

/**
 * The data of memory stores. Several `MemoryStore` instances over one backend see the same
 * sessions, as several connections to one database would.
 *
 * Every field is public for tests and tools: reading or writing them directly bypasses
 * every guarantee (validation, copying, index maintenance). Use `repair()` on a store to
 * rebuild `index` and `childrenOf` after editing `records` by hand.
 */
export class MemoryBackend {
  /** The authoritative data: session id → record. */
  readonly records = new Map<string, MemoryRecord>();
  /**
   * The listing and search index, kept in step with `records` on every write: a `Map` by
   * id that also keeps the entries in listing order (core's `ListIndex`), so a page costs
   * O(log n + page) however many sessions there are.
   */
  readonly index = new ListIndex<IndexEntry>();
  /** Derived tree: parent id → ids of the sessions whose `parentId` is that id. */
  readonly childrenOf = new Map<string, Set<string>>();
  /** Router bindings, keyed by `bindingKey(channel, chatKey, thread)`. */
  readonly bindings = new Map<string, RouterRow>();
  /** Router follow targets, keyed by `followKey(channel, chatKey)`. */
  readonly follows = new Map<string, FollowEntry>();
  /** Counters for tests: how often an operation read a session's message bodies. */
  readonly stats = { messageBodyReads: 0 };
  /**
   * The latest router timestamp handed out. Binding times are strictly increasing across
   * the backend, so `recent()` orders bindings exactly as they were bound or touched.
   */
  lastRouterUpdate: Date | undefined = undefined;

  /**
   * The process-wide backend called `name`, created on first use. `openStore('memory:NAME')`
   * opens stores on it, so two such calls share data. Names are never released.
   */
  static named(name: string): MemoryBackend {
    let backend = named.get(name);
    if (!backend) {
      backend = new MemoryBackend();
      named.set(name, backend);
    }
    return backend;
  }
}

/** Router keys of `MemoryBackend.bindings` and `.follows`: the kit's. */
export { bindingKey, followKey } from '@sessionkit/core/adapter';

/**
 * The index entry of a record. It shares the header's values: a stored header is never
 * changed in place (every write stores a new one), and stores hand out copies.
 */
export function indexEntryOf(record: MemoryRecord): IndexEntry {
  return {
    ...record.header,
    messageCount: record.messages.length,
    searchText: record.searchTexts,
  };
}

/**
 * Stores the record of a session written for the first time (create, branch, clone): its
 * messages, lineage and search texts (computed unless given) as given, no runtime status,
 * an empty event log and no operation ids; indexed, and linked under its parent in the
 * derived tree.
 */
export function insertNewRecord(
  backend: MemoryBackend,
  header: MemoryHeader,
  messages: unknown[],
  lineage: HistoryLineage,
  searchTexts: string[] = searchTextsOf(messages),
): MemoryRecord {
  const record: MemoryRecord = {
    header,
    messages,
    searchTexts,
    operations: new OperationLog(),
    runtimeStatus: null,
    // Stryker disable next-line ArrayDeclaration: equivalent — events() and append() only see entries with a numeric sequence, so a non-event placeholder is invisible.
    events: [],
    lineage,
  };
  putRecord(backend, record);
  if (header.parentId !== undefined) linkChild(backend, header.parentId, header.id);
  return record;
}

/** Stores `record` under its id and refreshes its index entry (not the tree). */
export function putRecord(backend: MemoryBackend, record: MemoryRecord): void {
  backend.records.set(record.header.id, record);
  backend.index.set(record.header.id, indexEntryOf(record));
}

/** Records `childId` as a child of `parentId` in the derived tree. */
export function linkChild(backend: MemoryBackend, parentId: string, childId: string): void {
  let set = backend.childrenOf.get(parentId);
  if (!set) {
    set = new Set();
    backend.childrenOf.set(parentId, set);
  }
  set.add(childId);
}

/** Removes `childId` from the children of `parentId` in the derived tree. */
export function unlinkChild(backend: MemoryBackend, parentId: string, childId: string): void {
  const set = backend.childrenOf.get(parentId);
  // Stryker disable next-line ConditionalExpression: equivalent — a child is only unlinked from the parent it was linked under.
  if (!set) return;
  set.delete(childId);
  // Stryker disable next-line ConditionalExpression,CallExpression: equivalent — an empty child set and a missing one both derive children: [].
  if (set.size === 0) backend.childrenOf.delete(parentId);
}

/** The ids of the sessions whose `parentId` is `id`, ascending. A fresh array. */
export function childIds(backend: MemoryBackend, id: string): string[] {
  const set = backend.childrenOf.get(id);
  return set ? [...set].sort(compareIds) : [];
}
