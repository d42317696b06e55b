// Stores the tests build from a real memory store.
import type { Store } from '@sessionkit/core';
import type { MemoryStore } from '@sessionkit/memory';

/**
 * `store` seen through the base contract only: no optional capability, so guards answer
 * false and core's `commitTurn` falls back on load/modify/save.
 */
export function baseOnly(store: MemoryStore): Store {
  return {
    create: (s) => store.create(s),
    load: (id) => store.load(id),
    save: (s) => store.save(s),
    delete: (id) => store.delete(id),
    list: (o) => store.list(o),
    close: () => store.close(),
  };
}
