import { MemoryStore } from '@sessionkit/memory';
import type { ConformanceInitializer } from '../src/index.js';

/** The reference adapter as the suite sees it: peers share a backend; probes and faults read it. */
export const memoryInitializer: ConformanceInitializer<MemoryStore> = {
  name: 'memory',
  create: () => new MemoryStore(),
  createPeer: (store) => new MemoryStore({ backend: store.backend }),
  probes: {
    messageBodyReads: (store) => store.backend.stats.messageBodyReads,
  },
  faults: {
    damageIndex: (store, id) => {
      const entry = store.backend.index.get(id);
      if (!entry) throw new Error(`no index entry for ${id}`);
      // A stale cache entry: wrong title and count, older timestamp.
      store.backend.index.set(id, {
        ...entry,
        title: 'stale',
        messageCount: 0,
        updatedAt: new Date(0),
        searchText: '',
      });
    },
    corruptSession: (store, id) => {
      const record = store.backend.records.get(id);
      if (!record) throw new Error(`no record for ${id}`);
      (record.header as { revision: unknown }).revision = 'garbage';
    },
  },
};
