// The vocabulary of what the instrumentation emits: span attribute names, metric names and
// the store methods it wraps. The README's tables list the same names; a test compares them.

// `instrumentStore` wraps each contract method the store has, as the span
// `sessionkit.<method>`, and no other member: the list is core's.
export { STORE_METHODS, type StoreMethodName } from '@sessionkit/core';

/**
 * The span attributes the instrumentation sets. Every value is a method name, the store
 * kind, an error code, a number, a boolean, a list of `list()` option names, or — only with
 * `sessionIds: true` — a session id. None holds message text, a title, a folder, a status,
 * a metadata key or value, router keys, event types or payloads.
 */
export const SPAN_ATTRIBUTES = {
  /** The contract method, e.g. `commit` (also on every metric). */
  operation: 'sessionkit.operation',
  /** The store kind: the `storeKind` option, or derived from the class name (`MemoryStore` → `memory`). */
  storeKind: 'sessionkit.store.kind',
  /** The session the call names (first argument; `bind`'s session). Only with `sessionIds: true`. */
  sessionId: 'sessionkit.session.id',
  /** The session the call produced: `branch`/`clone`'s new one, `merge`'s parent, `resolve`'s answer. Only with `sessionIds: true`. */
  resultSessionId: 'sessionkit.result.session_id',
  /** On failure: the error's sessionkit code (`conflict`, `unavailable`, `aborted` …), or see the README for other errors. */
  errorType: 'error.type',
  /** On failure: the error's `retryable` flag (`true` for `unavailable`). */
  retryable: 'sessionkit.error.retryable',
  /** The error code of the failed call this one retries (see the README for what counts as a retry). */
  retryOf: 'sessionkit.retry.of',
  /** Messages the call handed to the store to write (`create`, `save`, `commit`). */
  messagesWritten: 'sessionkit.messages.written',
  /** Messages the call returned (`load`, `loadMessages`, `loadMessageWindow`). */
  messagesRead: 'sessionkit.messages.read',
  /** The length of the session's history after the call, as the result tells it. */
  messageCount: 'sessionkit.session.message_count',
  /** The session's revision after the call, as the result tells it. */
  revision: 'sessionkit.session.revision',
  /** UTF-8 bytes of the JSON the call wrote: `commit`'s `append`, an event payload, a runtime status. */
  requestBytes: 'sessionkit.request.bytes',
  /** Rows the call returned (`list`, `recent`, `events`). */
  resultCount: 'sessionkit.result.count',
  /** `commit` replaced the history. */
  commitReplace: 'sessionkit.commit.replace',
  /** `commit`'s `truncate` (messages kept before the append). */
  commitTruncate: 'sessionkit.commit.truncate',
  /** `commit` had `expectedRevision` or `expectedMessageCount`. */
  commitConditional: 'sessionkit.commit.conditional',
  /** `commit` had an `operationId` (its value is never recorded). */
  commitOperationId: 'sessionkit.commit.has_operation_id',
  /** The `list()` options given (names only, from the documented set, never their values). */
  listOptions: 'sessionkit.list.options',
  /** The `limit` of `list()`, `recent()` or `events()`. */
  limit: 'sessionkit.request.limit',
  /** The window asked of `loadMessages`/`loadMessageWindow`. */
  windowLast: 'sessionkit.window.last',
  windowOffset: 'sessionkit.window.offset',
  windowLimit: 'sessionkit.window.limit',
  /** `branch`'s `atTurn`. */
  atTurn: 'sessionkit.branch.at_turn',
  /** `loadRuntimeStatus` found a status. */
  statusFound: 'sessionkit.runtime_status.found',
  /** `append`'s sequence number. */
  eventSequence: 'sessionkit.event.sequence',
  /** `events`'s `afterSequence`. */
  afterSequence: 'sessionkit.events.after_sequence',
  /** `resolve` found a session. */
  routerResolved: 'sessionkit.router.resolved',
  /** `enforceMax`'s `max`. */
  pruneMax: 'sessionkit.prune.max',
  /** Sessions `enforceMax` deleted. */
  pruneDeleted: 'sessionkit.prune.deleted',
  /** `repair`'s report: sessions rebuilt, skipped as corrupt, index entries fixed. */
  repairRebuilt: 'sessionkit.repair.rebuilt',
  repairSkipped: 'sessionkit.repair.skipped_corrupt',
  repairFixed: 'sessionkit.repair.index_entries_fixed',
} as const;

/** The metrics the instrumentation records (see the README for their attributes). */
export const METRIC_NAMES = {
  /** Histogram, seconds: every call, by `sessionkit.operation` (and `error.type` on failure). */
  duration: 'sessionkit.operation.duration',
  /** Counter: calls that failed with `conflict`. */
  conflicts: 'sessionkit.operation.conflicts',
  /** Counter: calls that failed with `unavailable`. */
  unavailable: 'sessionkit.operation.unavailable',
  /** Counter: calls that retry a failed one (see the README for the rule). */
  retries: 'sessionkit.operation.retries',
  /** Counter: messages handed to the store by successful `create`, `save` and `commit` calls. */
  messagesWritten: 'sessionkit.messages.written',
} as const;

/** The instrumentation scope of the tracer and meter. */
export const INSTRUMENTATION_NAME = '@sessionkit/otel';
