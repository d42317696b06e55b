import type {
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
 * any I/O (`invalid_argument`), wraps backend failures (`unavailable`, `corrupt`) and
 * fails with `closed` after `close()`.
 */
export interface Store<M = Message> {
  /**
   * Stores a new session at revision 1 and returns it (a new object).
   * Fields not given take their defaults; given `createdAt`/`updatedAt` are kept.
   * `parentId` is recorded as given (the parent need not exist yet, so imports can
   * restore trees in any order). Throws `exists` when the id is taken.
   */
  create(session: SessionInput<M>): Promise<Session<M>>;
  /** The full session with `messages` and `children`, caller-owned. Throws `not_found`. */
  load(id: string): Promise<Session<M>>;
  /**
   * Replaces the stored session. `session.revision` must equal the stored revision, else
   * `conflict` and nothing is written. Returns a new object with `revision + 1` and
   * `updatedAt` = now — or 1 ms after the stored `updatedAt` when the clock has not moved
   * past it, so every write moves `updatedAt` strictly forward; the argument is never
   * mutated and never shared. `children`, `parentId`,
   * `branchedAtTurn` and `createdAt` are kept by the store and ignored here.
   * Throws `not_found`, `conflict`.
   */
  save(session: Session<M>): Promise<Session<M>>;
  /**
   * Removes the session with its messages, runtime status, events and router bindings.
   * Its children are promoted to its parent (their `parentId` becomes the deleted
   * session's `parentId`, or none). Throws `not_found`.
   */
  delete(id: string): Promise<void>;
  /**
   * Summaries matching the filters, `updatedAt` desc then `id` desc (`oldestFirst`
   * reverses both). Never reads message bodies. See `ListOptions` for limits and keyset
   * paging. Throws `invalid_argument` on bad options, including unknown keys.
   */
  list(options?: ListOptions): Promise<SessionSummary[]>;
  /** Releases what the store owns (never a borrowed client). Idempotent. */
  close(): Promise<void>;
}

/** Atomic turn writes whose cost does not grow with the stored history. */
export interface Committer<M = Message> {
  /**
   * Appends (or replaces) messages and patches fields in one atomic step.
   * With `expectedRevision`/`expectedMessageCount` that do not hold → `conflict`,
   * nothing written. Without expectations, concurrent appends are all kept.
   * Throws `not_found`, `conflict`, `invalid_argument`.
   */
  commit(id: string, input: CommitInput<M>): Promise<CommitResult>;
}

/** Tree-structured sessions. */
export interface Brancher<M = Message> {
  /**
   * A new session with the parent's first `atTurn` messages (`atTurn` counts messages,
   * not turns), `parentId` and `branchedAtTurn` set, and the parent's counters (so a
   * merge fast-forwards the parent to complete totals); the parent's `children` gains
   * it. The parent is read inside the same atomic step. Throws `not_found`, `invalid_argument` (atTurn outside
   * `0..messageCount`).
   */
  branch(parentId: string, atTurn: number): Promise<Session<M>>;
  /** An independent copy with the full history, no parent, `metadata.clonedFrom = id`. */
  clone(id: string): Promise<Session<M>>;
  /**
   * Fast-forwards the parent to the child's messages and counters and returns the
   * parent. Throws `merge_diverged` (nothing written) when the parent has more than
   * `branchedAtTurn` messages; `invalid_argument` when the child has no parent;
   * `not_found`. Concurrent merges into one parent are serialised.
   */
  merge(childId: string): Promise<Session<M>>;
}

/** Reads of committed history that are safe during concurrent turns. */
export interface HistoryReader<M = Message> {
  /**
   * A caller-owned snapshot of the committed messages, or a window of it
   * (`{last: n}`, `{offset, limit}`; see `MessageWindowQuery`): equal to the history (or
   * a slice of the history) before or after any concurrent commit, never a mix. A
   * window's cost grows with the window, not with the stored history; a window past the
   * end is empty. Throws `not_found`, `invalid_argument` (bad window).
   */
  loadMessages(id: string, window?: MessageWindowQuery): Promise<M[]>;
  /**
   * The same window with its absolute position, the history's length and the revision,
   * all from one snapshot (see `MessageWindow`), for paging backwards. Optional: core's
   * `loadMessageWindow(store, id, window)` falls back on a full `load` when a store does
   * not have it. Throws `not_found`, `invalid_argument`.
   */
  loadMessageWindow?(id: string, window?: MessageWindowQuery): Promise<MessageWindow<M>>;
}

/** Observed evaluation/check state, kept apart from transcript writes. */
export interface RuntimeStatusStore {
  /**
   * Stores `status` (any JSON) for the session. Over `MAX_RUNTIME_STATUS_BYTES` of UTF-8
   * JSON → `too_large`, nothing written. `save`/`commit` never touch it. Throws
   * `not_found`.
   */
  saveRuntimeStatus(id: string, status: JsonValue): Promise<void>;
  /** The stored status, or `null` when none was saved. Throws `not_found`. */
  loadRuntimeStatus(id: string): Promise<JsonValue | null>;
}

/** Chat-gateway routing: which session a channel/chat/thread talks to. */
export interface SessionRouter {
  /** Binds the tuple to a session (replacing any binding). Throws `not_found` for a missing session. */
  bind(channel: string, chatKey: string, thread: string, sessionId: string): Promise<void>;
  /**
   * The session for the tuple, or `""`. A follow target on `(channel, chatKey)` wins:
   * `"tui"` follows `liveSessionId`, any other value pins that session id.
   */
  resolve(channel: string, chatKey: string, thread: string, liveSessionId: string): Promise<string>;
  /** Removes the binding; a missing one is not an error. */
  unbind(channel: string, chatKey: string, thread: string): Promise<void>;
  /**
   * Sets the follow target of `(channel, chatKey)`: `"tui"`, a session id, or `""` to
   * clear. Empty channel → `invalid_argument`.
   */
  follow(channel: string, chatKey: string, target: string): Promise<void>;
  /** Bumps the binding's `updatedAt`; a missing binding is not an error. */
  touch(channel: string, chatKey: string, thread: string): Promise<void>;
  /** Bindings, newest first. `limit` as in `list` (0 or absent → 50, max 1000). */
  recent(limit?: number): Promise<RouterRow[]>;
}

/** An append-only, gapless event log per session. */
export interface EventLog {
  /**
   * Appends an event; sequences are 1, 2, 3 … per session without gaps even under
   * concurrent appends. `revision` is the session's revision at that moment.
   * Throws `not_found`, `invalid_argument`.
   */
  append(id: string, type: string, payload?: JsonValue): Promise<SessionEvent>;
  /** Events in sequence order. Throws `not_found`. */
  events(id: string, query?: EventQuery): Promise<SessionEvent[]>;
}

/** Native, atomic retention. */
export interface Pruner {
  /**
   * Keeps the newest `max` root sessions (by `updatedAt`) and deletes the other roots;
   * sub-sessions are never selected. `max <= 0` means unlimited. Returns how many were
   * deleted.
   */
  enforceMax(max: number): Promise<number>;
}

/** Rebuilds a store's derived index from its authoritative data. */
export interface Repairer {
  /**
   * Rebuilds index entries from authoritative data; unreadable sessions are reported
   * and left untouched. Safe to run while the store is in use.
   */
  repair(): Promise<RepairReport>;
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
