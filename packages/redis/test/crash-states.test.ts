// The states a process leaves when it dies between a session's write and its index write,
// made exactly (each step run by itself, as the store runs it) and then read back: listing
// stays truthful and repair() restores the exact index.
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { KeySpace, RedisStore } from '../src/index.js';
import * as ix from '../src/lua/index-scripts.js';
import * as ss from '../src/lua/session-scripts.js';
import { redisAvailable } from './env.js';
import { dropPrefix, freshPrefix, newClient } from './harness.js';

const available = redisAvailable('the crash-state tests did not run');
let client: Redis | undefined;
const prefixes: string[] = [];

function fresh(): { s: RedisStore; k: KeySpace; c: Redis } {
  client ??= newClient();
  const prefix = freshPrefix();
  prefixes.push(prefix);
  return { s: new RedisStore({ client, prefix }), k: new KeySpace(prefix), c: client };
}

afterAll(async () => {
  if (!client) return;
  for (const p of prefixes) await dropPrefix(client, p);
  await client.quit();
});

/** Each summary equals its loaded session without messages, plus messageCount. */
async function expectTruthful(s: RedisStore): Promise<void> {
  for (const summary of await s.list({ includeArchived: true, limit: 1000 })) {
    const { messages, ...rest } = await s.load(summary.id);
    expect(summary).toEqual({ ...rest, messageCount: messages.length });
  }
}

describe.skipIf(!available)(
  'redis › a process killed between the session write and the index write',
  () => {
    it('create: an index entry without its session is never listed and is dropped once stale', async () => {
      const { s, k, c } = fresh();
      await s.create({ id: 'real', title: 'r' });
      // The create registered its index entry and died before writing the session.
      const filters = k.filterIndexesOf({ folder: '', status: 'active', parentId: 'real' });
      await c.eval(
        ix.INDEX_REGISTER,
        3 + filters.length,
        k.order,
        k.pending,
        k.children('real'),
        ...filters,
        Date.now(),
        'ghost',
        Date.now(),
        '1',
      );
      expect((await s.list()).map((x) => x.id)).toEqual(['real']);
      expect((await s.list({ folder: '' })).map((x) => x.id)).toEqual(['real']);
      expect(await s.list({ parentId: 'real' })).toEqual([]);
      expect((await s.load('real')).children).toEqual([]);
      await expectTruthful(s);
      // Within the grace period a create may still be running: repair leaves it.
      expect((await s.repair()).indexEntriesFixed).toBe(0);
      await c.zadd(k.pending, Date.now() - 120_000, 'ghost');
      const report = await s.repair();
      expect(report.indexEntriesFixed).toBeGreaterThanOrEqual(2); // the order entry and the pending mark
      expect(await c.zscore(k.order, 'ghost')).toBeNull();
      for (const key of filters) expect(await c.zscore(key, 'ghost'), key).toBeNull();
      expect(await c.exists(k.pending)).toBe(0);
      expect((await s.repair()).indexEntriesFixed).toBe(0);
    });

    it('commit (Cluster path): a stale order entry is healed by the first listing that meets it', async () => {
      const { s, k, c } = fresh();
      await s.create({ id: 'a', updatedAt: new Date(1000) });
      await s.create({ id: 'b', updatedAt: new Date(2000) });
      const before = Number(await c.zscore(k.order, 'a'));
      await s.commit('a', {
        append: [{ role: 'user', content: 'later' }],
        patch: { title: 'new' },
      });
      // What a Cluster process that died after the session script and before the index
      // script leaves: the entry still at the old time.
      await c.zadd(k.order, before, 'a');
      const listed = await s.list();
      expect(listed.map((x) => x.id)).toEqual(['a', 'b']);
      expect(listed[0]?.title).toBe('new');
      expect(s.stats.indexHeals).toBe(1);
      await expectTruthful(s);
      expect((await s.repair()).indexEntriesFixed).toBe(0);
    });

    it('commit: repair() alone restores the exact order', async () => {
      const { s, k, c } = fresh();
      await s.create({ id: 'a', updatedAt: new Date(1000) });
      await s.create({ id: 'b', updatedAt: new Date(2000) });
      await s.commit('a', { patch: { title: 'x' } });
      const truth = Number(await c.zscore(k.order, 'a'));
      await c.zadd(k.order, 1000, 'a');
      expect((await s.repair()).indexEntriesFixed).toBe(1);
      expect(Number(await c.zscore(k.order, 'a'))).toBe(truth);
    });

    it('delete: the session gone, its index entries left: never listed, repair removes them', async () => {
      const { s, k, c } = fresh();
      await s.create({ id: 'p' });
      await s.create({ id: 'gone', parentId: 'p' });
      await s.create({ id: 'kid', parentId: 'gone' });
      // The delete ran its session script and died.
      const keys = Object.values(k.session('gone'));
      await c.eval(ss.DELETE, keys.length, ...keys, 'crash-state-delete');
      expect((await s.list()).map((x) => x.id).sort()).toEqual(['kid', 'p']);
      expect((await s.load('p')).children).toEqual([]);
      await expectTruthful(s);
      expect(await c.zscore(k.order, 'gone')).toBeNull(); // the listing dropped it
      const report = await s.repair();
      expect(report.indexEntriesFixed).toBeGreaterThanOrEqual(1); // p's children set
      expect(await c.sismember(k.children('p'), 'gone')).toBe(0);
      expect((await s.repair()).indexEntriesFixed).toBe(0);
    });
  },
);
