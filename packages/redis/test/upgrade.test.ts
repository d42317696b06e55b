// The upgrade from the previous release. It kept a session's search data as one string
// key (`{id}:t`, the lower-cased text of the messages whose string `content` or `text` it
// read — never message parts) and had no format key. This release keeps one search text
// per message (`{id}:x`, so a truncation drops entries) read by core's `messageText`,
// parts included. The first call of a store rebuilds every session of the previous format
// from its messages; `repair()` rebuilds any that is still of it (one written later by a
// process of the previous release).
import type { Message } from '@sessionkit/core';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { KeySpace, RedisStore } from '../src/index.js';
import { SCRIPTS } from '../src/lua/index.js';
import { FORMAT } from '../src/lua/index-scripts.js';
import { redisAvailable } from './env.js';
import { dropPrefix, freshPrefix, newClient } from './harness.js';

const available = redisAvailable('the upgrade tests did not run');
let client: Redis | undefined;
const prefixes: string[] = [];

afterAll(async () => {
  if (!client) return;
  for (const p of prefixes) await dropPrefix(client, p);
  await client.quit();
});

function setup(): { c: Redis; prefix: string; keys: KeySpace } {
  client ??= newClient();
  const prefix = freshPrefix();
  prefixes.push(prefix);
  return { c: client, prefix, keys: new KeySpace(prefix) };
}

/** An AI SDK UIMessage: its text lives only in `parts`. */
const ui = (id: string, role: string, text: string): Message =>
  ({ id, role, parts: [{ type: 'text', text }] }) as unknown as Message;

/** Writes session `id` exactly as the previous release stored it. */
async function writePrevious(
  c: Redis,
  keys: KeySpace,
  id: string,
  messages: Message[],
  previousSearchText: string,
): Promise<void> {
  const at = Date.UTC(2026, 10, 1);
  const header = {
    v: 1,
    id,
    title: '',
    folder: '',
    createdAt: at,
    updatedAt: at,
    model: '',
    provider: '',
    tokenCount: 0,
    costUsd: 0,
    turnCount: 0,
    metadata: {},
    status: 'active',
    revision: 1,
  };
  const k = keys.session(id);
  await c.hset(k.meta, {
    h: JSON.stringify(header),
    r: '1',
    w: '1',
    g: `life-of-${id}`,
    n: String(messages.length),
    l: '{"rewrites":0}',
    p: '',
    e: '0',
  });
  if (messages.length > 0) await c.rpush(k.messages, ...messages.map((m) => JSON.stringify(m)));
  await c.set(k.legacyText, previousSearchText);
  await c.zadd(keys.order, at, id);
}

const ids = (rows: { id: string }[]) => rows.map((r) => r.id).sort();

