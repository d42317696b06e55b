// Redis: the standalone test server of .env.example, or a real three-master Cluster this
// run starts on free loopback ports; a fresh key prefix per store (the redis adapter's own
// test harness makes them and deletes their keys on every master).
import type { FullStore } from '@sessionkit/core';
import type { Cluster, Redis } from 'ioredis';
import { type BackendName, LazyBackend } from './backend.js';

type Harness = typeof import('../../../packages/redis/test/harness.js');
type RedisStore = Parameters<InstanceType<Harness['StoreFactory']>['destroy']>[0];
type TestCluster = import('../../../packages/redis/test/cluster.js').TestCluster;

export class RedisBackend extends LazyBackend {
  readonly name: BackendName;
  #factory: InstanceType<Harness['StoreFactory']> | undefined;
  #clients: (Redis | Cluster)[] = [];
  #cluster: TestCluster | undefined;

  constructor(readonly cluster: boolean) {
    super();
    this.name = cluster ? 'redis-cluster' : 'redis';
  }

  override async available(what: string): Promise<boolean> {
    if (this.cluster) {
      const env = await import('../../../packages/redis/test/cluster-env.js');
      return env.clusterAvailable(what);
    }
    const env = await import('../../../packages/redis/test/env.js');
    return env.redisAvailable(what);
  }

  protected async startOnce(): Promise<void> {
    const harness: Harness = await import('../../../packages/redis/test/harness.js');
    let client: () => Redis | Cluster = harness.newClient;
    if (this.cluster) {
      const { startCluster } = await import('../../../packages/redis/test/cluster.js');
      const cluster = await startCluster(3);
      this.#cluster = cluster;
      client = () => cluster.client();
    }
    const main = client();
    const peer = client();
    this.#clients = [main, peer];
    this.#factory = new harness.StoreFactory(
      () => main,
      () => peer,
    );
  }

  protected async stopOnce(): Promise<void> {
    try {
      for (const c of this.#clients.splice(0)) await c.quit().catch(() => {});
    } finally {
      await this.#cluster?.stop();
      this.#cluster = undefined;
    }
  }

  protected async freshStore(): Promise<FullStore<unknown>> {
    return this.#factory?.create() as unknown as FullStore<unknown>;
  }

  /** A store on the same prefix over the second client (borrowed: closing it leaves it open). */
  protected async peerStore(store: FullStore<unknown>): Promise<FullStore<unknown>> {
    return this.#factory?.peerOf(store as unknown as RedisStore) as unknown as FullStore<unknown>;
  }

  protected async disposeStore(store: FullStore<unknown>): Promise<void> {
    await this.#factory?.destroy(store as unknown as RedisStore);
  }
}
