// The key layout on a real server: hostile values stay inside their session's keys, a
// delete leaves no key behind, a TTL removes a session with everything that names it.
import { isSessionKitError } from '@sessionkit/core';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { KeySpace, RedisStore } from '../src/index.js';
import { SCRIPTS } from '../src/lua/index.js';
import { LEDGER_TTL_MS } from '../src/lua/session-scripts.js';
import { redisAvailable } from './env.js';
import { dropPrefix, freshPrefix, keysUnder, newClient } from './harness.js';

const available = redisAvailable('the key layout tests did not run');
let client: Redis | undefined;
const prefixes: string[] = [];

function store(ttlSeconds?: number): RedisStore {
  client ??= newClient();
  const prefix = freshPrefix();
  prefixes.push(prefix);
  return new RedisStore({ client, prefix, ttlSeconds });
}

afterAll(async () => {
  if (!client) return;
  for (const p of prefixes) await dropPrefix(client, p);
  await client.quit();
});

const HOSTILE = ['{', '}', '{x}', '*', ':', '\n', 'a}:m\n{b', '{~ix}:order', '*:*\r\n'];

describe.skipIf(!available)('redis › key layout', () => {
  it('every key of a session carries its own hash tag, whatever its values hold', async () => {
    const s = store();
    const ids = ['a', 'a.b', 'a-b_c', 'A.1'];
    for (const [i, id] of ids.entries()) {
      await s.create({
        id,
        title: HOSTILE.join(' '),
        folder: HOSTILE[i] as string,
        metadata: Object.fromEntries(HOSTILE.map((h, j) => [`${h}${j}`, h])),
        messages: HOSTILE.map((h) => ({ role: 'user', content: h })),
      });
      await s.saveRuntimeStatus(id, { h: HOSTILE });
      await s.append(id, '{evt}:*', { h: HOSTILE });
    }
    const k = new KeySpace(s.prefix);
    const keys = await keysUnder(client as Redis, s.prefix);
    const sessionKeys = keys.filter((key) => !key.startsWith(`${s.prefix}{~`));
    expect(sessionKeys).toEqual(
      ids
        .flatMap((id) => [
          k.session(id).events,
          k.session(id).messages,
          k.session(id).meta,
          k.session(id).ledger,
          k.session(id).status,
          k.session(id).text,
        ])
        .sort(),
    );
    for (const [i, id] of ids.entries()) {
      const loaded = await s.load(id);
      expect(loaded.folder).toBe(HOSTILE[i]);
      expect(loaded.messages).toEqual(HOSTILE.map((h) => ({ role: 'user', content: h })));
      expect((await s.list({ folder: HOSTILE[i] as string })).map((x) => x.id)).toEqual([id]);
    }
    // A glob or a tag in a query is text, not a pattern.
    expect((await s.list({ query: '{x}' })).map((x) => x.id).sort()).toEqual([...ids].sort());
    expect(await s.list({ query: 'a*b' })).toEqual([]);
    await s.delete('a');
    for (const id of ids.slice(1)) expect((await s.load(id)).messages).toHaveLength(HOSTILE.length);
  });

  it('a page of a listing on standalone Redis reads its summaries in one script; a missing or damaged session is skipped', async () => {
    client ??= newClient();
    const real = client;
    const prefix = freshPrefix();
    prefixes.push(prefix);
    const runs = new Map<string, number>();
    const counting = Object.create(real) as Redis;
    counting.evalsha = ((...args: [string, number]) => {
      runs.set(args[0], (runs.get(args[0]) ?? 0) + 1);
      return real.evalsha(...args);
    }) as Redis['evalsha'];
    const s = new RedisStore({ client: counting, prefix });
    // Two-digit ids: sessions created in the same millisecond tie on updatedAt and are then
    // ordered by id, which for these ids is their order of creation too.
    const id = (i: number) => `s${String(i).padStart(2, '0')}`;
    for (let i = 0; i < 30; i++) await s.create({ id: id(i), title: `t${i}` });
    runs.clear();
    expect((await s.list({ limit: 20 })).map((x) => x.id)).toEqual(
      Array.from({ length: 20 }, (_, i) => id(29 - i)),
    );
    expect(runs.get(SCRIPTS.summaries.sha)).toBe(1);
    const keys = new KeySpace(prefix);
    await real.del(keys.session('s29').meta);
    await real.hset(keys.session('s28').meta, 'h', 'not json');
    expect((await s.list({ limit: 20 })).map((x) => x.id)).toEqual(
      Array.from({ length: 20 }, (_, i) => id(27 - i)),
    );
    expect(runs.get(SCRIPTS.summary.sha)).toBeUndefined();
  });

  it('rejects ids and prefixes that could reach another key before any I/O', async () => {
    const s = store();
    for (const id of ['{a}', 'a}', 'a*', 'a:b', 'a\nb', '', '.a']) {
      const e = await s.create({ id }).catch((x: unknown) => x);
      expect(isSessionKitError(e, 'invalid_argument'), id).toBe(true);
    }
    expect(await keysUnder(client as Redis, s.prefix)).toEqual([]);
    for (const prefix of ['{x}', 'a}', 'p*', 'p?', 'p[1]', 'p q', 'p\n']) {
      expect(() => new RedisStore({ client: client as Redis, prefix }), prefix).toThrow(/prefix/);
    }
  });

  it('after delete, SCAN finds no data key of the session (its write ledger expires) and no index entry names it', async () => {
    const s = store();
    const parent = await s.create({ id: 'p', messages: [{ role: 'user', content: 'x' }] });
    await s.create({ id: 'gone', parentId: parent.id, messages: [{ role: 'user', content: 'y' }] });
    await s.create({ id: 'kid', parentId: 'gone' });
    await s.saveRuntimeStatus('gone', { ok: true });
    await s.append('gone', 't');
    await s.bind('tg', 'chat', '', 'gone');
    await s.follow('tg', 'chat2', 'gone');
    await s.delete('gone');
    const keys = await keysUnder(client as Redis, s.prefix);
    const k = new KeySpace(s.prefix);
    const c = client as Redis;
    // Only the ledger of its writes is left (tokens and outcomes, never message text), so
    // that a delete or a commit the client sends again finds what it did; it expires.
    expect(keys.filter((key) => key.includes('{gone}'))).toEqual([k.session('gone').ledger]);
    const ledgerTtl = await c.pttl(k.session('gone').ledger);
    expect(ledgerTtl).toBeGreaterThan(0);
    expect(ledgerTtl).toBeLessThanOrEqual(LEDGER_TTL_MS);
    expect(await c.zscore(k.order, 'gone')).toBeNull();
    expect(await c.exists(k.children('gone'))).toBe(0);
    expect(await c.sismember(k.children('p'), 'gone')).toBe(0);
    expect(await c.hvals(k.bindings)).not.toContain('gone');
    expect(await c.hvals(k.follows)).not.toContain('gone');
    expect((await s.load('kid')).parentId).toBe('p');
    expect((await s.load('p')).children).toEqual(['kid']);
  });

  it('a TTL removes a session with every key and index entry together', async () => {
    const s = store(1);
    await s.create({ id: 'short', folder: 'f', messages: [{ role: 'user', content: 'hello' }] });
    await s.commit('short', { append: [{ role: 'assistant', content: 'hi' }], operationId: 'op' });
    await s.saveRuntimeStatus('short', { step: 1 });
    await s.append('short', 'started');
    await s.bind('tg', 'c', '', 'short');
    const c = client as Redis;
    const k = new KeySpace(s.prefix);
    // The previous release's text key is never written; every other key of the session,
    // its operation ids included, expires with it.
    const { ledger, ledgerPrevious, legacyText, ...data } = k.session('short');
    expect(await c.exists(legacyText)).toBe(0);
    for (const key of Object.values(data)) {
      const ttl = await c.pttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(1000);
    }
    await new Promise((r) => setTimeout(r, 1300));
    // The write ledger (no session data) outlives the session for its own, fixed time.
    expect((await keysUnder(c, s.prefix)).filter((key) => key.includes('{short}'))).toEqual([
      ledger,
    ]);
    expect(await c.exists(ledgerPrevious)).toBe(0);
    const e = await s.load('short').catch((x: unknown) => x);
    expect(isSessionKitError(e, 'not_found')).toBe(true);
    // Each listing drops the expired entry of the index it walks.
    expect(await s.list()).toEqual([]);
    expect(await s.list({ folder: 'f' })).toEqual([]);
    expect(await s.list({ status: 'active' })).toEqual([]);
    expect(await s.resolve('tg', 'c', '', '')).toBe('');
    expect(await s.recent()).toEqual([]);
    // The listings that met the expired entries dropped them; repair finds nothing left.
    for (const key of [k.order, k.folderIndex('f'), k.statusIndex('active')]) {
      expect(await c.zscore(key, 'short'), key).toBeNull();
    }
    expect((await s.repair()).indexEntriesFixed).toBe(0);
  });
});
