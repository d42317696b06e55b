// What a store does with a write script that runs twice (a client re-sending it after a
// reconnect, with another writer's write in between) and with a write whose reply never
// comes (a client that forgets a command in flight when its connection drops). Both are
// made exactly here by a client wrapper, so each case runs every time.
import { isSessionKitError, type Message } from '@sessionkit/core';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeySpace, RedisStore } from '../src/index.js';
import { SCRIPTS } from '../src/lua/index.js';
import { redisAvailable } from './env.js';
import { dropPrefix, freshPrefix, newClient } from './harness.js';

const available = redisAvailable('the exactly-once tests did not run');
let client: Redis | undefined;
const prefixes: string[] = [];

beforeAll(async () => {
  if (!available) return;
  // Loaded up front, so every run is an EVALSHA the wrapper sees (never NOSCRIPT + EVAL).
  client ??= newClient();
  for (const script of Object.values(SCRIPTS)) await client.script('LOAD', script.source);
});

afterAll(async () => {
  if (!client) return;
  for (const p of prefixes) await dropPrefix(client, p);
  await client.quit();
});

/** What the wrapper does with the next run of one script. */
type Fault =
  /** Runs it, then `between`, then runs it again and answers with the second reply. */
  | { kind: 'twice'; sha: string; between: () => Promise<unknown> }
  /** Runs it (or not) and never answers; the connection then reports that it closed. */
  | { kind: 'lost'; sha: string; land: boolean };

/**
 * A store over a client wrapper that applies `fault` to the next run of its script, and a
 * second store on the same prefix (the other writer). `sent` collects the arguments of
 * lost runs, to send them again later as a client would.
 */
function stores() {
  client ??= newClient();
  const real = client;
  const prefix = freshPrefix();
  prefixes.push(prefix);
  const state: { fault?: Fault | undefined; sent: unknown[][] } = { sent: [] };
  const wrapper = Object.create(real) as Redis;
  wrapper.evalsha = (async (...args: unknown[]) => {
    const fault = state.fault;
    if (!fault || args[0] !== fault.sha) return real.evalsha(...(args as [string, number]));
    state.fault = undefined;
    if (fault.kind === 'twice') {
      await real.evalsha(...(args as [string, number]));
      await fault.between();
      return real.evalsha(...(args as [string, number]));
    }
    state.sent.push(args);
    if (fault.land) await real.evalsha(...(args as [string, number]));
    setTimeout(() => real.emit('close'), 20);
    return new Promise(() => {});
  }) as Redis['evalsha'];
  const store = new RedisStore({ client: wrapper, prefix });
  const other = new RedisStore({ client: real, prefix });
  return { store, other, state, real, keys: new KeySpace(prefix) };
}

const contents = async (s: RedisStore, id: string) =>
  (await s.loadMessages(id)).map((m) => (m as Message).content);

describe.skipIf(!available)('redis › a write script that runs twice applies once', () => {
  it('commit: another writer in between, the second run finds the first and writes nothing', async () => {
    const { store, other, state } = stores();
    await store.create({ id: 's' });
    await store.commit('s', { append: [{ role: 'user', content: 'a0' }] });
    state.fault = {
      kind: 'twice',
      sha: SCRIPTS.write.sha,
      between: () => other.commit('s', { append: [{ role: 'user', content: 'b1' }] }),
    };
    const result = await store.commit('s', {
      append: [{ role: 'user', content: 'a1' }],
      increment: { turnCount: 1 },
    });
    expect(result.revision).toBe(3);
    expect(await contents(other, 's')).toEqual(['a0', 'a1', 'b1']);
    expect((await other.load('s')).turnCount).toBe(1);
    // The next commit computes from the true state.
    await store.commit('s', { append: [{ role: 'user', content: 'a2' }] });
    expect(await contents(other, 's')).toEqual(['a0', 'a1', 'b1', 'a2']);
  });

  it('delete: the second run reports the first one’s outcome, not not_found, and promotes the children', async () => {
    const { store, other, state } = stores();
    await store.create({ id: 'p' });
    await store.create({ id: 'gone', parentId: 'p' });
    await store.create({ id: 'kid', parentId: 'gone' });
    state.fault = { kind: 'twice', sha: SCRIPTS.delete.sha, between: async () => {} };
    await store.delete('gone');
    expect((await other.load('kid')).parentId).toBe('p');
    expect((await other.load('p')).children).toEqual(['kid']);
  });

  it('create: a second run after another writer deleted it does not bring the session back', async () => {
    const { store, other, state } = stores();
    state.fault = {
      kind: 'twice',
      sha: SCRIPTS.create.sha,
      between: () => other.delete('s'),
    };
    await store.create({ id: 's', title: 'first' });
    const e = await other.load('s').catch((x: unknown) => x);
    expect(isSessionKitError(e, 'not_found')).toBe(true);
  });

  it('branch: a second run of its create is not exists, and the branch is the one returned', async () => {
    const { store, other, state } = stores();
    await store.create({ id: 'p', messages: [{ role: 'user', content: 'x' }] });
    state.fault = { kind: 'twice', sha: SCRIPTS.create.sha, between: async () => {} };
    const branch = await store.branch('p', 1);
    expect((await other.load('p')).children).toEqual([branch.id]);
  });

  it('events and status: one event per append; a status re-sent after a newer one does not overwrite it', async () => {
    const { store, other, state } = stores();
    await store.create({ id: 's' });
    state.fault = { kind: 'twice', sha: SCRIPTS.appendEvent.sha, between: async () => {} };
    expect((await store.append('s', 'once', { n: 1 })).sequence).toBe(1);
    expect((await other.events('s')).map((e) => e.type)).toEqual(['once']);
    state.fault = {
      kind: 'twice',
      sha: SCRIPTS.saveStatus.sha,
      between: () => other.saveRuntimeStatus('s', { newer: true }),
    };
    await store.saveRuntimeStatus('s', { older: true });
    expect(await other.loadRuntimeStatus('s')).toEqual({ newer: true });
  });
});

