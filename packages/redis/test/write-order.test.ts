// A store's writes of one session run one at a time, in call order (context.ts,
// `serialWrite`): concurrent commits of one process never race each other for a version,
// so each is one script call, and they land in the order they were made.
import type { Message } from '@sessionkit/core';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../src/index.js';
import { redisAvailable } from './env.js';
import { dropPrefix, freshPrefix, newClient } from './harness.js';

const available = redisAvailable('the write-order tests did not run');
let client: Redis | undefined;
const prefix = freshPrefix();

afterAll(async () => {
  if (!client) return;
  await dropPrefix(client, prefix);
  await client.quit();
});

describe.skipIf(!available)('redis › a store’s writes of one session', () => {
  it('30 concurrent commits: one script call each, in call order, none lost', async () => {
    client = newClient();
    // Counts the scripts the store runs (EVALSHA, or EVAL when a script is not loaded).
    let scripts = 0;
    const counting = Object.create(client) as Redis;
    counting.evalsha = ((...args: Parameters<Redis['evalsha']>) => {
      scripts++;
      return client?.evalsha(...args);
    }) as Redis['evalsha'];
    counting.eval = ((...args: Parameters<Redis['eval']>) => {
      scripts++;
      return client?.eval(...args);
    }) as Redis['eval'];
    const store = new RedisStore({ client: counting, prefix });
    await store.create({ id: 'ordered' });
    await store.commit('ordered', { append: [{ role: 'user', content: 'warm' }] });
    scripts = 0;
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        store.commit('ordered', { append: [{ role: 'user', content: `c${i}` }] }),
      ),
    );
    expect(results.map((r) => r.revision)).toEqual(Array.from({ length: 30 }, (_, i) => i + 3));
    // Standalone Redis: a commit is one script (the order entry is written inside it). A
    // commit that raced another of this store would run its script again.
    expect(scripts).toBe(30);
    const texts = (await store.loadMessages('ordered')).map((m) => (m as Message).content);
    expect(texts).toEqual(['warm', ...Array.from({ length: 30 }, (_, i) => `c${i}`)]);
  });
});
