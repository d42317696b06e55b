// A commit's path: a store starts from the version it last wrote (no head read), a stale
// start loses its version PUT and reads on, one marker covers a store's writes of a
// session and goes once their index entries are written, and a session deleted by another
// store is never written again from a remembered version.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { isSessionKitError, type Message, newSessionId } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import type { S3Store } from '../src/index.js';
import { storeOn, useTarget } from './harness.js';

const server = useTarget();

const msg = (content: string): Message => ({ role: 'user', content });

/** What `promise` rejects with, `undefined` when it resolves. */
const rejectionOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (e: unknown) => e,
  );

/** The write markers of session `id` in the bucket. */
async function markersOf(store: S3Store, id: string): Promise<number> {
  const out = await server.raw.send(
    new ListObjectsV2Command({
      Bucket: server.target.bucket,
      Prefix: `${store.prefix}pending/${id}/`,
    }),
  );
  return out.KeyCount ?? 0;
}

describe('a commit starts from the version its store last wrote', () => {
  it('reads nothing before its version PUT once the store wrote the session', async () => {
    const store = await storeOn(server.target);
    const s = await store.create({ id: newSessionId(), messages: [msg('a')] });
    await store.commit(s.id, { append: [msg('b')] });
    for (let i = 0; i < 5; i++) {
      const gets = store.stats.get;
      await store.commit(s.id, { append: [msg(`c${i}`)] });
      expect(store.stats.get - gets).toBe(0);
    }
    const loaded = await store.load(s.id);
    expect(loaded.messages.map((m) => m.content)).toEqual(['a', 'b', 'c0', 'c1', 'c2', 'c3', 'c4']);
    expect(loaded.revision).toBe(7);
    await store.close();
  });

  it('a stale start loses its version PUT to the other store and lands after it', async () => {
    const a = await storeOn(server.target);
    const b = await storeOn(server.target, a.prefix);
    const s = await a.create({ id: newSessionId() });
    await a.commit(s.id, { append: [msg('a1')] });
    await b.commit(s.id, { append: [msg('b1')] });
    await b.commit(s.id, { append: [msg('b2')] });
    // a remembers revision 2; revisions 3 and 4 are b's.
    const r = await a.commit(s.id, { append: [msg('a2')] });
    expect(r).toMatchObject({ revision: 5, messageCount: 4 });
    const stale = await rejectionOf(a.commit(s.id, { expectedRevision: 4, append: [msg('x')] }));
    expect(isSessionKitError(stale, 'conflict')).toBe(true);
    const loaded = await b.load(s.id);
    expect(loaded.messages.map((m) => m.content)).toEqual(['a1', 'b1', 'b2', 'a2']);
    const listed = (await b.list()).find((x) => x.id === s.id);
    expect(listed).toMatchObject({ messageCount: 4, revision: 5 });
    await a.close();
    await b.close();
  });

  it('a session deleted by another store is not written from a remembered version', async () => {
    const a = await storeOn(server.target);
    const b = await storeOn(server.target, a.prefix);
    const s = await a.create({ id: newSessionId() });
    await a.commit(s.id, { append: [msg('kept')] });
    await b.delete(s.id);
    const after = await rejectionOf(a.commit(s.id, { append: [msg('lost')] }));
    expect(isSessionKitError(after, 'not_found')).toBe(true);
    await expect(b.load(s.id)).rejects.toMatchObject({ code: 'not_found' });
    expect((await b.list()).map((x) => x.id)).not.toContain(s.id);
    // Deleted and created again under the same id while a remembers its old version: a's
    // commit lands in the new session, and nothing of the old one comes back.
    await b.create({ id: s.id, messages: [msg('new')] });
    await a.commit(s.id, { append: [msg('next')] });
    await a.commit(s.id, { append: [msg('more')] });
    await b.delete(s.id);
    await b.create({ id: s.id, messages: [msg('newer')] });
    await a.commit(s.id, { append: [msg('again')] });
    const loaded = await b.load(s.id);
    expect(loaded.messages.map((m) => m.content)).toEqual(['newer', 'again']);
    expect(loaded.revision).toBe(2);
    await a.close();
    await b.close();
  });
});

describe("a store's write marker", () => {
  it('one covers many commits, and it goes on close once their entries are written', async () => {
    const store = await storeOn(server.target);
    const other = await storeOn(server.target, store.prefix);
    const s = await store.create({ id: newSessionId(), title: 'start' });
    for (let i = 0; i < 6; i++) {
      await store.commit(s.id, { append: [msg(`m${i}`)], patch: { title: `t${i}` } });
      // Listed as loaded after every commit, by another store (the marker makes it heal).
      const { messages, ...rest } = await other.load(s.id);
      const listed = (await other.list()).find((x) => x.id === s.id);
      expect(listed).toEqual({ ...rest, messageCount: messages.length });
    }
    expect(await markersOf(store, s.id)).toBe(1);
    await store.close();
    expect(await markersOf(store, s.id)).toBe(0);
    // The index itself holds the last commit: repair finds nothing to fix.
    expect((await other.repair()).indexEntriesFixed).toBe(0);
    await other.close();
  });
});
