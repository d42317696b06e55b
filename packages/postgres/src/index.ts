export type { StoreStats } from './context.js';
export { DEFAULT_SCHEMA } from './identifiers.js';
export { LATEST_VERSION } from './migrations/index.js';
export type { OpenPostgresStoreOptions } from './open.js';
export { openPostgresStore, storeAdapter } from './open.js';
export type { MigrationProgress, ProgressListener, SearchScope } from './search-scope.js';
export { PostgresStore } from './store.js';
export type { PostgresStoreOptions, StoreSetupOptions } from './store-options.js';
