// The whole suite on a real Redis Cluster of three masters with one replica each, which
// this file starts on free loopback ports and stops afterwards (also when tests fail). The
// suite's stores wait for a replica after every write (`waitReplicas: 1`), their peers do
// not, so both write paths run the whole suite. The timeout is generous: the suite's 20 MB
// transcript must reach a replica on a loaded CI machine.
import { runConformance } from '@sessionkit/conformance';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import type { Cluster } from 'ioredis';
import { describe, it } from 'vitest';
import { storeAdapter } from '../src/index.js';
import { startCluster, type TestCluster } from './cluster.js';
import { clusterAvailable } from './cluster-env.js';
import { dropPrefix, freshPrefix, StoreFactory } from './harness.js';
import { initializerFor } from './initializer.js';

registerStoreAdapter(storeAdapter);

let cluster: TestCluster | undefined;
let main: Cluster | undefined;
let peer: Cluster | undefined;
const urlPrefixes: string[] = [];

function running(): TestCluster {
  if (!cluster) throw new Error('the test cluster is not running');
  return cluster;
}

const factory = new StoreFactory(
  () => (main ??= running().client()),
  () => (peer ??= running().client()),
  { waitReplicas: 1, waitReplicasTimeoutMs: 10_000 },
);

if (clusterAvailable('the Cluster conformance suite did not run')) {
  runConformance(
    initializerFor('redis-cluster', factory, {
      timeoutMs: 60_000,
      beforeAll: async () => {
        cluster = await startCluster(3, [], { replicas: 1 });
      },
      afterAll: async () => {
        try {
          for (const prefix of urlPrefixes.splice(0)) await dropPrefix(factory.main(), prefix);
          await main?.quit();
          await peer?.quit();
        } finally {
          await cluster?.stop();
        }
      },
      openUrl: () => {
        const prefix = freshPrefix();
        urlPrefixes.push(prefix);
        const port = running().ports[0] as number;
        return `redis://127.0.0.1:${port}/?cluster=true&prefix=${encodeURIComponent(prefix)}`;
      },
    }),
  );
} else {
  describe('redis-cluster › conformance', () => {
    it.skip('needs redis-server and redis-cli (see the warning above)', () => {});
  });
}
