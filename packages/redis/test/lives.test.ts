// A session deleted and created again under its id is another session (another life
// token). These are the races of the tree's writes with such a delete and re-create by
// another process, made exactly by a client wrapper that runs a step of the other process
// just before a given script of this one.
import { isSessionKitError, type Message } from '@sessionkit/core';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeySpace, RedisStore } from '../src/index.js';
import { SCRIPTS } from '../src/lua/index.js';
import { redisAvailable } from './env.js';
import { dropPrefix, freshPrefix, newClient } from './harness.js';

const available = redisAvailable('the life-token race tests did not run');
let client: Redis | undefined;
const prefixes: string[] = [];

beforeAll(async () => {
  if (!available) return;
  client ??= newClient();
  // Loaded up front, so every run is an EVALSHA the wrapper sees.
  for (const script of Object.values(SCRIPTS)) await client.script('LOAD', script.source);
});

afterAll(async () => {
  if (!client) return;
  for (const p of prefixes) await dropPrefix(client, p);
  await client.quit();
});

/** `store` runs `before[sha]` once just before its next run of that script; `other` is plain. */
function stores() {
  const real = client as Redis;
  const prefix = freshPrefix();
  prefixes.push(prefix);
  const before = new Map<string, () => Promise<unknown>>();
  const wrapper = Object.create(real) as Redis;
  wrapper.evalsha = (async (...args: unknown[]) => {
    const step = before.get(args[0] as string);
    if (step) {
      before.delete(args[0] as string);
      await step();
    }
    return real.evalsha(...(args as [string, number]));
  }) as Redis['evalsha'];
  const store = new RedisStore({ client: wrapper, prefix });
  const other = new RedisStore({ client: real, prefix });
  return { store, other, before, real, keys: new KeySpace(prefix) };
}

const m = (content: string): Message => ({ role: 'user', content });

async function code(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    if (!isSessionKitError(e)) throw e;
    return e.code;
  }
}

describe.skipIf(!available)('redis › a re-created parent is another session', () => {
  it('branch: a parent deleted and created again before the branch is written is not_found, and no branch is left', async () => {
    const { store, other, before } = stores();
    await store.create({ id: 'p', messages: [m('old life')] });
    before.set(SCRIPTS.indexRegister.sha, async () => {
      await other.delete('p');
      await other.create({ id: 'p', title: 'new life' });
    });
    expect(await code(store.branch('p', 1))).toBe('not_found');
    expect((await other.list()).map((s) => s.id)).toEqual(['p']);
    const p = await other.load('p');
    expect(p.title).toBe('new life');
    expect(p.children).toEqual([]);
  });

  it('merge: a child is never merged into a parent created again under its parent id', async () => {
    const { store, other, real, keys } = stores();
    await store.create({ id: 'p', messages: [m('a')] });
    const child = await store.branch('p', 1);
    await store.commit(child.id, { append: [m('b')] });
    // Another process's delete of p has removed p's keys and has not promoted yet; a third
    // creates p again.
    await real.del(...keys.sessionKeyList('p'));
    await other.create({ id: 'p', title: 'another' });
    expect(await code(store.merge(child.id))).toBe('not_found');
    const p = await other.load('p');
    expect(p.messages).toEqual([]);
    expect(p.revision).toBe(1);
  });

  it("delete: a child of the id's later life is not promoted by the earlier life's delete", async () => {
    const { store, other, before } = stores();
    await store.create({ id: 'p', messages: [m('a')] });
    const early = await store.branch('p', 1);
    let late = '';
    // The delete's script ran; before its promotions read the children, p is created again
    // and branched by another process.
    before.set(SCRIPTS.readChildren.sha, async () => {
      await other.create({ id: 'p', messages: [m('x')] });
      late = (await other.branch('p', 1)).id;
    });
    await store.delete('p');
    expect((await other.load(early.id)).parentId).toBeUndefined();
    expect((await other.load(late)).parentId).toBe('p');
    // Its merge goes into the life it was branched from.
    await other.commit(late, { append: [m('y')] });
    expect((await other.merge(late)).messages).toEqual([m('x'), m('y')]);
  });
});
