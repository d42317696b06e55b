// The filter indexes: one sorted set per folder, status and parent value, kept in step
// with every write that changes a summary, so a filtered listing reads only its page
// (standalone Redis and a Cluster alike).
import type { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeySpace, RedisStore } from '../src/index.js';
import { startCluster, type TestCluster } from './cluster.js';
import { clusterAvailable } from './cluster-env.js';
import { redisAvailable } from './env.js';
import { dropPrefix, freshPrefix, newClient } from './harness.js';

const standalone = redisAvailable('the filter index tests did not run');
const withCluster = clusterAvailable('the Cluster filter index tests did not run');

let client: Redis | undefined;
let cluster: TestCluster | undefined;
let clusterClient: Cluster | undefined;
const prefixes: [Redis | Cluster, string][] = [];

afterAll(async () => {
  for (const [c, p] of prefixes) await dropPrefix(c, p);
  await client?.quit();
  await clusterClient?.quit();
  await cluster?.stop();
});

/** Every member of a sorted set, in index order. */
async function members(c: Redis | Cluster, key: string): Promise<string[]> {
  return c.zrange(key, '0', '-1');
}

function suite(name: string, enabled: boolean, connect: () => Promise<Redis | Cluster>) {
  describe.skipIf(!enabled)(`redis › filter indexes (${name})`, () => {
    let c: Redis | Cluster;
    beforeAll(async () => {
      c = await connect();
    });

    function fresh(): { s: RedisStore; k: KeySpace } {
      const prefix = freshPrefix();
      prefixes.push([c, prefix]);
      return { s: new RedisStore({ client: c, prefix }), k: new KeySpace(prefix) };
    }

    it('a filtered page reads the summaries of its own sessions only, whatever the filter', async () => {
      const { s } = fresh();
      // The sessions asked for are the oldest: a walk over the whole order would read
      // every newer one before reaching them.
      const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000);
      await s.create({ id: 'root', folder: 'small', updatedAt: at(0) });
      for (let i = 1; i <= 4; i++) {
        await s.create({
          id: `few${i}`,
          folder: 'small',
          status: 'rare',
          parentId: 'root',
          updatedAt: at(i),
        });
      }
      await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          s.create({
            id: `many${String(i).padStart(3, '0')}`,
            folder: 'big',
            updatedAt: at(100 + i),
          }),
        ),
      );
      const cases = [
        [{ folder: 'small', limit: 3 }, ['few4', 'few3', 'few2']],
        [{ status: 'rare', limit: 2 }, ['few4', 'few3']],
        [{ parentId: 'root' }, ['few4', 'few3', 'few2', 'few1']],
        [{ folder: 'small', status: 'active' }, ['root']],
        [{ folder: 'small', status: 'rare', oldestFirst: true, limit: 2 }, ['few1', 'few2']],
      ] as const;
      for (const [opts, want] of cases) {
        const before = s.stats.summaryReads;
        expect(
          (await s.list(opts)).map((x) => x.id),
          JSON.stringify(opts),
        ).toEqual(want);
        expect(s.stats.summaryReads - before, JSON.stringify(opts)).toBeLessThanOrEqual(5);
      }
      // Keyset paging within a filter.
      const first = await s.list({ folder: 'big', limit: 2 });
      expect(first.map((x) => x.id)).toEqual(['many119', 'many118']);
      const before = s.stats.summaryReads;
      const next = await s.list({ folder: 'big', limit: 2, startAfter: first[1] });
      expect(next.map((x) => x.id)).toEqual(['many117', 'many116']);
      expect(s.stats.summaryReads - before).toBeLessThanOrEqual(20);
    });

    it('save, patch, status changes, promotion and delete move the entries between indexes', async () => {
      const { s, k } = fresh();
      await s.create({ id: 'p', folder: 'a' });
      await s.create({ id: 'c', folder: 'a', parentId: 'p' });
      expect(await members(c, k.folderIndex('a'))).toEqual(expect.arrayContaining(['p', 'c']));
      expect(await members(c, k.parentIndex('p'))).toEqual(['c']);

      const loaded = await s.load('p');
      await s.save({ ...loaded, folder: 'b', status: 'paused' });
      expect(await members(c, k.folderIndex('a'))).toEqual(['c']);
      expect(await members(c, k.folderIndex('b'))).toEqual(['p']);
      expect(await members(c, k.statusIndex('paused'))).toEqual(['p']);
      expect(await members(c, k.statusIndex('active'))).toEqual(['c']);

      await s.commit('c', { patch: { folder: 'b', status: 'done' } });
      expect(await c.exists(k.folderIndex('a'))).toBe(0);
      expect((await s.list({ folder: 'b' })).map((x) => x.id)).toEqual(['c', 'p']);
      expect((await s.list({ status: 'done' })).map((x) => x.id)).toEqual(['c']);
      expect(await s.list({ folder: 'a' })).toEqual([]);

      // Every entry sits at its session's updatedAt.
      for (const id of ['p', 'c']) {
        const { updatedAt, folder, status } = await s.load(id);
        for (const key of [k.order, k.folderIndex(folder), k.statusIndex(status)]) {
          expect(Number(await c.zscore(key, id)), `${key} ${id}`).toBe(updatedAt.getTime());
        }
      }

      // Deleting the parent promotes the child to a root: it leaves the parent's index.
      await s.delete('p');
      expect(await c.exists(k.parentIndex('p'))).toBe(0);
      expect(await s.list({ parentId: 'p' })).toEqual([]);
      expect(await members(c, k.folderIndex('b'))).toEqual(['c']);
      expect(await c.exists(k.statusIndex('paused'))).toBe(0);
      expect((await s.repair()).indexEntriesFixed).toBe(0);
      await s.delete('c');
      expect(await c.exists(k.folderIndex('b'))).toBe(0);
      expect(await c.exists(k.statusIndex('done'))).toBe(0);
    });

    it('branch and clone join the indexes of their folder, status and parent', async () => {
      const { s, k } = fresh();
      await s.create({ id: 'src', folder: 'x', messages: [{ role: 'user', content: 'hi' }] });
      const branch = await s.branch('src', 1);
      const clone = await s.clone('src');
      expect((await s.list({ parentId: 'src' })).map((x) => x.id)).toEqual([branch.id]);
      expect((await s.list({ folder: 'x' })).map((x) => x.id).sort()).toEqual(
        [branch.id, clone.id, 'src'].sort(),
      );
      expect(await members(c, k.parentIndex('src'))).toEqual([branch.id]);
      await s.merge(branch.id);
      expect((await s.repair()).indexEntriesFixed).toBe(0);
    });

    it('repair() rebuilds filter indexes that were lost and drops entries that do not belong', async () => {
      const { s, k } = fresh();
      await s.create({ id: 'one', folder: 'f' });
      await s.create({ id: 'two', folder: 'f', status: 'done', parentId: 'one' });
      for (const key of [k.folderIndex('f'), k.statusIndex('active'), k.parentIndex('one')]) {
        await c.del(key);
      }
      await c.zadd(k.folderIndex('elsewhere'), 1, 'one');
      // An entry that does not belong is never listed.
      expect(await s.list({ folder: 'elsewhere' })).toEqual([]);
      const report = await s.repair();
      // one in f and active, two in f and one's index, the stray entry.
      expect(report.indexEntriesFixed).toBe(5);
      expect((await s.list({ folder: 'f' })).map((x) => x.id)).toEqual(['two', 'one']);
      expect((await s.list({ parentId: 'one' })).map((x) => x.id)).toEqual(['two']);
      expect(await c.exists(k.folderIndex('elsewhere'))).toBe(0);
      expect((await s.repair()).indexEntriesFixed).toBe(0);
    });
  });
}

suite('standalone', standalone, async () => (client ??= newClient()));
suite('Cluster', withCluster, async () => {
  cluster ??= await startCluster(3);
  clusterClient ??= cluster.client();
  return clusterClient;
});
