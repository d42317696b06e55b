// Constructing a SessionKitSession: what it accepts, and which store it owns.
import { MemoryStore } from '@sessionkit/memory';
import { describe, expect, it } from 'vitest';
import { SessionKitSession } from '../src/index.js';
import { userText } from './support/items.js';

describe('SessionKitSession options', () => {
  it('rejects a store without commit and loadMessages, and bad ids', () => {
    const store = new MemoryStore<unknown>();
    // Every Store method and loadMessages, but no commit.
    const withoutCommit = Object.fromEntries(
      ['create', 'load', 'save', 'delete', 'list', 'close', 'loadMessages'].map((m) => [
        m,
        () => {},
      ]),
    );
    for (const options of [
      undefined,
      { store: withoutCommit },
      { store, sessionId: '../etc' },
      { store, sessionId: '' },
      { store, session: 'title' },
    ]) {
      expect(() => new SessionKitSession(options as never)).toThrow(
        expect.objectContaining({ code: 'invalid_argument' }),
      );
    }
  });

  it('without a sessionId makes a new id per session, stable for the session', async () => {
    const store = new MemoryStore<unknown>();
    const a = new SessionKitSession({ store });
    const b = new SessionKitSession({ store });
    expect(await a.getSessionId()).toBe(await a.getSessionId());
    expect(await a.getSessionId()).not.toBe(await b.getSessionId());
    await a.addItems([userText('hi')]);
    expect((await store.load(await a.getSessionId())).messages).toEqual([userText('hi')]);
  });

  it('close() leaves a borrowed store open', async () => {
    const store = new MemoryStore<unknown>();
    const session = new SessionKitSession({ store, sessionId: 'borrowed' });
    await session.addItems([userText('hi')]);
    await session.close();
    expect(await store.loadMessages('borrowed')).toEqual([userText('hi')]);
  });

  it('fromUrl opens the store and close() closes it', async () => {
    const session = await SessionKitSession.fromUrl('memory:', { sessionId: 'owned' });
    await session.addItems([userText('hi')]);
    expect(await session.getItems()).toEqual([userText('hi')]);
    await session.close();
    await expect(session.getItems()).rejects.toMatchObject({ code: 'closed' });
    await expect(SessionKitSession.fromUrl('nope://x')).rejects.toMatchObject({
      code: 'invalid_argument',
    });
  });
});
