// What a chat store is made from and the arguments it refuses before any I/O: stores
// without the capabilities, bad options, ids, events, cursors; owned and borrowed stores.
import { isSessionKitError } from '@sessionkit/core';
import { MemoryStore } from '@sessionkit/memory';
import { describe, expect, it } from 'vitest';
import { type ChatStoreOptions, createChatStore, openChatStore } from '../src/index.js';

/** The code of the SessionKitError `run` throws or rejects with. */
async function codeOf(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (e) {
    if (isSessionKitError(e)) return e.code;
    throw e;
  }
  throw new Error('expected a SessionKitError');
}

/** `store` without the named methods, as a store lacking that capability looks. */
function without(store: MemoryStore<unknown>, ...names: string[]): unknown {
  return new Proxy(store, {
    get: (target, key) =>
      names.includes(String(key)) ? undefined : Reflect.get(target, key, target),
  });
}

describe('createChatStore', () => {
  it('needs a store with commit, loadMessages and runtime status', async () => {
    const store = new MemoryStore<unknown>();
    for (const bad of [
      undefined,
      {},
      without(store, 'commit'),
      without(store, 'loadMessages'),
      without(store, 'saveRuntimeStatus'),
    ]) {
      expect(await codeOf(() => createChatStore(bad as MemoryStore<unknown>))).toBe(
        'invalid_argument',
      );
    }
    for (const options of [
      null,
      'chat/',
      { folderPrefix: 7 },
      { folderPrefix: 'x'.repeat(1025) },
    ]) {
      expect(await codeOf(() => createChatStore(store, options as ChatStoreOptions))).toBe(
        'invalid_argument',
      );
    }
  });

  it('refuses bad arguments before any I/O', async () => {
    const store = new MemoryStore<unknown>();
    const chats = createChatStore(store);
    const chatId = await chats.createChat();
    const before = await store.load(chatId);
    expect(await codeOf(() => chats.onEnd('../etc'))).toBe('invalid_argument');
    expect(await codeOf(() => chats.onFinish(''))).toBe('invalid_argument');
    const onEnd = chats.onEnd(chatId);
    expect(await codeOf(() => onEnd(null as never))).toBe('invalid_argument');
    expect(await codeOf(() => onEnd({ responseMessage: { id: 'x' } } as never))).toBe(
      'invalid_argument',
    );
    expect(await codeOf(() => chats.setActiveStream(chatId, ''))).toBe('invalid_argument');
    expect(await codeOf(() => chats.setActiveStream(chatId, 7 as never))).toBe('invalid_argument');
    expect(await codeOf(() => chats.listChats({} as never))).toBe('invalid_argument');
    for (const startAfter of [
      { updatedAt: 'yesterday', id: 'a' },
      { updatedAt: new Date(), id: 7 },
    ]) {
      expect(
        await codeOf(() => chats.listChats({ userId: 'u', startAfter: startAfter as never })),
      ).toBe('invalid_argument');
    }
    expect(await codeOf(() => chats.createChat({ userId: 7 as never }))).toBe('invalid_argument');
    expect(await codeOf(() => chats.createChat({ chatId }))).toBe('exists');
    expect(await codeOf(() => chats.loadChat(chatId, { last: -1 }))).toBe('invalid_argument');
    expect(await store.load(chatId)).toEqual(before);
  });

  it('borrows a store it is given and owns one it opens from a URL', async () => {
    const store = new MemoryStore<unknown>();
    await createChatStore(store).close();
    expect(await store.list()).toEqual([]); // still open

    const owned = await openChatStore('memory:');
    const chatId = await owned.createChat({ userId: 'u', chatId: 'chat-1' });
    expect(chatId).toBe('chat-1');
    await owned.close();
    await owned.close();
    expect(await codeOf(() => owned.loadChat(chatId))).toBe('closed');
    expect(await codeOf(() => openChatStore('nope://x'))).toBe('invalid_argument');
  });
});
