// One master of a real Redis Cluster killed and restarted mid-run (nodes persist with
// `appendfsync always`, the mode in which an acknowledged write survives): calls fail
// with clear `unavailable` errors while it is down, and afterwards every acknowledged
// write is there and the store works on.
import { isSessionKitError } from '@sessionkit/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KeySpace, openRedisStore, type RedisStore } from '../src/index.js';
import {
  startCluster,
  startServer,
  stopServer,
  type TestCluster,
  waitForClusterOk,
} from './cluster.js';
import { clusterAvailable } from './cluster-env.js';

const available = clusterAvailable('the Cluster restart test did not run');
let cluster: TestCluster | undefined;

beforeAll(async () => {
  if (available)
    cluster = await startCluster(3, ['--appendonly', 'yes', '--appendfsync', 'always']);
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

describe.skipIf(!available)('redis › a Cluster master restarted mid-run', () => {
  it('fails unavailable while the master is down and loses no acknowledged write', async () => {
    const c = cluster as TestCluster;
    const consoleError = vi.spyOn(console, 'error');
    const prefix = 'restart:';
    let store: RedisStore | undefined;
    try {
      store = await openRedisStore(
        `redis://127.0.0.1:${c.ports[0]}/?cluster=true&prefix=${prefix}`,
      );
      const ids = Array.from({ length: 6 }, (_, i) => `s${i}`);
      for (const id of ids) {
        await store.create({ id });
        for (let t = 0; t < 10; t++)
          await store.commit(id, { append: [{ role: 'user', content: `${id}-${t}` }] });
      }
      // The master that owns s0's slot.
      const meta = new KeySpace(prefix).session('s0').meta;
      const slot = Number((await store.client.call('CLUSTER', 'KEYSLOT', meta)) as number);
      const ranges = (await store.client.call('CLUSTER', 'SLOTS')) as [
        number,
        number,
        [string, number],
      ][];
      const owner = ranges.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
      const index = c.ports.indexOf(owner as number);
      expect(index).toBeGreaterThanOrEqual(0);

      await stopServer(c.servers[index] as (typeof c.servers)[number]);
      const error = await store
        .commit('s0', { append: [{ role: 'user', content: 'while down' }] })
        .catch((e: unknown) => e);
      expect(isSessionKitError(error, 'unavailable'), String(error)).toBe(true);
      expect((error as { retryable?: unknown }).retryable).toBe(true);

      c.servers[index] = await startServer(c.ports[index] as number, c.dir, c.argsOf(index));
      await waitForClusterOk(c.ports);
      const s = store;
      const loaded = await retry(() => s.load('s0'));
      const contents = loaded.messages.map((m) => m.content);
      expect(contents.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, t) => `s0-${t}`));
      // The write that failed was never acknowledged: it is absent (or, if it reached the
      // node before the kill, present once), never doubled.
      expect(
        contents.length === 10 || (contents.length === 11 && contents[10] === 'while down'),
      ).toBe(true);
      for (const id of ids.slice(1)) {
        expect((await retry(() => s.load(id))).messages).toHaveLength(10);
      }
      await retry(() => s.commit('s0', { append: [{ role: 'user', content: 'after' }] }));
      expect((await s.list({ limit: 100 })).map((x) => x.id).sort()).toEqual(ids);
      expect(consoleError.mock.calls.flat().join('\n')).not.toContain('Unhandled error event');
    } finally {
      consoleError.mockRestore();
      await store?.close();
    }
  });
});

/** The first success within 20 s (the client rediscovers the cluster on its own backoff). */
async function retry<T>(run: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      return await run();
    } catch (e) {
      if (!isSessionKitError(e, 'unavailable') || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
