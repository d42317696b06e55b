/**
 * `@sessionkit/core/adapter`: the kit for writing a store adapter.
 *
 * - `BaseStore`: the whole public store surface written once (closed check, validation and
 *   copying of every argument, `{ signal }`, readiness, error mapping, caller-owned
 *   results); an adapter implements its protected primitives.
 * - One pure plan per write (`planCreate`, `planSave`, `planCommit`, `planBranch`,
 *   `planClone`, `planMergeInto`, `planPromotions`, `pruneVictims`, `planEvent`): from a
 *   session's stored state (`SessionState`) and validated input to the next state and what
 *   to write. Every rule about what a write does to a session lives in these.
 * - What adapters keep alike: the stored-header check (`assertStoredHeader`), router keys,
 *   the operation-id log, one lost-race retry loop (`retryLostRaces`), one per-session
 *   write queue (`SessionWriteQueue`), listing order and keyset paging, search text,
 *   message windows, and the file-system helpers of the embedded adapters.
 *
 * The contracts, data model, errors and limits an adapter implements come from
 * `@sessionkit/core`. See "Writing an adapter" (`docs/writing-an-adapter.md`).
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
export { normalizeCallOptions, throwIfAborted } from './input/call-options.js';
export { assertCommitInput, normalizeCommitInput } from './input/commit-input.js';
export { prepareCreate } from './input/create-input.js';
export { copyDate, copyMessages, copyMetadata, readInput } from './input/fields.js';
export { copyJson, readEntries } from './input/json-value-copy.js';
export {
  type NormalizedListOptions,
  normalizeEventQuery,
  normalizeListOptions,
} from './input/list-input.js';
export { assertSaveInput, normalizeSaveInput } from './input/save-input.js';
export { assertJsonValue, jsonByteLength } from './json-value.js';
export {
  BaseStore,
  type BaseStoreOptions,
  type StoredRoute,
  type StoreOperation,
} from './kit/base-store.js';
export { CAPABILITY_PRIMITIVES } from './kit/capabilities.js';
export {
  backoffCeilingMs,
  LOST_RACE,
  LOST_RACE_BUDGET_MS,
  type LostRaceOptions,
  retryLostRaces,
} from './kit/lost-race.js';
export { copyResult, OperationLog } from './kit/operation-log.js';
export { planBranch, planClone } from './kit/plans/branch.js';
export { type CommitPlan, type MessageChange, planCommit } from './kit/plans/commit.js';
export { type CreatePlan, planCreate } from './kit/plans/create.js';
export { planPromotions } from './kit/plans/delete.js';
export { planEvent } from './kit/plans/events.js';
export { mergeTarget, planMergeInto } from './kit/plans/merge.js';
export { type PruneCandidate, pruneVictims } from './kit/plans/prune.js';
export { bindingKey, followKey } from './kit/plans/router.js';
export { planSave } from './kit/plans/save.js';
export { assertStoredHeader, type SessionState, storedHeaderProblem } from './kit/session-state.js';
export {
  IN_FLIGHT_WRITE_GRACE_MS,
  SESSION_QUEUE_TIMEOUT_MS,
  SessionWriteQueue,
} from './kit/write-queue.js';
export { readLineage } from './lineage-record.js';
export { ListIndex } from './list-index.js';
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
  nextWriteTime,
  SEARCH_TEXT_SEPARATOR,
  searchTextMatches,
  searchTextOf,
  searchTextsOf,
  selectPage,
  setOwn,
  titleMatchesQuery,
  toSummary,
} from './session.js';
export {
  assertAmount,
  assertBranchPoint,
  assertCount,
  assertDate,
  assertEventType,
  assertId,
  assertKnownKeys,
  assertMax,
  assertMessageIndex,
  assertRouterKey,
  assertText,
  normalizeLimit,
} from './validate.js';
