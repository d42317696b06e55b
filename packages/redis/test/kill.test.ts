// A writer process killed at an arbitrary instant (SIGKILL) on a real Redis Cluster, where
// a session's write and its index write are separate steps. Afterwards every listed
// summary equals its session, every acknowledged commit is readable, no session is missing
// from the listing, and repair() leaves an index it then finds exact. enforceMax is
// interrupted too — its process killed at random points of three passes, and its
// connections killed mid-pass — and no session is ever torn.
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeySpace, RedisStore } from '../src/index.js';
import { cli, startCluster, type TestCluster } from './cluster.js';
import { clusterAvailable } from './cluster-env.js';
import { dropPrefix, freshPrefix, keysUnder, listEverything } from './harness.js';
import { expectPrunedWhole, plantRoots, retryUnavailable, rootsOf } from './prune-checks.js';
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

  // Killed in its first, second or third enforceMax, at a moment within it that differs
  // from run to run (a pass deletes about six roots and promotes their branches: tens of
  // milliseconds), so the kill lands before, between and inside the victims' deletes.
  for (const pass of [1, 2, 3]) {
    it(`killed during enforceMax pass ${pass}: no session is torn, listing truthful, repair exact`, async () => {
      const c = client as Cluster;
      const prefix = freshPrefix();
      const ports = (cluster as TestCluster).ports.join(',');
      const writer = startWriter([`cluster:${ports}`, prefix, entry, 'prune']);
      await writer.waitFor(new RegExp(`(^pruning\n[\\s\\S]*){${pass}}`, 'm'));
      await new Promise((r) => setTimeout(r, Math.random() * 40));
      writer.child.kill('SIGKILL');
      await writer.exited;
      const store = new RedisStore({ client: c, prefix });
      try {
        await expectPrunedWhole(store);
        await store.repair();
        expect((await store.repair()).indexEntriesFixed).toBe(0);
      } finally {
        await store.close();
        await dropPrefix(c, prefix);
      }
    });
  }

  it('connections killed during enforceMax: no session is torn, the next pass finishes it', async () => {
    const c = client as Cluster;
    const prefix = freshPrefix();
    // Few redirections: a command whose connection is killed fails instead of being sent
    // again and again, so passes are broken off in the middle, not only delayed.
    const own = new Cluster(
      (cluster as TestCluster).ports.map((port) => ({ host: '127.0.0.1', port })),
      { maxRedirections: 1, retryDelayOnFailover: 10, redisOptions: { maxRetriesPerRequest: 1 } },
    );
    own.on('error', () => {});
    const store = new RedisStore({ client: own, prefix });
    const outcomes: string[] = [];
    try {
      for (let round = 0; round < PRUNE_ROUNDS; round++) {
        await plantRoots(store, `r${round}`, 6);
        const pass = store.enforceMax(4).then(
          () => 'done',
          (e: unknown) => (e as { code?: string }).code,
        );
        let settled = false;
        void pass.then(() => {
          settled = true;
        });
        await new Promise((r) => setTimeout(r, Math.random() * 30));
        // Every client connection but redis-cli's own, again and again until the pass
        // settles (at most KILLS_PER_PASS times): its commands in flight fail each time.
        for (let kill = 0; kill < KILLS_PER_PASS && !settled; kill++) {
          await Promise.all(
            (cluster as TestCluster).ports.map((port) =>
              cli(port, 'client', 'kill', 'type', 'normal', 'skipme', 'yes'),
            ),
          );
        }
        const outcome = await pass;
        expect(['done', 'unavailable']).toContain(outcome);
        outcomes.push(outcome as string);
        await expectPrunedWhole(store);
      }
      console.log(`[kill] enforceMax passes under killed connections: ${outcomes.join(', ')}`);
      // The store recovers by itself: the next pass deletes every root the broken ones
      // left past the newest four (branches it promotes become roots of their own).
      const roots = await rootsOf(store);
      await retryUnavailable(() => store.enforceMax(4));
      const left = new Set(await rootsOf(store));
      expect(roots.map((id) => left.has(id))).toEqual(roots.map((_, i) => i < 4));
      await expectPrunedWhole(store);
    } finally {
      await store.close();
      await own.quit().catch(() => own.disconnect());
      await dropPrefix(c, prefix);
    }
  });
});

/** Rounds of roots and enforceMax in the connection-kill test: bounded, about a second each. */
const PRUNE_ROUNDS = 4;
/** Connection kills per pass at most (each a redis-cli per master, some tens of ms). */
const KILLS_PER_PASS = 40;
