import { runConformance } from '@sessionkit/conformance';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import type { Redis } from 'ioredis';
import { describe, it } from 'vitest';
import { storeAdapter } from '../src/index.js';
import { REDIS_URL, redisAvailable } from './env.js';
import { dropPrefix, freshPrefix, newClient, StoreFactory } from './harness.js';
import { initializerFor } from './initializer.js';

// openStore finds redis: URLs itself (the built package); registering the source's adapter
// makes the open-store spec test this code.
registerStoreAdapter(storeAdapter);

let main: Redis | undefined;
let peer: Redis | undefined;
/** Prefixes the open-store spec used through URLs, dropped when the suite ends. */
const urlPrefixes: string[] = [];

const factory = new StoreFactory(
  () => (main ??= newClient()),
  () => (peer ??= newClient()),
);

if (redisAvailable('the conformance suite did not run')) {
  runConformance(
    initializerFor('redis', factory, {
      openUrl: () => {
        const prefix = freshPrefix();
        urlPrefixes.push(prefix);
        const url = new URL(REDIS_URL);
        url.searchParams.set('prefix', prefix);
        return url.href;
      },
      afterAll: async () => {
        for (const prefix of urlPrefixes.splice(0)) await dropPrefix(factory.main(), prefix);
        await main?.quit();
        await peer?.quit();
      },
    }),
  );
} else {
  describe('redis › conformance', () => {
    it.skip('needs Redis (see the warning above)', () => {});
  });
}
