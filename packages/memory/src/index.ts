export type { FollowEntry, IndexEntry, MemoryHeader, MemoryRecord } from './backend.js';
export { bindingKey, childIds, followKey, MemoryBackend, putRecord } from './backend.js';
export { storeAdapter } from './open.js';
export type { MemoryStoreOptions } from './store.js';
export { MemoryStore } from './store.js';