describe.skipIf(!available)('redis › a write whose reply is lost with its connection', () => {
  it('that landed: the call settles with its result, once', async () => {
    const { store, other, state } = stores();
    await store.create({ id: 's' });
    state.fault = { kind: 'lost', sha: SCRIPTS.write.sha, land: true };
    const result = await store.commit('s', { append: [{ role: 'user', content: 'landed' }] });
    expect(result).toMatchObject({ revision: 2, messageCount: 1 });
    expect(await contents(other, 's')).toEqual(['landed']);
  });

  it('that did not land: unavailable and retryable, the session’s queue is free, and a late run writes nothing', async () => {
    const { store, other, state, real } = stores();
    await store.create({ id: 's' });
    state.fault = { kind: 'lost', sha: SCRIPTS.write.sha, land: false };
    const error = await store
      .commit('s', { append: [{ role: 'user', content: 'lost' }] })
      .catch((e: unknown) => e);
    expect(isSessionKitError(error, 'unavailable'), String(error)).toBe(true);
    expect((error as { retryable?: unknown }).retryable).toBe(true);
    // The next commit of the session is not held behind the lost one.
    await store.commit('s', { append: [{ role: 'user', content: 'next' }] });
    // The lost command arrives after all (a client sending it late): it was fenced.
    const late = await real.evalsha(...(state.sent[0] as [string, number]));
    expect(late).toBe('f');
    expect(await contents(other, 's')).toEqual(['next']);
  });

  it('that did not land, its command arriving late with no write in between: fenced, writes nothing', async () => {
    const { store, other, state, real } = stores();
    await store.create({ id: 's', messages: [{ role: 'user', content: 'first' }] });
    state.fault = { kind: 'lost', sha: SCRIPTS.write.sha, land: false };
    const error = await store
      .commit('s', { append: [{ role: 'user', content: 'lost' }] })
      .catch((e: unknown) => e);
    expect(isSessionKitError(error, 'unavailable'), String(error)).toBe(true);
    // The session was not written since the plan: only the fence tells the late run apart.
    const late = await real.evalsha(...(state.sent[0] as [string, number]));
    expect(late).toBe('f');
    expect(await contents(other, 's')).toEqual(['first']);
    await store.commit('s', { append: [{ role: 'user', content: 'next' }] });
    expect(await contents(other, 's')).toEqual(['first', 'next']);
  });

  it('a lost delete that landed resolves (no false not_found) and promotes the children', async () => {
    const { store, other, state } = stores();
    await store.create({ id: 'p' });
    await store.create({ id: 'kid', parentId: 'p' });
    state.fault = { kind: 'lost', sha: SCRIPTS.delete.sha, land: true };
    await store.delete('p');
    expect((await other.load('kid')).parentId).toBeUndefined();
    expect(await other.list()).toHaveLength(1);
  });
});

describe.skipIf(!available)('redis › stored data and clients', () => {
  it('a session stored before life tokens (no `g`) reads, commits and deletes as before', async () => {
    const { store, other, real, keys } = stores();
    await store.create({ id: 'old', messages: [{ role: 'user', content: 'm0' }] });
    await real.hdel(keys.session('old').meta, 'g');
    await real.hset(keys.session('old').meta, 'o', 'token-of-an-older-version');
    await store.commit('old', { append: [{ role: 'user', content: 'm1' }] });
    await other.commit('old', { append: [{ role: 'user', content: 'm2' }] });
    await store.commit('old', { append: [{ role: 'user', content: 'm3' }] });
    expect(await contents(other, 'old')).toEqual(['m0', 'm1', 'm2', 'm3']);
    await store.delete('old');
    await other.create({ id: 'old', title: 'new' });
    await store.commit('old', { append: [{ role: 'user', content: 'n0' }] });
    expect(await other.load('old')).toMatchObject({ title: 'new', revision: 2 });
  });

  it('refuses clients it cannot be safe with, naming the setting', () => {
    const prefixed = new Redis({ keyPrefix: 'app:', lazyConnect: true });
    const replicas = new Cluster([{ host: '127.0.0.1', port: 1 }], {
      scaleReads: 'slave',
      lazyConnect: true,
    });
    try {
      for (const [c, pattern] of [
        [prefixed, /keyPrefix/],
        [replicas, /scaleReads/],
      ] as const) {
        let error: unknown;
        try {
          new RedisStore({ client: c });
        } catch (e) {
          error = e;
        }
        expect(isSessionKitError(error, 'invalid_argument'), String(error)).toBe(true);
        expect((error as Error).message).toMatch(pattern);
      }
    } finally {
      prefixed.disconnect();
      replicas.disconnect();
    }
  });

  it('repair() rebuilds a search text whose key is gone', async () => {
    const { store, real, keys } = stores();
    await store.create({ id: 's', messages: [{ role: 'user', content: 'Find the NEEDLE here' }] });
    await store.commit('s', { append: [{ role: 'assistant', content: 'and a haystack' }] });
    await real.del(keys.session('s').text);
    expect(await store.list({ query: 'needle' })).toEqual([]);
    expect((await store.repair()).indexEntriesFixed).toBe(1);
    expect((await store.list({ query: 'needle' })).map((x) => x.id)).toEqual(['s']);
    expect((await store.list({ query: 'haystack' })).map((x) => x.id)).toEqual(['s']);
    expect((await store.repair()).indexEntriesFixed).toBe(0);
  });
});
