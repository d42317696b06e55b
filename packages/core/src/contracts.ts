import type {
  CallOptions,
  CommitInput,
  CommitResult,
  EventQuery,
  JsonValue,
  ListOptions,
  Message,
  MessageWindow,
  MessageWindowQuery,
  RepairReport,
  RouterRow,
  Session,
  SessionEvent,
  SessionInput,
  SessionSummary,
} from './types.js';

/**
 * The base contract every store implements. Every method validates its arguments before
 * any I/O (`invalid_argument`, nothing written), works on a copy of what it is given (the
 * argument is read once and never kept or mutated) and returns values the caller owns.
 * Backend failures are wrapped: `unavailable` (unreachable, busy; safe to retry),
 * `corrupt` (stored data that cannot be read); after `close()` every call fails with
 * `closed`. The trailing `call` argument (`CallOptions`) carries an `AbortSignal`:
 * aborted before the call → `aborted`, nothing written; during a read → `aborted`; a write
 * that reached its atomic step lands whole, one that did not writes nothing.
 */
export interface Store<M = Message> {
  /**
   * Stores a new session at revision 1 and returns it (a new object). Fields not given
   * take their defaults (`title ""`, `status "active"`, counters 0, `createdAt` and
   * `updatedAt` now); given `createdAt`/`updatedAt` are kept, and without `createdAt` an
   * older `updatedAt` becomes the creation time. `parentId` is recorded as given (the
   * parent need not exist yet, so imports can restore trees in any order). Throws
   * `exists` when the id is taken, `invalid_argument`.
   */
  create(session: SessionInput<M>, call?: CallOptions): Promise<Session<M>>;
  /** The full session with `messages` and `children`, caller-owned. Throws `not_found`. */
  load(id: string, call?: CallOptions): Promise<Session<M>>;
  /**
   * Replaces the stored session. `session.revision` must equal the stored revision, else
   * `conflict` and nothing is written. Returns a new object with `revision + 1` and
   * `updatedAt` = now — or 1 ms after the stored `updatedAt` when the clock has not moved
   * past it, so every write moves `updatedAt` strictly forward. `children`, `parentId`,
   * `branchedAtTurn` and `createdAt` are kept by the store and ignored here; absent
   * optional fields (`state`, `mode`, `archivedAt`) are cleared and absent counters are 0.
   * A save whose messages do not begin with the stored ones rewrites the history (a branch
   * taken before it no longer merges). Throws `not_found`, `conflict`.
   */
  save(session: Session<M>, call?: CallOptions): Promise<Session<M>>;
  /**
   * Removes the session with its messages, runtime status, events and router bindings
   * (and the follow targets that pin it). Its children are promoted to its parent: their
   * `parentId` becomes the deleted session's `parentId` (or none), and a promoted branch's
   * `branchedAtTurn` becomes the smaller of its own and the deleted session's, so a later
   * `merge` can never skip past the new parent's history. Their revision and `updatedAt`
   * do not change. Throws `not_found`.
   */
  delete(id: string, call?: CallOptions): Promise<void>;
  /**
   * Summaries matching the filters, `updatedAt` desc then `id` desc in byte order
   * (`oldestFirst` reverses both). Never reads message bodies; a summary equals the loaded
   * session without its messages, plus `messageCount`. See `ListOptions` for the filters,
   * limits and keyset paging. Throws `invalid_argument` on bad options, including unknown
   * keys.
   */
  list(options?: ListOptions, call?: CallOptions): Promise<SessionSummary[]>;
  /** Releases what the store owns (never a borrowed client). Idempotent. */
  close(): Promise<void>;
}

/** Atomic turn writes whose cost does not grow with the stored history. */
export interface Committer<M = Message> {
  /**
   * The turn write, in one atomic step: keeps the first `truncate` messages (when given),
   * appends `append` (or replaces the history with `replace`), applies `patch` (fields;
   * `metadata` merged, a `null` value removes a key) and adds `increment` to the counters.
   * With `expectedRevision`/`expectedMessageCount` that do not hold → `conflict` and
   * nothing at all is written, counters included. Without them, concurrent appends and
   * increments are all kept. A commit whose `operationId` the session has already
   * recorded writes nothing and resolves with the first one's result, whatever its
   * expectations (the check comes first). Its cost does not grow with the stored history.
   * Throws `not_found`, `conflict`, `invalid_argument` (also `truncate` outside
   * `0..messageCount`, or an increment that would leave a counter's range).
   */
  commit(id: string, input: CommitInput<M>, call?: CallOptions): Promise<CommitResult>;
}

