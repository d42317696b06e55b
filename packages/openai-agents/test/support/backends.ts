// A fresh store on each backend for this package's tests, in the shape of the workspace's
// test-backends package (name, available, fresh, dispose, stop) plus `peer`: a second
// store instance over the same data, as a restarted process would open it.
// TODO(test-backends): replace with @sessionkit/test-backends once it is on main.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FullStore } from '@sessionkit/core';
import { FileStore } from '@sessionkit/file';
import { MemoryStore } from '@sessionkit/memory';

export type BackendName = 'memory' | 'file' | 'postgres' | 'redis' | 's3';
export type AnyStore = FullStore<unknown>;

export interface TestBackend {
  readonly name: BackendName;
  /** False (after a loud warning) when its service is missing here; throws under CI. */
  available(what: string): Promise<boolean>;
  /** A store over new, empty data. */
  fresh(): Promise<AnyStore>;
  /** Another store instance over the data of `store` (closed by `dispose(store)`). */
  peer(store: AnyStore): Promise<AnyStore>;
  /** Closes `store` and its peers and removes their data. */
  dispose(store: AnyStore): Promise<void>;
  /** Stops what the backend started. */
  stop(): Promise<void>;
}

/** Stores opened over one store's data, closed with it. */
class Peers {
  readonly #of = new Map<AnyStore, AnyStore[]>();
  add(store: AnyStore, peer: AnyStore): AnyStore {
    this.#of.set(store, [...(this.#of.get(store) ?? []), peer]);
    return peer;
  }
  async close(store: AnyStore): Promise<void> {
    for (const p of this.#of.get(store) ?? []) await p.close();
    this.#of.delete(store);
  }
}

const memory = (): TestBackend => {
  const peers = new Peers();
  return {
    name: 'memory',
    available: async () => true,
    fresh: async () => new MemoryStore<unknown>(),
    peer: async (store) =>
      peers.add(
        store,
        new MemoryStore<unknown>({ backend: (store as MemoryStore<unknown>).backend }),
      ),
    dispose: async (store) => {
      await peers.close(store);
      await store.close();
    },
    stop: async () => {},
  };
};

const file = (): TestBackend => {
  const peers = new Peers();
  const dirs = new Map<AnyStore, string>();
  return {
    name: 'file',
    available: async () => true,
    fresh: async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sk-openai-agents-'));
      const store = new FileStore<unknown>({ dir: join(dir, 'store') });
      dirs.set(store, dir);
      return store;
    },
    peer: async (store) =>
      peers.add(store, new FileStore<unknown>({ dir: join(dirs.get(store) as string, 'store') })),
    dispose: async (store) => {
      await peers.close(store);
      await store.close();
      rmSync(dirs.get(store) as string, { recursive: true, force: true });
      dirs.delete(store);
    },
    stop: async () => {},
  };
};

type PostgresHarness = typeof import('../../../postgres/test/harness.js');
type PostgresStore = Parameters<PostgresHarness['destroyStore']>[0];

const postgres = (): TestBackend => {
  let harness: PostgresHarness | undefined;
  const load = async () => {
    harness ??= await import('../../../postgres/test/harness.js');
    return harness;
  };
  return {
    name: 'postgres',
    available: async (what) =>
      (await import('../../../postgres/test/env.js')).postgresAvailable(what),
    fresh: async () => (await (await load()).freshStore()) as unknown as AnyStore,
    peer: async (store) =>
      (await (await load()).peerOf(store as unknown as PostgresStore)) as unknown as AnyStore,
    dispose: async (store) => (await load()).destroyStore(store as unknown as PostgresStore),
    stop: async () => harness?.endAdmin(),
  };
};

type RedisHarness = typeof import('../../../redis/test/harness.js');
type RedisFactory = InstanceType<RedisHarness['StoreFactory']>;
type RedisStore = Parameters<RedisFactory['destroy']>[0];

const redis = (): TestBackend => {
  let factory: RedisFactory | undefined;
  let clients: { quit(): Promise<unknown> }[] = [];
  const load = async (): Promise<RedisFactory> => {
    if (factory) return factory;
    const harness: RedisHarness = await import('../../../redis/test/harness.js');
    const main = harness.newClient();
    const peer = harness.newClient();
    clients = [main, peer];
    factory = new harness.StoreFactory(
      () => main,
      () => peer,
    );
    return factory;
  };
  return {
    name: 'redis',
    available: async (what) => (await import('../../../redis/test/env.js')).redisAvailable(what),
    fresh: async () => (await load()).create() as unknown as AnyStore,
    // Redis peers borrow the factory's client: closing one leaves the client open.
    peer: async (store) =>
      (await load()).peerOf(store as unknown as RedisStore) as unknown as AnyStore,
    dispose: async (store) => (await load()).destroy(store as unknown as RedisStore),
    stop: async () => {
      for (const c of clients.splice(0)) await c.quit().catch(() => {});
      factory = undefined;
    },
  };
};

type S3Harness = typeof import('../../../s3/test/harness.js');
type S3Target = import('../../../s3/test/support/s3-server.js').S3Target;
type S3Store = Parameters<S3Harness['destroyStore']>[1];

const s3 = (): TestBackend => {
  let started: Promise<{ harness: S3Harness; target: S3Target }> | undefined;
  const load = () => {
    started ??= (async () => {
      const { startTarget } = await import('../../../s3/test/support/s3-server.js');
      return { harness: await import('../../../s3/test/harness.js'), target: await startTarget() };
    })();
    return started;
  };
  return {
    name: 's3',
    available: async () => true,
    fresh: async () => {
      const { harness, target } = await load();
      return (await harness.storeOn(target)) as unknown as AnyStore;
    },
    peer: async (store) => {
      const { harness, target } = await load();
      return (await harness.storeOn(
        target,
        (store as unknown as S3Store).prefix,
      )) as unknown as AnyStore;
    },
    dispose: async (store) => {
      const { harness, target } = await load();
      await harness.destroyStore(target, store as unknown as S3Store);
    },
    stop: async () => {
      if (started === undefined) return;
      const { harness, target } = await started;
      started = undefined;
      harness.releaseClient(target);
      await target.stop();
    },
  };
};

/** Every backend, in the order the tests list them. */
export const BACKEND_NAMES: readonly BackendName[] = ['memory', 'file', 'postgres', 'redis', 's3'];

/** A new backend object of that name. */
export function testBackend(name: BackendName): TestBackend {
  return { memory, file, postgres, redis, s3 }[name]();
}
