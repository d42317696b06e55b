// Input is read once (DESIGN: bad input is a SessionKitError and changes nothing): a getter
// or proxy that throws is `invalid_argument`, and a value that changes between two reads
// can never make a store keep something other than what it validated.
import type { Committer, Message, Store } from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import { createSession, expectCode, msg, turns } from './util.js';

type C = Store & Committer;

/** An object whose `key` throws when read. */
function throwing<T extends object>(base: T, key: string): T {
  return Object.defineProperty({ ...base }, key, {
    enumerable: true,
    get() {
      throw new Error('getter exploded');
    },
  });
}

/**
 * A message whose `content` is `first` on the first read and then a value JSON cannot
 * hold: a store that reads it twice validates one value and stores (or fails on) another.
 */
function shifty(first: string): { message: Message; reads: () => number } {
  let reads = 0;
  const message = Object.defineProperty({ role: 'user' }, 'content', {
    enumerable: true,
    get() {
      reads++;
      return reads === 1 ? first : ((() => 'not json') as unknown as string);
    },
  }) as Message;
  return { message, reads: () => reads };
}

export const inputOnceSpec = defineSpec('input', 'Store', (t) => {
  t.test('a getter that throws is invalid_argument, and nothing is written', async (ctx) => {
    const store = ctx.store;
    const id = ctx.id();
    await expectCode(store.create(throwing({ id, title: 't' }, 'title')), 'invalid_argument');
    await expectCode(store.load(id), 'not_found');
    await expectCode(
      store.create({ id, messages: [throwing(msg('user', 'x'), 'content')] }),
      'invalid_argument',
    );
    await expectCode(store.load(id), 'not_found');
    const s = await createSession(ctx, { messages: turns(1) });
    await expectCode(store.save(throwing({ ...s }, 'metadata')), 'invalid_argument');
    await expectCode(store.list(throwing({ folder: s.folder }, 'query')), 'invalid_argument');
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    await expectCode(store.create(revoked.proxy as never), 'invalid_argument');
    expect(await store.load(s.id)).toEqual(s);
  });

  t.testFor(
    'Committer',
    'a commit stores exactly the value it validated, read once',
    async (ctx) => {
      const store = ctx.store as C;
      const s = await createSession(ctx, { messages: turns(1) });
      const once = shifty('first read');
      await store.commit(s.id, { append: [once.message] });
      expect(once.reads()).toBe(1);
      expect((await store.load(s.id)).messages.at(-1)).toEqual(msg('user', 'first read'));
      await expectCode(
        store.commit(s.id, { append: [throwing(msg('user', 'x'), 'role')] }),
        'invalid_argument',
      );
      await expectCode(
        store.commit(s.id, throwing({ append: [msg('user', 'y')] }, 'patch')),
        'invalid_argument',
      );
      expect((await store.load(s.id)).messages).toHaveLength(3);
    },
    { requires: ['Committer'] },
  );

  t.test('create and save store exactly the values they validated, read once', async (ctx) => {
    const store = ctx.store;
    const created = shifty('created');
    const s = await store.create({
      id: ctx.id(),
      folder: ctx.folder(),
      messages: [created.message],
    });
    expect(created.reads()).toBe(1);
    expect(s.messages).toEqual([msg('user', 'created')]);
    const saved = shifty('saved');
    await store.save({ ...s, messages: [saved.message] });
    expect(saved.reads()).toBe(1);
    expect((await store.load(s.id)).messages).toEqual([msg('user', 'saved')]);
  });
});
