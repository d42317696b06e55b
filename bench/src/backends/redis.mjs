// The Redis store (standalone) beside a raw Lua turn of the same shape: check the
// revision, append the two messages, bump the revision, in one script on one key slot.
import { RedisStore } from '@sessionkit/redis';
import { Redis } from 'ioredis';
import { testSetting } from '../env.mjs';

let client;
function sharedClient() {
  if (!client) {
    client = new Redis(testSetting('SESSIONKIT_TEST_REDIS_URL'), {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
    });
    client.on('error', () => {});
  }
  return client;
}

let prefixes = 0;
const freshPrefix = (what) => `sk-bench-${what}-${process.pid}-${++prefixes}:`;

/** The keys under `prefix`, by SCAN. */
async function keysUnder(prefix) {
  const keys = [];
  for await (const batch of sharedClient().scanStream({ match: `${prefix}*`, count: 1000 })) {
    keys.push(...batch);
  }
  return keys;
}

async function dropPrefix(prefix) {
  const keys = await keysUnder(prefix);
  for (let i = 0; i < keys.length; i += 500) await sharedClient().unlink(...keys.slice(i, i + 500));
}

const RAW_TURN = `
if tonumber(redis.call('GET', KEYS[1]) or '0') ~= tonumber(ARGV[1]) then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[2], ARGV[3])
redis.call('INCR', KEYS[1])
return 1`;

export default {
  name: 'redis',
  ceiling: 'one Lua script: revision check + RPUSH + INCR',
  async available() {
    try {
      await sharedClient()
        .connect()
        .catch(() => {});
      await sharedClient().ping();
      return true;
    } catch (e) {
      return `not reachable (${e.message})`;
    }
  },
  async open() {
    const prefix = freshPrefix('store');
    const store = new RedisStore({ client: sharedClient(), prefix });
    return {
      store,
      async storedBytes() {
        let total = 0;
        for (const key of await keysUnder(prefix)) {
          total += Number((await sharedClient().memory('USAGE', key, 'SAMPLES', '0')) ?? 0);
        }
        return total;
      },
      // Bytes the server received (server-wide: run the bench on an otherwise idle server).
      async writtenBytes() {
        const info = await sharedClient().info('stats');
        return Number(/total_net_input_bytes:(\d+)/.exec(info)?.[1] ?? Number.NaN);
      },
      async close() {
        await store.close();
        await dropPrefix(prefix);
      },
    };
  },
  async raw(history) {
    const prefix = freshPrefix('raw');
    const db = sharedClient();
    const [rev, list] = [`${prefix}{s}:rev`, `${prefix}{s}:list`];
    await db.set(rev, '1');
    for (let done = 0; done < history; done += 1000) {
      const count = Math.min(1000, history - done);
      await db.rpush(list, ...Array.from({ length: count }, () => 'x'.repeat(1000)));
    }
    let revision = 1;
    return {
      async turn(messages) {
        const [a, b] = messages.map((m) => JSON.stringify(m));
        const ok = await db.eval(RAW_TURN, 2, rev, list, revision, a, b);
        if (ok !== 1) throw new Error('raw turn lost its revision');
        revision += 1;
      },
      close: () => dropPrefix(prefix),
    };
  },
  async end() {
    await client?.quit();
    client = undefined;
  },
};