describe.skipIf(!available)('redis › upgrade from the previous release', () => {
  it('the first call rebuilds search data of the previous format: parts are found', async () => {
    const { c, prefix, keys } = setup();
    await writePrevious(c, keys, 'chat', [ui('m1', 'user', 'Plan the ZEPPELIN trip')], '');
    await writePrevious(
      c,
      keys,
      'plain',
      [{ role: 'user', content: 'An old Needle' } as Message],
      'aan old needle',
    );
    await writePrevious(c, keys, 'empty', [], '');
    const store = new RedisStore({ client: c, prefix });
    expect(ids(await store.list({ query: 'zeppelin' }))).toEqual(['chat']);
    expect(ids(await store.list({ query: 'needle' }))).toEqual(['plain']);
    expect(ids(await store.list())).toEqual(['chat', 'empty', 'plain']);
    expect(ids(await store.list({ folder: '', status: 'active' }))).toEqual([
      'chat',
      'empty',
      'plain',
    ]);
    for (const id of ['chat', 'plain', 'empty']) {
      expect(await c.exists(keys.session(id).legacyText), id).toBe(0);
    }
    expect(await c.lrange(keys.session('chat').text, 0, -1)).toEqual(['plan the zeppelin trip']);
    expect(await c.get(keys.format)).toBe(FORMAT);
    // Upgraded sessions take every write of this release; search follows a truncation.
    await store.commit('chat', { truncate: 0, append: [ui('m2', 'user', 'a balloon instead')] });
    expect(await store.list({ query: 'zeppelin' })).toEqual([]);
    expect(ids(await store.list({ query: 'balloon' }))).toEqual(['chat']);
    expect((await store.repair()).indexEntriesFixed).toBe(0);
  });

  it('repair() rebuilds a session of the previous format written after the upgrade', async () => {
    const { c, prefix, keys } = setup();
    const store = new RedisStore({ client: c, prefix });
    await store.create({ id: 'new', messages: [ui('a', 'user', 'fresh text')] });
    expect(await c.get(keys.format)).toBe(FORMAT);
    await writePrevious(c, keys, 'late', [ui('b', 'assistant', 'Written by an OLD process')], '');
    expect(await store.list({ query: 'old process' })).toEqual([]);
    // Its search texts, and its entries in the indexes of its folder and status.
    expect((await store.repair()).indexEntriesFixed).toBe(3);
    expect(ids(await store.list({ query: 'old process' }))).toEqual(['late']);
    expect(ids(await store.list({ folder: '' }))).toEqual(['late', 'new']);
    expect(ids(await store.list({ query: 'fresh' }))).toEqual(['new']);
    expect(await c.exists(keys.session('late').legacyText)).toBe(0);
  });

  it('a session of the previous format left after the upgrade keeps search aligned through append and truncate', async () => {
    // A session the upgrade did not rebuild (its rebuild failed or raced, or a process of
    // the previous release wrote it after the format key was set) has no per-message
    // texts: a write must not push this release's texts at index 0 of that list, nor
    // trim it as if it held one text per message.
    const { c, prefix, keys } = setup();
    const store = new RedisStore({ client: c, prefix });
    expect(await store.list()).toEqual([]);
    expect(await c.get(keys.format)).toBe(FORMAT);
    await writePrevious(
      c,
      keys,
      'skipped',
      [ui('m1', 'user', 'the ALPHA plan'), ui('m2', 'assistant', 'a bravo reply')],
      '',
    );
    await store.commit('skipped', { append: [ui('m3', 'user', 'charlie asks')] });
    await store.commit('skipped', { truncate: 1, append: [ui('m4', 'user', 'delta instead')] });
    expect(ids(await store.list({ query: 'alpha' }))).toEqual(['skipped']);
    expect(ids(await store.list({ query: 'delta' }))).toEqual(['skipped']);
    expect(await store.list({ query: 'bravo' })).toEqual([]);
    expect(await store.list({ query: 'charlie' })).toEqual([]);
    expect(await c.lrange(keys.session('skipped').text, 0, -1)).toEqual([
      'the alpha plan',
      'delta instead',
    ]);
    expect((await store.repair()).indexEntriesFixed).toBe(0);
  });

  it('a search-text rebuild of the upgrade that loses a race with a write is tried again', async () => {
    const { c, prefix, keys } = setup();
    await writePrevious(c, keys, 'raced', [ui('m1', 'user', 'an ECHO of parts')], '');
    // The store's own client: the first rebuild of 'raced' finds its write version moved
    // (a write landed between the upgrade's read and its rebuild).
    const own = newClient();
    const evalsha = own.evalsha.bind(own) as (...args: unknown[]) => Promise<unknown>;
    let raced = false;
    (own as unknown as { evalsha: typeof evalsha }).evalsha = async (...args: unknown[]) => {
      if (!raced && args[0] === SCRIPTS.rebuildText.sha) {
        raced = true;
        await c.hincrby(keys.session('raced').meta, 'w', 1);
      }
      return evalsha(...args);
    };
    try {
      const store = new RedisStore({ client: own, prefix });
      expect(ids(await store.list({ query: 'echo' }))).toEqual(['raced']);
      expect(raced).toBe(true);
      expect(await c.lrange(keys.session('raced').text, 0, -1)).toEqual(['an echo of parts']);
      expect(await c.get(keys.format)).toBe(FORMAT);
    } finally {
      own.disconnect();
    }
  });

  it('the first call of a store of format 2 (no filter indexes) builds them', async () => {
    const { c, prefix, keys } = setup();
    // Format 2 stored every key this release stores except the filter indexes: a store of
    // this release writes the sessions, then the indexes go and the format key says 2.
    const writer = new RedisStore({ client: c, prefix });
    await writer.create({ id: 'a1', folder: 'a' });
    await writer.create({ id: 'a2', folder: 'a', status: 'done' });
    await writer.create({ id: 'k1', folder: 'b', parentId: 'a1' });
    for (const pattern of keys.filterIndexPatterns) {
      for (const key of await c.keys(pattern)) await c.del(key);
    }
    await c.set(keys.format, '2');
    const store = new RedisStore({ client: c, prefix });
    expect(ids(await store.list({ folder: 'a' }))).toEqual(['a1', 'a2']);
    expect(ids(await store.list({ status: 'done' }))).toEqual(['a2']);
    expect(ids(await store.list({ status: 'active', folder: 'b' }))).toEqual(['k1']);
    expect(ids(await store.list({ parentId: 'a1' }))).toEqual(['k1']);
    expect(await c.get(keys.format)).toBe(FORMAT);
    expect(await c.zscore(keys.folderIndex('a'), 'a1')).toBe(await c.zscore(keys.order, 'a1'));
    expect((await store.repair()).indexEntriesFixed).toBe(0);
  });

  it('a store with no session is marked current without a scan', async () => {
    const { c, prefix, keys } = setup();
    const store = new RedisStore({ client: c, prefix });
    expect(await store.list()).toEqual([]);
    expect(await c.get(keys.format)).toBe(FORMAT);
  });
});
