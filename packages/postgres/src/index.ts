export type { StoreStats } from './context.js';
export { DEFAULT_SCHEMA } from './identifiers.js';
export { LATEST_VERSION } from './migrations/index.js';
export type { OpenPostgresStoreOptions } from './open.js';
export { openPostgresStore, storeAdapter } from './open.js';
export type {
  MigrationProgress,
  PostgresStoreOptions,
  ProgressListener,
  SearchScope,
  StoreSetupOptions,
} from './postgres-store.js';
export { PostgresStore } from './postgres-store.js';
