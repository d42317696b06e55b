/**
 * `@sessionkit/otel`: OpenTelemetry spans and metrics around any sessionkit store, never
 * with message text, titles or metadata values. `instrumentStore(store)` returns a store
 * with the same capabilities whose every call is a `sessionkit.<method>` span.
 */
export {
  deriveStoreKind,
  type InstrumentedStore,
  type InstrumentStoreOptions,
  instrumentStore,
} from './instrument-store.js';
export { DURATION_BUCKETS, INSTRUMENTATION_VERSION } from './instruments.js';
export {
  INSTRUMENTATION_NAME,
  METRIC_NAMES,
  SPAN_ATTRIBUTES,
  STORE_METHODS,
  type StoreMethodName,
} from './names.js';
export { classifyFailure, type FailureOutcome } from './outcome.js';
export { MAX_PENDING_RETRIES, RETRIED_CODES } from './retry-tracker.js';
