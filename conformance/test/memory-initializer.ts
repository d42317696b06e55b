import { type MemoryBackend, MemoryStore } from '@sessionkit/memory';
import type { ConformanceInitializer } from '../src/index.js';

type Raw = Record<string, unknown>;
const header = (r: Raw) => r.header as Raw;
const corruptions = new WeakMap<MemoryBackend, number>();
const CORRUPTIONS: ((record: Raw) => void)[] = [
  (r) => {
    header(r).revision = 'garbage';
  },
  (r) => {
    r.header = null;
  },
  (r) => {
    header(r).id = 'someone-else';
  },
  (r) => {
    r.messages = { not: 'an array' };
  },
  (r) => {
    r.searchText = 42;
  },
  (r) => {
    r.events = 'none';
  },
  (r) => {
    r.runtimeStatus = { not: 'text' };
  },
  (r) => {
    header(r).updatedAt = new Date(Number.NaN);
  },
  (r) => {
    header(r).createdAt = '2024-01-01';
  },
  (r) => {
    header(r).costUsd = '0.5';
  },
  (r) => {
    header(r).metadata = null;
  },
  (r) => {
    header(r).title = 7;
  },
  (r) => {
    header(r).tokenCount = -1;
  },
  (r) => {
    delete r.header;
  },
];

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
    // Each call damages the record in the next of several ways a stored record can be
    // unreadable (torn header, wrong types, bad dates), so the suite meets them all.
    corruptSession: (store, id) => {
      const record = store.backend.records.get(id);
      if (!record) throw new Error(`no record for ${id}`);
      // Counted per backend (one per test), so the n-th call of a test is always kind n.
      const n = corruptions.get(store.backend) ?? 0;
      corruptions.set(store.backend, n + 1);
      const damage = CORRUPTIONS[n % CORRUPTIONS.length]!;
      damage(record as unknown as Record<string, unknown>);
    },
  },
};
