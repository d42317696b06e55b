/**
 * `@sessionkit/core/adapter`: the kit for writing a store adapter. Every rule about what a
 * write does to a session lives here once (validation, the header, counter, merge, lineage,
 * router and status rules, listing order and keyset paging, search text, message windows),
 * together with the file-system helpers the embedded adapters share (atomic writes, the
 * lock with its liveness check, errno mapping) and `registerStoreAdapter` for `openStore`.
 *
 * The contracts, data model, errors and limits an adapter implements come from
 * `@sessionkit/core`. See "Writing an adapter" (`docs/writing-an-adapter.md`) for a
 * minimal adapter built on this entry that passes the conformance suite.
 */
export * from './adapter-rules.js';
export * from './counters.js';
export { type ErrorFactory, errorsFor } from './errors.js';
export * from './fs/atomic-write.js';
export * from './fs/errno.js';
export * from './fs/file-lock.js';
export * from './fs/fs-errors.js';
export { applyCommit } from './helpers/commit-turn.js';
export { KeyedMutex } from './helpers/keyed-mutex.js';
export { assertPageSize } from './helpers/paging.js';
export * from './history-lineage.js';
export { assertJsonValue, jsonByteLength } from './json-value.js';
export { readLineage } from './lineage-record.js';
export * from './message-window.js';
export {
  type KnownAdapterPackage,
  knownAdapterPackage,
  registerStoreAdapter,
  type StoreAdapter,
} from './open-store.js';
export {
  applyCommitToSummary,
  checkCommitExpectations,
  cloneJson,
  compareIds,
  compareListOrder,
  copySession,
  isAfterCursor,
  type ListableEntry,
  matchesListFilters,
  metadataPatchParts,
  nextUpdatedAt,
  SEARCH_TEXT_SEPARATOR,
  searchTextMatches,
  searchTextOf,
  selectPage,
  setOwn,
  titleMatchesQuery,
  toSummary,
} from './session.js';
export {
  assertBranchPoint,
  assertCommitInput,
  assertCount,
  assertDate,
  assertEventType,
  assertId,
  assertKnownKeys,
  assertMax,
  assertMessageIndex,
  assertRouterKey,
  assertSaveInput,
  type NormalizedListOptions,
  normalizeEventQuery,
  normalizeLimit,
  normalizeListOptions,
  prepareCreate,
} from './validate.js';
