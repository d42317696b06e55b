/**
 * `@sessionkit/core`: the application API. The store contracts and their capability
 * guards, the data model, errors, the documented limits, `openStore`, and helpers that work
 * on any store. Everything an adapter needs besides these lives in `@sessionkit/core/adapter`.
 */
export * from './contracts.js';
export {
  ERROR_CODES,
  type ErrorCode,
  isSessionKitError,
  SessionKitError,
  type SessionKitErrorOptions,
} from './errors.js';
export type { FileLockOptions } from './fs/file-lock.js';
export { type CommitTurnOptions, commitTurn } from './helpers/commit-turn.js';
export * from './helpers/enforce-max.js';
export * from './helpers/export-import.js';
export * from './helpers/history-window.js';
export * from './helpers/lifecycle.js';
export { type KeysetWalkOptions, listPages, listRows } from './helpers/paging.js';
export type { Progress, ProgressOptions } from './helpers/progress.js';
export * from './helpers/stash.js';
export * from './ids.js';
export { MAX_OPERATION_ID_LENGTH, MAX_REMEMBERED_OPERATIONS } from './input/commit-input.js';
export { LIST_OPTION_KEYS, MAX_EVENTS_LIMIT } from './input/list-input.js';
export { MAX_JSON_DEPTH } from './json-value.js';
export { openStore, redactUrl } from './open-store.js';
export {
  AUTO_TITLE_LENGTH,
  autoTitle,
  isSubSession,
  messageText,
  newSession,
  titleFromText,
} from './session.js';
export { STORE_METHODS, type StoreMethodName } from './store-methods.js';
export type * from './types.js';
export {
  DEFAULT_LIST_LIMIT,
  MAX_DATE_MS,
  MAX_LIST_LIMIT,
  MAX_MESSAGE_INDEX,
  MAX_RUNTIME_STATUS_BYTES,
  MAX_SHORT_TEXT_LENGTH,
  MAX_TITLE_LENGTH,
  MIN_DATE_MS,
} from './validate.js';