/** Tree-structured sessions. */
export interface Brancher<M = Message> {
  /**
   * A new session with the parent's first `atTurn` messages (`atTurn` counts messages,
   * not turns), the parent's counters, `state` and `mode`, `parentId` and
   * `branchedAtTurn = atTurn` set; the parent's `children` gains it. The parent is read in
   * the same atomic step and its revision does not change. Throws `not_found`,
   * `invalid_argument` (`atTurn` outside `0..messageCount`).
   */
  branch(parentId: string, atTurn: number, call?: CallOptions): Promise<Session<M>>;
  /**
   * An independent copy with the full history, counters, `state` and `mode`, no parent
   * link, not archived, `metadata.clonedFrom = id`. Throws `not_found`.
   */
  clone(id: string, call?: CallOptions): Promise<Session<M>>;
  /**
   * Fast-forwards the parent to the child's messages and returns the parent
   * (`revision + 1`). A merge never loses data: when the parent's history changed after
   * the branch point in any way — messages appended, dropped or replaced, even with the
   * same count — it throws `merge_diverged` and writes nothing. Counter changes the parent
   * made after the branch are kept: each counter ends as the parent's plus what the branch
   * added since it started. Title, metadata and the other fields stay the parent's.
   * Throws `invalid_argument` when the child has no parent, `not_found`. Concurrent merges
   * into one parent are serialised.
   */
  merge(childId: string, call?: CallOptions): Promise<Session<M>>;
}

/** Reads of committed history that are safe during concurrent turns. */
export interface HistoryReader<M = Message> {
  /**
   * A caller-owned snapshot of the committed messages, or a window of it
   * (`{last: n}`, `{offset, limit}`; see `MessageWindowQuery`): equal to the history (or
   * a slice of the history) before or after any concurrent commit, never a mix. A
   * window's cost grows with the window, not with the stored history; a window past the
   * end is empty. Throws `not_found`, `invalid_argument` (a bad window, naming the key).
   */
  loadMessages(id: string, window?: MessageWindowQuery, call?: CallOptions): Promise<M[]>;
  /**
   * The same window with its absolute position, the history's length and the revision,
   * all from one snapshot (see `MessageWindow`), for paging backwards. Optional: core's
   * `loadMessageWindow(store, id, window)` falls back on a full `load` when a store does
   * not have it. Throws `not_found`, `invalid_argument`.
   */
  loadMessageWindow?(
    id: string,
    window?: MessageWindowQuery,
    call?: CallOptions,
  ): Promise<MessageWindow<M>>;
}

/** Observed evaluation/check state, kept apart from transcript writes. */
export interface RuntimeStatusStore {
  /**
   * Stores `status` (any JSON) for the session. Over `MAX_RUNTIME_STATUS_BYTES` of UTF-8
   * JSON → `too_large`, nothing written. `save`/`commit` never touch it and it never
   * touches them. Throws `not_found`.
   */
  saveRuntimeStatus(id: string, status: JsonValue, call?: CallOptions): Promise<void>;
  /** The stored status, or `null` when none was saved. Throws `not_found`. */
  loadRuntimeStatus(id: string, call?: CallOptions): Promise<JsonValue | null>;
}

/** Chat-gateway routing: which session a channel/chat/thread talks to. */
export interface SessionRouter {
  /**
   * Binds the tuple to an existing session (replacing any binding; the binding's time
   * becomes now). `channel` and `chatKey` must not be empty. Throws `not_found` for a
   * missing session, `invalid_argument`.
   */
  bind(channel: string, chatKey: string, thread: string, sessionId: string): Promise<void>;
  /**
   * The session for the tuple, or `""`. A follow target on `(channel, chatKey)` wins:
   * `"tui"` follows `liveSessionId` (the binding when that is `""`), any other value pins
   * that session id.
   */
  resolve(channel: string, chatKey: string, thread: string, liveSessionId: string): Promise<string>;
  /** Removes the binding (also from `recent`); a missing one is not an error. */
  unbind(channel: string, chatKey: string, thread: string): Promise<void>;
  /**
   * Sets the follow target of `(channel, chatKey)`: `"tui"`, a session id, or `""` to
   * clear. Empty channel → `invalid_argument`.
   */
  follow(channel: string, chatKey: string, target: string): Promise<void>;
  /** Moves the binding's time strictly forward; a missing binding is not an error. */
  touch(channel: string, chatKey: string, thread: string): Promise<void>;
  /** Bindings, newest first. `limit` as in `list` (0 or absent → 50, max 1000). */
  recent(limit?: number): Promise<RouterRow[]>;
}

