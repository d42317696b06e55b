export type { RequestStats } from './objects.js';
export type { OpenS3StoreOptions } from './open.js';
export { DEFAULT_INDEX_SHARDS, openS3Store, storeAdapter } from './open.js';
export { S3Store } from './store.js';
export { S3_URL_PARAMS } from './url-options.js';
