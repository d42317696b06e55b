// The conformance initializer for a store factory: fault hooks that damage the index
// (derived) or a session's header (authoritative) directly in Redis.
import type { ConformanceInitializer } from '@sessionkit/conformance';
import type { Cluster, Redis } from 'ioredis';
import { KeySpace, type RedisStore } from '../src/index.js';
import type { StoreFactory } from './harness.js';

/** The ways `damageIndex` breaks the index entry of a session. */
const INDEX_DAMAGE = [
  // 0: its order entry is gone (the session is missing from every listing)
  (c: Redis | Cluster, k: KeySpace, id: string) => c.zrem(k.order, id),
  // 1: its order entry has a wrong (old) time
  (c: Redis | Cluster, k: KeySpace, id: string) => c.zadd(k.order, 0, id),
  // 2: its parent's children set lacks it
  async (c: Redis | Cluster, k: KeySpace, id: string) => {
    const parent = await c.hget(k.session(id).meta, 'p');
    if (!parent) throw new Error(`session ${id} has no parent to unlink from`);
    return c.srem(k.children(parent), id);
  },
];

/** The ways `corruptSession` makes a session unreadable. */
const CORRUPTION = [
  // 0: the header is not JSON
  (c: Redis | Cluster, k: KeySpace, id: string) => c.hset(k.session(id).meta, 'h', '{"v":1,"id":'),
  // 1: the header has a field of the wrong type
  async (c: Redis | Cluster, k: KeySpace, id: string) => {
    const header = JSON.parse((await c.hget(k.session(id).meta, 'h')) as string);
    header.title = 42;
    return c.hset(k.session(id).meta, 'h', JSON.stringify(header));
  },
];

export function initializerFor(
  name: string,
  factory: StoreFactory,
  extra: Partial<ConformanceInitializer<RedisStore>>,
): ConformanceInitializer<RedisStore> {
  return {
    name,
    create: () => factory.create(),
    createPeer: (store) => factory.peerOf(store),
    destroy: (store) => factory.destroy(store),
    probes: { messageBodyReads: (store) => store.stats.messageBodyReads },
    faults: {
      indexDamageKinds: INDEX_DAMAGE.length,
      damageIndex: async (store, id, kind) => {
        await INDEX_DAMAGE[kind]?.(factory.main(), new KeySpace(store.prefix), id);
      },
      corruptionKinds: CORRUPTION.length,
      corruptSession: async (store, id, kind) => {
        await CORRUPTION[kind]?.(factory.main(), new KeySpace(store.prefix), id);
      },
    },
    ...extra,
  };
}