/** An append-only, gapless event log per session. */
export interface EventLog {
  /**
   * Appends an event; sequences are 1, 2, 3 … per session without gaps even under
   * concurrent appends. `revision` is the session's revision at that moment; `payload`
   * defaults to `null`. Throws `not_found`, `invalid_argument`.
   */
  append(id: string, type: string, payload?: JsonValue, call?: CallOptions): Promise<SessionEvent>;
  /**
   * Events in sequence order after `afterSequence`, at most `limit` (1–10000; unknown
   * keys rejected). Throws `not_found`.
   */
  events(id: string, query?: EventQuery, call?: CallOptions): Promise<SessionEvent[]>;
}

/** Native, atomic retention. */
export interface Pruner {
  /**
   * Keeps the newest `max` root sessions (by `updatedAt`, ties by `id`, as `list` orders
   * them; archived ones included) and deletes the other roots with `delete`'s rules;
   * sub-sessions neither count nor are selected. `max <= 0` means unlimited. Returns how
   * many were deleted.
   */
  enforceMax(max: number, call?: CallOptions): Promise<number>;
}

/** Rebuilds a store's derived index from its authoritative data. */
export interface Repairer {
  /**
   * Rebuilds index entries (and search text) from authoritative data; unreadable sessions
   * are reported and left untouched. Safe to run while the store is in use.
   */
  repair(call?: CallOptions): Promise<RepairReport>;
}

/** The capabilities a store may offer beyond `Store`. */
export const CAPABILITIES = [
  'Committer',
  'Brancher',
  'HistoryReader',
  'RuntimeStatusStore',
  'SessionRouter',
  'EventLog',
  'Pruner',
  'Repairer',
] as const;

export type Capability = (typeof CAPABILITIES)[number];

function hasMethods(value: unknown, names: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return names.every((n) => typeof record[n] === 'function');
}

const CAPABILITY_METHODS: Record<Capability | 'Store', readonly string[]> = {
  Store: ['create', 'load', 'save', 'delete', 'list', 'close'],
  Committer: ['commit'],
  Brancher: ['branch', 'clone', 'merge'],
  HistoryReader: ['loadMessages'],
  RuntimeStatusStore: ['saveRuntimeStatus', 'loadRuntimeStatus'],
  SessionRouter: ['bind', 'resolve', 'unbind', 'follow', 'touch', 'recent'],
  EventLog: ['append', 'events'],
  Pruner: ['enforceMax'],
  Repairer: ['repair'],
};

/** True when `value` has every method of the base `Store` contract. */
export function isStore<M = Message>(value: unknown): value is Store<M> {
  return hasMethods(value, CAPABILITY_METHODS.Store);
}
/** True when the store offers `commit`. */
export function isCommitter<M = Message>(store: unknown): store is Committer<M> {
  return hasMethods(store, CAPABILITY_METHODS.Committer);
}
/** True when the store offers `branch`, `clone` and `merge`. */
export function isBrancher<M = Message>(store: unknown): store is Brancher<M> {
  return hasMethods(store, CAPABILITY_METHODS.Brancher);
}
/** True when the store offers `loadMessages`. */
export function isHistoryReader<M = Message>(store: unknown): store is HistoryReader<M> {
  return hasMethods(store, CAPABILITY_METHODS.HistoryReader);
}
/** True when the store offers runtime status. */
export function isRuntimeStatusStore(store: unknown): store is RuntimeStatusStore {
  return hasMethods(store, CAPABILITY_METHODS.RuntimeStatusStore);
}
/** True when the store offers the session router. */
export function isSessionRouter(store: unknown): store is SessionRouter {
  return hasMethods(store, CAPABILITY_METHODS.SessionRouter);
}
/** True when the store offers the event log. */
export function isEventLog(store: unknown): store is EventLog {
  return hasMethods(store, CAPABILITY_METHODS.EventLog);
}
/** True when the store prunes natively. */
export function isPruner(store: unknown): store is Pruner {
  return hasMethods(store, CAPABILITY_METHODS.Pruner);
}
/** True when the store can repair its index. */
export function isRepairer(store: unknown): store is Repairer {
  return hasMethods(store, CAPABILITY_METHODS.Repairer);
}

/** The capabilities `store` offers, detected from its methods (never from its name). */
export function detectCapabilities(store: unknown): Capability[] {
  return CAPABILITIES.filter((c) => hasMethods(store, CAPABILITY_METHODS[c]));
}

/** A store with every capability, as first-party adapters are. */
export type FullStore<M = Message> = Store<M> &
  Committer<M> &
  Brancher<M> &
  HistoryReader<M> &
  RuntimeStatusStore &
  SessionRouter &
  EventLog &
  Pruner &
  Repairer;
