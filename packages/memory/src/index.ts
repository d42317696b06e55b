export { storeAdapter } from './adapter.js';
export type { FollowEntry, IndexEntry, MemoryHeader, MemoryRecord } from './memory-backend.js';
export { bindingKey, childIds, followKey, MemoryBackend } from './memory-backend.js';
export type { MemoryStoreOptions } from './memory-store.js';
export { MemoryStore } from './memory-store.js';
