import { randomBytes } from 'node:crypto';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import { type MemoryBackend, MemoryStore, storeAdapter } from '@sessionkit/memory';
import type { ConformanceInitializer } from '../src/index.js';

type Raw = Record<string, unknown>;
const header = (r: Raw) => r.header as Raw;
const CORRUPTIONS: ((records: Map<string, unknown>, id: string, record: Raw) => void)[] = [
  (_, __, r) => {
    header(r).revision = 'garbage';
  },
  (_, __, r) => {
    r.header = null;
  },
  (_, __, r) => {
    header(r).id = 'someone-else';
  },
  (_, __, r) => {
    r.messages = { not: 'an array' };
  },
  (_, __, r) => {
    r.searchTexts = 42;
  },
  (_, __, r) => {
    r.events = 'none';
  },
  (_, __, r) => {
    r.runtimeStatus = { not: 'text' };
  },
  (_, __, r) => {
    header(r).updatedAt = new Date(Number.NaN);
  },
  (_, __, r) => {
    header(r).createdAt = '2024-01-01';
  },
  (_, __, r) => {
    header(r).costUsd = '0.5';
  },
  (_, __, r) => {
    header(r).metadata = null;
  },
  (_, __, r) => {
    header(r).title = 7;
  },
  (_, __, r) => {
    header(r).tokenCount = -1;
  },
  (_, __, r) => {
    delete r.header;
  },
  (_, __, r) => {
    delete header(r).updatedAt;
  },
  (_, __, r) => {
    header(r).parentId = 42;
  },
  (records, id) => {
    records.set(id, null);
  },
  (records, id) => {
    records.set(id, 'not a record');
  },
];

/** Ways the listing index and the derived tree of a session can be wrong. */
const INDEX_DAMAGE: ((backend: MemoryBackend, id: string) => void)[] = [
  // A stale entry: wrong title and count, older timestamp, no search text.
  (b, id) => {
    const entry = b.index.get(id)!;
    b.index.set(id, {
      ...entry,
      title: 'stale',
      messageCount: 0,
      updatedAt: new Date(0),
      searchText: [],
    });
  },
  // A missing entry.
  (b, id) => {
    b.index.delete(id);
  },
  // The session missing from its parent's children, and its own children forgotten.
  (b, id) => {
    const parentId = b.records.get(id)!.header.parentId!;
    b.childrenOf.get(parentId)!.delete(id);
    b.childrenOf.delete(id);
  },
  // The session listed as a child of a session that is not its parent, and of itself.
  (b, id) => {
    const other = [...b.records.keys()].find(
      (k) => k !== id && b.records.get(k)!.header.parentId !== id,
    );
    b.childrenOf.set(other!, new Set([...(b.childrenOf.get(other!) ?? []), id]));
    b.childrenOf.set(id, new Set([...(b.childrenOf.get(id) ?? []), id]));
  },
  // Entries of a session that does not exist: a listing row and a parent–child link.
  (b, id) => {
    const ghost = `${id}-ghost`;
    b.index.set(ghost, { ...b.index.get(id)!, id: ghost, folder: '/nowhere' });
    b.childrenOf.set(ghost, new Set([id]));
  },
];

// openStore finds memory: itself; registering it here makes it the copy this file imports
// (the source under mutation testing, not a built one).
registerStoreAdapter(storeAdapter);

/** The reference adapter as the suite sees it: peers share a backend; probes and faults read it. */
export const memoryInitializer: ConformanceInitializer<MemoryStore> = {
  name: 'memory',
  create: () => new MemoryStore(),
  createPeer: (store) => new MemoryStore({ backend: store.backend }),
  probes: {
    messageBodyReads: (store) => store.backend.stats.messageBodyReads,
  },
  openUrl: () => `memory:conformance-${randomBytes(8).toString('hex')}`,
  faults: {
    damageIndex: (store, id, kind) => {
      if (!store.backend.index.has(id)) throw new Error(`no index entry for ${id}`);
      INDEX_DAMAGE[kind]!(store.backend, id);
    },
    indexDamageKinds: INDEX_DAMAGE.length,
    corruptSession: (store, id, kind) => {
      const record = store.backend.records.get(id);
      if (!record) throw new Error(`no record for ${id}`);
      const records = store.backend.records as Map<string, unknown>;
      CORRUPTIONS[kind]!(records, id, record as unknown as Raw);
    },
    corruptionKinds: CORRUPTIONS.length,
  },
};
