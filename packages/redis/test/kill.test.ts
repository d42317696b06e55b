// A writer process killed at an arbitrary instant (SIGKILL) on a real Redis Cluster, where
// a session's write and its index write are separate steps. Afterwards every listed
// summary equals its session, every acknowledged commit is readable, no session is missing
// from the listing, and repair() leaves an index it then finds exact.
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeySpace, RedisStore } from '../src/index.js';
import { startCluster, type TestCluster } from './cluster.js';
import { clusterAvailable } from './cluster-env.js';
import { dropPrefix, freshPrefix, keysUnder, listEverything } from './harness.js';
import { buildWriterEntry, startWriter } from './writers.js';

const available = clusterAvailable('the kill test did not run');
let entry = '';
let cluster: TestCluster | undefined;
let client: Cluster | undefined;

beforeAll(async () => {
  if (!available) return;
  // The writer runs this source in a plain node process.
  entry = buildWriterEntry('sessionkit-redis-kill-test');
  cluster = await startCluster(3);
  client = cluster.client();
}, 120_000);

afterAll(async () => {
  try {
    await client?.quit();
  } finally {
    await cluster?.stop();
  }
});

describe.skipIf(!available)('redis › a writer killed at any instant (Cluster)', () => {
  for (const delayMs of [400, 900]) {
    it(`killed after ${delayMs} ms: listing truthful, acknowledged commits kept, repair exact`, async () => {
      const c = client as Cluster;
      const prefix = freshPrefix();
      const ports = (cluster as TestCluster).ports.join(',');
      const writer = startWriter([`cluster:${ports}`, prefix, entry, 'turns']);
      // The kill comes `delayMs` after the writer's first acknowledged commit, not after
      // its start: on a loaded machine starting up alone can take longer than the delay.
      await writer.waitFor(/^ack /m);
      await new Promise((r) => setTimeout(r, delayMs));
      writer.child.kill('SIGKILL');
      await writer.exited;
      const out = writer.output();

      const store = new RedisStore({ client: c, prefix });
      try {
        const acked = new Map<string, number>();
        for (const m of out.matchAll(/^ack (\S+) (\d+)$/gm))
          acked.set(m[1] as string, Number(m[2]));
        expect(acked.size).toBeGreaterThan(0);
        const listed = await listEverything(store);
        for (const summary of listed) {
          const { messages, ...rest } = await store.load(summary.id);
          expect(summary).toEqual({ ...rest, messageCount: messages.length });
        }
        // Every session that exists is listed (creates register their entry first).
        const k = new KeySpace(prefix);
        const existing = (await keysUnder(c, prefix))
          .map((key) => k.idOfMetaKey(key))
          .filter((id): id is string => id !== undefined)
          .sort();
        expect(listed.map((s) => s.id).sort()).toEqual(existing);
        for (const [id, revision] of acked) {
          if (!existing.includes(id)) continue; // deleted by the writer later
          expect((await store.load(id)).revision).toBeGreaterThanOrEqual(revision);
        }
        await store.repair();
        expect((await store.repair()).indexEntriesFixed).toBe(0);
        const again = await listEverything(store);
        expect(again).toEqual(listed);
      } finally {
        await store.close();
        await dropPrefix(c, prefix);
      }
    });
  }

  it('killed during enforceMax: no session is torn, listing truthful, repair exact', async () => {
    const c = client as Cluster;
    const prefix = freshPrefix();
    const ports = (cluster as TestCluster).ports.join(',');
    const writer = startWriter([`cluster:${ports}`, prefix, entry, 'prune']);
    // Killed in its third enforceMax, at a moment within it that differs from run to run
    // (a pass deletes about six roots and promotes their branches: tens of milliseconds).
    await writer.waitFor(/(^pruning\n[\s\S]*){3}/m);
    await new Promise((r) => setTimeout(r, Math.random() * 30));
    writer.child.kill('SIGKILL');
    await writer.exited;
    const store = new RedisStore({ client: c, prefix });
    try {
      const listed = await listEverything(store);
      expect(listed.length).toBeGreaterThan(0);
      for (const summary of listed) {
        const { messages, ...rest } = await store.load(summary.id);
        expect(summary).toEqual({ ...rest, messageCount: messages.length });
        // Whole: a root has its 20 messages, a branch its first 10, each in order.
        // (a branch keeps its root's title, which is the root's id)
        const root = summary.title;
        const want = summary.title === summary.id ? 20 : 10;
        expect(messages.map((m) => (m as { content: string }).content)).toEqual(
          Array.from({ length: want }, (_, k) => `${root} m${k}`),
        );
      }
      await store.repair();
      expect((await store.repair()).indexEntriesFixed).toBe(0);
      expect(await listEverything(store)).toEqual(listed);
    } finally {
      await store.close();
      await dropPrefix(c, prefix);
    }
  });
});
