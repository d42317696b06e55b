export type { OpenPostgresStoreOptions } from './open.js';
export { openPostgresStore, storeAdapter } from './open.js';
export type { PostgresStoreOptions } from './postgres-store.js';
export { PostgresStore } from './postgres-store.js';
export { DEFAULT_SCHEMA, LATEST_VERSION } from './schema.js';
